//! Persistence of the ConfigDB behind a narrow trait, [`Store`]; the only
//! module that knows SQL. [`SqliteStore`] is the embedded engine,
//! [`PgStore`] the one several replicas share; both run the same
//! code ([`shared`]) over a small dialect layer ([`sql`]), and [`open`]
//! picks one from `--db`.
//!
//! Contract of every implementation:
//! - Each operation is atomic: a failed write changes nothing.
//! - Every document write makes a new version, numbered 1, 2, … per
//!   document (environment, slot, resource, kind), the number chosen
//!   inside the write's transaction so concurrent writers lose nothing.
//! - A document lives at its path's slot (see [`crate::configdb::level`]).
//! - Deleting a document writes a deletion marker version, so its history
//!   stays readable and restorable; deleting an environment hides it with
//!   its documents and history until it is restored or purged.
//! - Old versions may be pruned by a [`Retention`] (oldest first, never
//!   the latest); a pruned version reads as one that never existed.
//! - Documents are stored in the wire JSON form ([`crate::wire`]), which
//!   keeps every Ruby type apart.
//! - Every committed write that changes what a snapshot holds (documents,
//!   components, environments, definitions) takes the next global
//!   generation and records what it changed in a change log, in its own
//!   transaction ([`changes`]): generations commit in order, so any process
//!   on the database learns of every write by reading past its generation.
//! - Every write of a document (put, update, import, restore) refuses one
//!   nesting deeper than [`crate::wire::MAX_DEPTH`] with
//!   [`Invalid::TooDeep`] before writing anything, so whatever is stored
//!   reads back.

mod changes;
mod content;
pub(crate) mod dump;
mod migrations;
mod packing;
mod postgres;
mod quota;
mod shared;
mod sql;
mod sqlite;
#[cfg(test)]
mod switch;

pub(crate) use self::postgres::{ChangeFeed, PgStore};
pub(crate) use changes::{Changes, Logged, SCOPE};
pub(crate) use quota::Quotas;
pub(crate) use shared::scopes::scope_from;
pub(crate) use sqlite::SqliteStore;
#[cfg(test)]
pub(crate) use switch::SwitchedStore;

use crate::configdb::unparsed::Content;
use crate::configdb::{
    Component, ComponentRef, ConfigError, Conflict, DocAddress, DocKind, Environment, Invalid,
    LevelPath, NewComponent, NewEnvironment, NotFound, OverQuota, Retention, SnapshotData, Tag,
    Version,
};
use crate::hiera::Hash;

/// What can go wrong in a store.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    /// The request broke a rule of the data model (404/409/400 material).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The database failed (I/O, locked past the busy timeout, …). The
    /// cause is in the message, not a `source`: a chain would repeat it.
    #[error("database error: {0}")]
    Database(Box<dyn std::error::Error + Send + Sync>),
    /// The database accepts no writes from this process (a read-only
    /// file or file system, a read-only PostgreSQL role, a hot standby):
    /// no retry helps until someone changes that.
    #[error("the database accepts no writes: {0}")]
    ReadOnly(String),
    /// A stored document that does not decode: the database was changed
    /// behind hierad's back.
    #[error("stored {what} is corrupt: {reason}")]
    Corrupt { what: String, reason: String },
    /// A read at a generation retention pruned (410 Gone material).
    #[error(transparent)]
    Gone(#[from] crate::configdb::Gone),
    /// The database was written by a newer hierad.
    #[error(
        "the database's schema version is {found}, newer than this hierad knows ({known}); run a newer hierad"
    )]
    SchemaTooNew { found: i64, known: usize },
}

impl StoreError {
    /// The model error inside, if this is one (for choosing a status code).
    pub(crate) fn config(&self) -> Option<&ConfigError> {
        match self {
            StoreError::Config(e) => Some(e),
            _ => None,
        }
    }
}

impl From<NotFound> for StoreError {
    fn from(e: NotFound) -> Self {
        StoreError::Config(e.into())
    }
}

impl From<Conflict> for StoreError {
    fn from(e: Conflict) -> Self {
        StoreError::Config(e.into())
    }
}

impl From<OverQuota> for StoreError {
    fn from(e: OverQuota) -> Self {
        StoreError::Config(e.into())
    }
}

impl From<Invalid> for StoreError {
    fn from(e: Invalid) -> Self {
        StoreError::Config(e.into())
    }
}

pub(crate) type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Opens the store `--db` names: a PostgreSQL URL (`postgres://…` or
/// `postgresql://…`), or else a SQLite file (created if missing, readable
/// by its owner only).
///
/// # Errors
///
/// As [`SqliteStore::open`] or [`PgStore::open`]; a `--db` that is
/// neither (another scheme, a libpq `key=value` string), refused rather
/// than taken for a file name (which the log and the file system would
/// then show, password and all).
pub(crate) fn open(db: &std::path::Path) -> Result<std::sync::Arc<dyn Store>> {
    let text = db.to_str();
    if let Some(url) = text.filter(|t| self::postgres::is_url(t)) {
        return Ok(std::sync::Arc::new(PgStore::open(url)?));
    }
    if let Some(why) = text.and_then(not_a_file) {
        return Err(StoreError::Database(why.into()));
    }
    Ok(std::sync::Arc::new(SqliteStore::open(db)?))
}

/// Opens the store `--db` names as [`open`] does, for a process that
/// writes to it: one that accepts no writes is refused at once
/// ([`Store::check_writable`]), not at every write.
///
/// # Errors
///
/// As [`open`]; ReadOnly: the database accepts no writes.
pub(crate) fn open_writable(db: &std::path::Path) -> Result<std::sync::Arc<dyn Store>> {
    let store = open(db)?;
    store.check_writable()?;
    Ok(store)
}

/// Why `db` cannot be a SQLite file's name: a URL of another scheme, or
/// libpq's `key=value` connection string. The message never quotes it.
fn not_a_file(db: &str) -> Option<String> {
    if let Some(scheme) = self::postgres::scheme(db) {
        return Some(format!(
            "--db names a {scheme}:// URL; hierad keeps its data in a SQLite file (a path) or in PostgreSQL (a postgres:// URL)"
        ));
    }
    let libpq = db.split_whitespace().any(|word| {
        word.split_once('=').is_some_and(|(key, _)| {
            [
                "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "sslmode",
                "service", "options",
            ]
            .contains(&key)
        })
    });
    libpq.then(|| {
        "--db looks like a libpq key=value connection string; give PostgreSQL as a URL, postgres://USER@HOST[:PORT]/DB (the password in the URL or PGPASSWORD)".to_owned()
    })
}

/// Whether `db` names a PostgreSQL database rather than a SQLite file.
pub(crate) fn is_url(db: &std::path::Path) -> bool {
    db.to_str().is_some_and(self::postgres::is_url)
}

/// `db` as messages and logs may show it: a URL's password is `***`; a
/// `--db` that names no file, not at all.
pub(crate) fn describe(db: &std::path::Path) -> String {
    let text = db.display().to_string();
    if !self::postgres::is_url(&text) && not_a_file(&text).is_some() {
        return "(the --db given, not shown: it may hold a password)".to_owned();
    }
    self::postgres::redact(&text)
}

/// One document of an [`ImportBatch`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ImportDoc {
    pub(crate) path: LevelPath,
    pub(crate) resource: String,
    pub(crate) kind: DocKind,
    /// Data, or a data file kept unparsed ([`crate::configdb::unparsed`]).
    pub(crate) content: Content,
}

/// Many documents of one environment, written all or nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ImportBatch {
    pub(crate) env: i64,
    pub(crate) documents: Vec<ImportDoc>,
    /// Who writes: recorded with every version the import makes (see
    /// [`WriteCtx::author`]).
    pub(crate) author: Option<String>,
    /// (path, kind) pairs whose slot must end up holding exactly the
    /// batch's documents of that kind: every other live document there
    /// gets a deletion marker. `hierad import DIR --replace` at
    /// `nodes=node-1` names (`nodes=node-1`, values), so the user's
    /// overrides survive a re-upload.
    pub(crate) replace: Vec<(LevelPath, DocKind)>,
    /// Resources the environment does not define are first defined in
    /// this component (which the environment must use), in the same
    /// transaction; `None` makes them an error.
    pub(crate) define_missing_in: Option<ComponentRef>,
    /// Each level value of the batch's paths is first added to its
    /// level's register (created if missing), in the same transaction;
    /// without it a value a register does not list is refused, as for
    /// every document write.
    pub(crate) register: bool,
}

/// What an import did.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ImportReport {
    /// Documents that got a new version.
    pub(crate) written: Vec<(DocAddress, Version)>,
    /// Documents left alone because their latest version already holds
    /// exactly this content: a re-import adds no noise to the history.
    pub(crate) unchanged: Vec<DocAddress>,
    /// Documents that got a deletion marker (from `replace`).
    pub(crate) deleted: Vec<(DocAddress, Version)>,
    /// Resource names newly defined (from `define_missing_in`).
    pub(crate) defined: Vec<String>,
}

/// Who writes, and on what condition: what every document write takes
/// besides the document itself ([`Store::write_document`]; an
/// [`ImportBatch`] names its own `author`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct WriteCtx<'a> {
    /// Recorded with every version the write makes ([`Version::author`]):
    /// the principal's name, or `local:<user>` for a process on the
    /// database file ([`crate::ops::local_author`]). `None`: unknown.
    pub(crate) author: Option<&'a str>,
    /// The latest version number the document must have (0: never
    /// written; a deletion marker counts): HTTP `If-Match`.
    pub(crate) expected: Option<u64>,
}

impl<'a> WriteCtx<'a> {
    /// An unconditional write by `author`.
    pub(crate) fn by(author: &'a str) -> Self {
        WriteCtx {
            author: Some(author),
            expected: None,
        }
    }
}

/// One write of one document ([`Store::write_document`]).
pub(crate) enum DocWrite<'a> {
    /// As [`Store::put`].
    Put(&'a Hash),
    /// As [`Store::update`].
    Update(&'a mut dyn FnMut(&mut Hash) -> Result<(), ConfigError>),
    /// As [`Store::restore`] of this version.
    Restore(u64),
    /// As [`Store::delete`].
    Delete,
}

/// What [`Store::rewrite_latest`] does to each document: its new content
/// (`None`: unchanged), or why the whole rewrite is refused (no content
/// of the document in it: the error is shown to the user).
pub(crate) type Rewrite<'a> =
    &'a mut dyn FnMut(&DocAddress, &Hash) -> std::result::Result<Option<Hash>, String>;

/// What one [`Store::prune`] call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PruneReport {
    /// Versions removed.
    pub(crate) pruned: usize,
    /// Whether the budget ran out before everything due was pruned.
    pub(crate) more: bool,
}

/// A stored version that cannot be read ([`Store::check_versions`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnreadableVersion {
    pub(crate) at: DocAddress,
    pub(crate) version: u64,
    /// Whether it is the document's latest version (what a lookup reads).
    pub(crate) latest: bool,
    /// Why, in words that carry nothing of the content.
    pub(crate) reason: String,
}

/// What [`Store::check_versions`] read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct VersionsChecked {
    pub(crate) versions: u64,
    pub(crate) documents: u64,
}

/// How large the database is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DatabaseSize {
    /// The database file's pages, in bytes (the write-ahead log aside).
    pub(crate) bytes: u64,
    /// Of which free pages, reused by later writes.
    pub(crate) free_bytes: u64,
}

/// The ConfigDB's persistence. Every method is one transaction.
///
/// # Errors
///
/// Every method returns [`StoreError::Config`] for what the caller got
/// wrong (each method says which) and [`StoreError::Database`] when the
/// database itself fails.
pub(crate) trait Store: Send + Sync {
    /// Creates a component with its resource definitions. Conflict: the
    /// name or the explicit id is taken. Invalid: a bad or repeated name.
    fn create_component(&self, new: &NewComponent) -> Result<Component>;

    /// NotFound: no such component.
    fn component(&self, which: &ComponentRef) -> Result<Component>;

    /// All components, by id (the snapshot has them; the store's tests read them).
    #[cfg(test)]
    fn components(&self) -> Result<Vec<Component>>;

    /// Deletes a component and its definitions. Conflict: an environment
    /// still uses it.
    fn delete_component(&self, which: &ComponentRef) -> Result<()>;

    /// Adds resource definitions to a component. Conflict: the component
    /// already defines one, or an environment using it gets it from
    /// another component too. No route or command adds definitions yet.
    #[cfg(test)]
    fn add_resource_definitions(&self, which: &ComponentRef, names: &[String])
    -> Result<Component>;

    /// Sets the content of a resource definition (an empty object: none);
    /// its `"schema"` then checks every later write of the resource in every
    /// environment using the component (documents already stored are not
    /// checked). NotFound: the component, or a resource it does not define.
    /// Invalid: a content that is not usable ([`Invalid::BadContent`]).
    fn set_resource_content(
        &self,
        which: &ComponentRef,
        resource: &str,
        content: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Component>;

    /// Creates an environment. NotFound: a component. Conflict: the id is
    /// taken, a component is listed twice, or two components define the
    /// same resource. Invalid: a bad or repeated level name.
    fn create_environment(&self, new: &NewEnvironment) -> Result<Environment>;

    /// NotFound: no such environment.
    fn environment(&self, id: i64) -> Result<Environment>;

    /// All environments, by id.
    fn environments(&self) -> Result<Vec<Environment>>;

    /// Deletes an environment, restorably: it leaves every list and
    /// lookup, and keeps its documents and history until purged.
    /// NotFound: no such live environment.
    fn delete_environment(&self, id: i64) -> Result<()>;

    /// Brings a deleted environment back with its documents and history.
    /// NotFound: no such environment. Conflict: it is not deleted.
    fn restore_environment(&self, id: i64) -> Result<Environment>;

    /// Removes an environment (live or deleted) with all its documents and
    /// their history, for good. NotFound: no such environment.
    fn purge_environment(&self, id: i64) -> Result<()>;

    /// The deleted environments with when they were deleted (Unix
    /// seconds), by id.
    fn deleted_environments(&self) -> Result<Vec<(Environment, i64)>>;

    /// An environment's own retention (unset limits: the server's
    /// default). NotFound: no such live environment.
    fn retention(&self, env: i64) -> Result<Retention>;

    /// Sets an environment's own retention; returns it. NotFound: as
    /// `retention`.
    fn set_retention(&self, env: i64, retention: &Retention) -> Result<Retention>;

    /// Prunes up to about `budget` versions that the retention of their
    /// environment (over `default`) no longer keeps, as of `now` (Unix
    /// seconds), in short transactions; `more` says whether any are left.
    fn prune(&self, default: &Retention, now: i64, budget: usize) -> Result<PruneReport>;

    /// The size of the database.
    fn database_size(&self) -> Result<DatabaseSize>;

    /// Sets the quotas every later document write checks (a store opens
    /// with none): a write that would store a document over
    /// `document_bytes`, or grow its environment's latest documents past
    /// `environment_bytes`, is refused with [`OverQuota`] and writes
    /// nothing (an import: none of its documents). A write that shrinks
    /// or deletes is never refused for the environment's total.
    fn set_quotas(&self, quotas: Quotas);

    /// Checks that this process can write to the database, changing
    /// nothing: what `serve` and the commands that write ask at start, so
    /// a database that accepts no writes stops them with the reason
    /// rather than failing every write later. ReadOnly: it accepts none.
    fn check_writable(&self) -> Result<()>;

    /// Writes one document as `write` says (see the methods below for
    /// each write's errors), recording `ctx.author` with the new version.
    /// Its level path is checked against the registers inside the write's
    /// transaction (as [`Store::check_registered`]), so a register change
    /// cannot slip in between the check and the write.
    /// With `ctx.expected`, first checks inside the write's transaction
    /// that the document's latest version is that number (0: never
    /// written; a deletion marker counts): Stale otherwise, and nothing is
    /// written. The conditional write (HTTP `If-Match`) of writers that
    /// must not overwrite each other.
    fn write_document(
        &self,
        at: &DocAddress,
        write: DocWrite<'_>,
        ctx: WriteCtx<'_>,
    ) -> Result<Version>;

    // The shorthands below write with no author (`WriteCtx::default()`):
    // the tests' writes. Everything else says who writes, through
    // `write_document` or `ImportBatch::author`.

    /// Writes a new version of a document. NotFound: the environment, a
    /// level, or the resource (not defined in the environment). Invalid:
    /// the path does not fit the environment's levels; the document does
    /// not match its resource's schema ([`Invalid::Schema`], as for every
    /// document write: update, restore, import).
    #[cfg(test)]
    fn put(&self, at: &DocAddress, doc: &Hash) -> Result<Version> {
        self.write_document(at, DocWrite::Put(doc), WriteCtx::default())
    }

    /// Edits the latest live content (an empty Hash if there is none) and
    /// writes the result as a new version, all in one transaction, so a
    /// key-level change (`config override --key a.b`) cannot lose a
    /// concurrent writer's change. An error from `edit` writes nothing and
    /// is returned. Errors otherwise as `put`.
    #[cfg(test)]
    fn update(
        &self,
        at: &DocAddress,
        edit: &mut dyn FnMut(&mut Hash) -> Result<(), ConfigError>,
    ) -> Result<Version> {
        self.write_document(at, DocWrite::Update(edit), WriteCtx::default())
    }

    /// A version of a document (`None`: the latest); `Ok(None)` if it was
    /// never written. A deletion marker reads as an empty Hash with
    /// `deleted` set. NotFound: as `put`, or a version that does not exist.
    fn get(&self, at: &DocAddress, version: Option<u64>) -> Result<Option<(Version, Hash)>>;

    /// The data file the latest version of the document keeps unparsed
    /// (`crate::configdb::unparsed`), if it keeps one: what an export writes.
    fn kept_file(&self, at: &DocAddress) -> Result<Option<crate::configdb::unparsed::Unparsed>>;

    /// Every version of a document, oldest first; empty if never written.
    fn history(&self, at: &DocAddress) -> Result<Vec<Version>>;

    /// Writes a new version holding the content of an old one. NotFound:
    /// no such version. Invalid: it is a deletion marker.
    #[cfg(test)]
    fn restore(&self, at: &DocAddress, version: u64) -> Result<Version> {
        self.write_document(at, DocWrite::Restore(version), WriteCtx::default())
    }

    /// Writes a deletion marker. NotFound: the document has no live
    /// version (never written, or already deleted).
    #[cfg(test)]
    fn delete(&self, at: &DocAddress) -> Result<Version> {
        self.write_document(at, DocWrite::Delete, WriteCtx::default())
    }

    /// Writes a batch of documents in one transaction: all or nothing.
    /// Errors: those of `put` for any document; Invalid: a document listed
    /// twice; NotFound/Invalid for `define_missing_in`.
    fn import(&self, batch: &ImportBatch) -> Result<ImportReport>;

    /// Gives the latest live version of every document of environment
    /// `env` (`None`: of every live environment) to `rewrite`, and writes
    /// what it answers (`Some`, when it differs) as a new version by
    /// `author`, all in one transaction: one generation, and no
    /// concurrent write lost or overwritten (`hierad secrets rotate`).
    /// Returns the versions written. NotFound: no such environment.
    /// Invalid ([`Invalid::Rewrite`]): `rewrite` refused a document, and
    /// nothing is written; errors otherwise as `put`.
    fn rewrite_latest(
        &self,
        env: Option<i64>,
        rewrite: Rewrite<'_>,
        author: Option<&str>,
    ) -> Result<Vec<(DocAddress, Version)>>;

    /// Everything a [`Snapshot`](crate::configdb::Snapshot) needs, read in
    /// one consistent transaction: components, environments, and the latest
    /// live version of every document.
    fn load_all(&self) -> Result<SnapshotData>;

    // Reads at an exact generation (`shared/at.rs`): each version records
    // the generation that wrote it; documents read as they were when
    // generation N committed (components, environments, levels and
    // registers as they are now).

    /// What [`Store::load_all`] read when generation `generation` had just
    /// committed, in one consistent transaction; with `env`, only that
    /// environment's documents. Invalid
    /// ([`Invalid::GenerationAhead`]): a generation not written yet.
    /// [`StoreError::Gone`]: one before [`Store::oldest_readable`].
    fn load_at(&self, generation: u64, env: Option<i64>) -> Result<SnapshotData>;

    /// The oldest generation [`Store::load_at`] can read (of `env`'s
    /// documents, or of all): versions before it were pruned by
    /// retention or written before generations were recorded.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "no route reads at a generation or names a tag yet"
        )
    )]
    fn oldest_readable(&self, env: Option<i64>) -> Result<u64>;

    // Tags (`shared/tags.rs`): named generations; retention keeps every
    // version a read at a tag's generation needs. Making or deleting a
    // tag changes no data and takes no generation.

    /// Creates tag `name` at `generation` (`None`: the newest), made by
    /// `author`. Invalid: a bad name ([`crate::configdb::tags`]), a
    /// generation not written yet. Gone: one no longer readable.
    /// Conflict: the name is taken.
    fn create_tag(&self, name: &str, generation: Option<u64>, author: Option<&str>) -> Result<Tag>;

    /// The tag `name`. NotFound: there is none.
    fn tag(&self, name: &str) -> Result<Tag>;

    /// Every tag, oldest generation first.
    fn tags(&self) -> Result<Vec<Tag>>;

    /// Deletes tag `name`; returns it. What it pinned may be pruned by
    /// the next retention run. NotFound: there is none.
    fn delete_tag(&self, name: &str) -> Result<Tag>;

    // Registers: an environment may list the values a level
    // takes (its nodes); documents at other values of that level are then
    // refused (`check_registered`). A level without a register takes any
    // value. Registers go with their environment (kept by a restorable
    // delete, removed by a purge). A write that changes a register takes a
    // generation naming it (`changes::since` reads it anew), and
    // `load_all` reads them all: servers hold them in their snapshots.

    /// The values registered for `level` in `env`, sorted; `None` if the
    /// environment keeps no register of it. NotFound: the environment, or a
    /// level it does not have.
    fn register(&self, env: i64, level: &str) -> Result<Option<Vec<String>>>;

    /// Replaces the register of `level` with `values` (`Some`, possibly
    /// empty: then every value is unknown) or removes it (`None`). Errors
    /// as `register`; Invalid: a value that cannot be a level value.
    fn set_register(&self, env: i64, level: &str, values: Option<&[String]>) -> Result<()>;

    /// Adds `values` to the register of `level`, creating it if there is
    /// none; how many were not there before. Errors as `set_register`.
    fn add_to_register(&self, env: i64, level: &str, values: &[String]) -> Result<usize>;

    /// Removes `values` from the register of `level` (the register stays,
    /// even empty); how many were there. Errors as `register`, and NotFound
    /// when there is no register.
    fn remove_from_register(&self, env: i64, level: &str, values: &[String]) -> Result<usize>;

    /// Whether the register of `level` in `env` lists `value`; `None` if
    /// there is no such register (or no such environment or level: the
    /// caller checks those). What a read through `ops::Local` checks
    /// (the server's reads check the snapshot's copy of the registers;
    /// writes check inside their own transaction).
    fn in_register(&self, env: i64, level: &str, value: &str) -> Result<Option<bool>>;

    /// The live environments whose register of `level` lists `value`.
    fn registered_in(&self, level: &str, value: &str) -> Result<Vec<i64>>;

    /// Checks every level value of `path` against `env`'s registers.
    /// NotFound: [`NotFound::Unregistered`] for a value no environment
    /// registers, [`NotFound::NotAssigned`] for one only others register.
    fn check_registered(&self, env: i64, path: &LevelPath) -> Result<()> {
        crate::configdb::registers::check(
            env,
            path,
            |level, value| self.in_register(env, level, value),
            |level, value| self.registered_in(level, value),
        )
    }

    // Node scopes (`shared/scopes.rs`): the facts and scope variables of
    // a registered node (one that a level register of the environment
    // lists), versioned like documents. A write takes a generation (logged
    // as a `scope` change, so answers cached for the last one are not
    // reused), but scopes are not in snapshots: a lookup naming a node
    // reads its scope here.

    /// Writes a new version of `node`'s scope in `env`. NotFound: the
    /// environment, or a node no register of it lists.
    fn put_scope(
        &self,
        env: i64,
        node: &str,
        scope: &shared::Scope,
        author: Option<&str>,
    ) -> Result<Version>;

    /// A version of `node`'s scope (`None`: the latest). NotFound: as
    /// `put_scope`; no scope (never written, or deleted); no such version.
    fn scope(&self, env: i64, node: &str, version: Option<u64>)
    -> Result<(Version, shared::Scope)>;

    /// Every version of `node`'s scope, oldest first. NotFound: as
    /// `put_scope`.
    fn scope_history(&self, env: i64, node: &str) -> Result<Vec<Version>>;

    /// Writes a deletion marker for `node`'s scope. NotFound: as `scope`.
    fn delete_scope(&self, env: i64, node: &str, author: Option<&str>) -> Result<Version>;

    /// The newest committed generation (0: none since the log began).
    /// Cheap: servers poll it to notice other processes' writes.
    fn generation(&self) -> Result<u64>;

    /// What changed past generation `since` (0: everything), read in one
    /// consistent transaction with the generation it reaches.
    fn changes_since(&self, since: u64) -> Result<Changes>;

    /// The newest generation, and up to `limit` entries of the change log
    /// past `since` (documents with the version written, registers),
    /// oldest first: the change feed (`GET /api/v1/changes`). Entries
    /// before the log's pruning horizon are gone (`changes::KEEP_GENERATIONS`).
    fn logged_since(&self, since: u64, limit: usize) -> Result<(u64, Vec<Logged>)>;

    /// Every row of the ConfigDB, read in one consistent transaction and
    /// given to `out` one by one (`hierad migrate`, [`dump`]): all
    /// components with their definitions, then all environments (deleted
    /// ones too) with their own retention, then all registers, then every
    /// stored version of every document, the versions of each document
    /// together and newest first. An error from `out` stops the dump and
    /// is returned. Corrupt: a version that does not decode.
    fn dump(&self, out: &mut dyn FnMut(dump::Dumped) -> Result<()>) -> Result<()>;

    /// Reads every stored version of every document (history, deletion
    /// markers and deleted environments included) in one consistent
    /// transaction, unpacking and decoding each as a read of it would,
    /// and gives `out` each that cannot be read, in [`Store::dump`]'s
    /// order (`hierad doctor`). Streams: holds one version's text at a
    /// time. Goes on past a bad version: the older ones packed against it
    /// are reported with it. An error from `out` stops the check.
    fn check_versions(
        &self,
        out: &mut dyn FnMut(UnreadableVersion) -> Result<()>,
    ) -> Result<VersionsChecked>;

    /// Writes what another store's [`Store::dump`] yielded, in that order,
    /// in one transaction: every id, version number and date as it was, so
    /// the copy dumps the same (its [`dump::Tally`] checksum is equal).
    /// Takes one generation, a structure change, so servers on this store
    /// reload. An error item stops the replay and is returned, and nothing
    /// is written. Conflict ([`Conflict::NotEmpty`]): the store holds a
    /// component or an environment, unless `replace`, which removes
    /// everything first in the same transaction.
    fn replay(
        &self,
        items: &mut dyn Iterator<Item = Result<dump::Dumped>>,
        replace: bool,
    ) -> Result<()>;

    /// Where committed writes are announced as they commit (PostgreSQL's
    /// NOTIFY on [`ChangeFeed::channel`], the generation as payload);
    /// `None`: nowhere (SQLite: poll [`Store::generation`]).
    fn change_feed(&self) -> Option<ChangeFeed>;

    /// Runs `sql` (with `?1`… parameters) in a write transaction of its
    /// own: the store's tests reach under the trait (a corrupt row, a
    /// pruned log) on either engine.
    #[cfg(test)]
    fn execute_sql(&self, sql: &str, params: &[sql::Param<'_>]) -> Result<usize>;

    /// The rows `sql` answers, for the store's tests.
    #[cfg(test)]
    fn query_sql(&self, sql: &str) -> Result<Vec<sql::Row>>;
}

#[cfg(test)]
mod tests;
