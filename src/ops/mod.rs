//! The ConfigDB operations every caller shares — the CLI's commands, the
//! server's sample loader, the bench's loader — behind one trait,
//! [`ConfigOps`], with two implementations: [`Local`] over a
//! [`Store`](crate::store::Store) and [`Remote`] over a hierad server's REST
//! API. What is built from the operations (importing a tree into an
//! environment created if missing) is written once, here, over the trait.

pub(crate) mod client_auth;
pub(crate) mod diffs;
pub(crate) mod local;
pub(crate) mod preview;
pub(crate) mod remote;
pub(crate) mod rotate;
mod timeouts;
pub(crate) mod writes;

pub(crate) use local::Local;
pub(crate) use remote::{Remote, RemoteError};

pub(crate) use crate::api::ImportSummary;
use crate::configdb::unparsed::Unparsed;
use crate::configdb::{
    ConfigError, DocAddress, DocKind, Environment, HieraVersion, KeyPath, LevelPath, Version,
    check_depth,
};
use crate::hiera::{Hash, Value};
use crate::store::StoreError;
use crate::tree::TreeFile;

/// What can go wrong in an operation. Each message names the problem.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OpsError {
    /// The local store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The server refused, or could not be reached.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// The request breaks a rule of the data model (checked before asking).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The request does not fit what is already there.
    #[error("{0}")]
    Refused(String),
}

impl OpsError {
    /// Whether it is a read of a document kept unparsed, from the store or
    /// from a server (422 `unparsed_document`).
    pub(crate) fn is_unparsed(&self) -> bool {
        match self {
            OpsError::Store(StoreError::Config(ConfigError::Unparsed(_)))
            | OpsError::Config(ConfigError::Unparsed(_)) => true,
            OpsError::Remote(RemoteError::Api { kind, .. }) => kind == "unparsed_document",
            _ => false,
        }
    }
}

pub(crate) type Result<T, E = OpsError> = std::result::Result<T, E>;

/// The documents of one level of a tree import.
pub(crate) type LevelDocs = (LevelPath, Vec<TreeFile>);

/// The ConfigDB operations, wherever the ConfigDB is. Each is atomic
/// (a failed one changes nothing), except that a remote import of several
/// levels is one all-or-nothing request per level, the API's unit.
///
/// # Errors
///
/// Every method fails with [`OpsError`]: what the model or the server
/// refuses (unknown environment, level or resource, …), or a store or
/// transport failure.
pub(crate) trait ConfigOps {
    /// The environment, `None` if it does not exist.
    fn environment(&self, env: i64) -> Result<Option<Environment>>;

    /// Creates the component `name`, defining `resources`, unless a
    /// component of that name exists (it is then left as it is).
    fn ensure_component(&self, name: &str, resources: &[String]) -> Result<()>;

    /// Creates environment `id` as `new` shapes it (its component must
    /// exist).
    fn create_environment(&self, id: i64, new: &NewEnv) -> Result<()>;

    /// Writes each level's documents as `kind`; resources the environment
    /// does not define are defined in its first component. `replace` makes
    /// each level hold exactly its documents of that kind; `register` adds
    /// each level value of the paths to its level's register first.
    fn import(
        &self,
        env: i64,
        levels: &[LevelDocs],
        kind: DocKind,
        replace: bool,
        register: bool,
    ) -> Result<ImportSummary>;

    /// The resource names the environment defines, sorted.
    fn resource_names(&self, env: i64) -> Result<Vec<String>>;

    /// The effective document of `resource` at `path`: the root, then each
    /// level of the path, values then overrides.
    fn effective(&self, env: i64, path: &LevelPath, resource: &str) -> Result<Hash>;

    /// [`ConfigOps::effective`] with its eyaml blocks decrypted, as a
    /// server decrypts them for a principal allowed to (docs/security.md,
    /// "Secrets"; for others, as stored). A local store has no keys.
    fn effective_decrypted(&self, env: i64, path: &LevelPath, resource: &str) -> Result<Hash> {
        let _ = (env, path, resource);
        Err(OpsError::Refused(
            "decrypting needs a server that holds the eyaml private key: give --server URL"
                .to_owned(),
        ))
    }

    /// What is stored at exactly `at` (`{}` if never written), or one of
    /// its versions.
    fn stored(&self, at: &DocAddress, version: Option<u64>) -> Result<Hash>;

    /// The data file the document at `at` keeps unparsed, if it keeps one
    /// (`crate::configdb::unparsed`): what an export writes back.
    fn kept_file(&self, at: &DocAddress) -> Result<Option<Unparsed>>;

    /// The effective document of `resource` at `path` with each
    /// top-level key's origin ([`crate::configdb::provenance`]).
    fn show_lookup(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
    ) -> Result<crate::api::ShowLookup>;

    /// The diff of the document at `at` over `range` ([`diffs`]).
    fn diff(&self, at: &DocAddress, range: &diffs::Range) -> Result<crate::api::DiffAnswer>;

    /// The latest stored scope of `node` in `env`. NotFound: the node, or
    /// no scope.
    fn scope(&self, env: i64, node: &str) -> Result<crate::api::NodeScope>;

    /// Writes a new version of `node`'s scope.
    fn put_scope(&self, env: i64, node: &str, scope: &ResourceContent) -> Result<()>;

    /// Writes a deletion marker for `node`'s scope.
    fn delete_scope(&self, env: i64, node: &str) -> Result<()>;

    /// Every version of `node`'s scope, oldest first.
    fn scope_history(&self, env: i64, node: &str) -> Result<Vec<Version>>;

    /// Writes a new version of a whole document.
    fn put(&self, at: &DocAddress, doc: &Hash) -> Result<()>;

    /// Sets one key of the stored document at `at`, keeping the rest.
    fn set_key(&self, at: &DocAddress, key: &KeyPath, value: &Value) -> Result<()>;

    /// [`ConfigOps::put`] (`key`: `None`) or [`ConfigOps::set_key`], the
    /// Strings at `encrypt` encrypted by the server for its eyaml public
    /// key before they are stored (docs/security.md, "Secrets"). A local
    /// store has no keys.
    fn write_encrypting(
        &self,
        at: &DocAddress,
        key: Option<&KeyPath>,
        value: &Value,
        encrypt: &[KeyPath],
    ) -> Result<()> {
        let _ = (at, key, value, encrypt);
        Err(OpsError::Refused(
            "--encrypt needs --server: the server encrypts with its eyaml public key".to_owned(),
        ))
    }

    /// Every version of the document at `at`, oldest first.
    fn history(&self, at: &DocAddress) -> Result<Vec<Version>>;

    /// Writes a new version holding the content of version `version`.
    fn restore(&self, at: &DocAddress, version: u64) -> Result<Version>;

    /// Writes a deletion marker for the document at `at`.
    fn delete(&self, at: &DocAddress) -> Result<()>;

    /// The register of `level` (its values, sorted); `None` if the
    /// environment keeps none.
    fn register(&self, env: i64, level: &str) -> Result<Option<Vec<String>>>;

    /// Replaces the register of `level` (`Some`) or removes it (`None`).
    fn set_register(&self, env: i64, level: &str, values: Option<&[String]>) -> Result<()>;

    /// Adds values to the register of `level` (created if missing); how
    /// many were new.
    fn add_to_register(&self, env: i64, level: &str, values: &[String]) -> Result<usize>;

    /// Removes values from the register of `level`; how many were there.
    fn remove_from_register(&self, env: i64, level: &str, values: &[String]) -> Result<usize>;

    /// The content of `resource`'s definition in `component` (`{}`: none).
    fn resource_content(&self, component: &str, resource: &str) -> Result<ResourceContent>;

    /// Replaces that content; its `"schema"` checks every later write.
    fn set_resource_content(
        &self,
        component: &str,
        resource: &str,
        content: &ResourceContent,
    ) -> Result<()>;

    /// Every tag, oldest generation first.
    fn tags(&self) -> Result<Vec<crate::configdb::Tag>>;

    /// Makes tag `name` at `generation` (`None`: the newest).
    fn create_tag(&self, name: &str, generation: Option<u64>) -> Result<crate::configdb::Tag>;

    /// Deletes tag `name`.
    fn delete_tag(&self, name: &str) -> Result<()>;

    /// The registered nodes of `env` whose effective data (of `resource`,
    /// or all), or whose answers of `keys`, differ between `since` (a
    /// generation, or a tag's name) and now (`ops::preview`).
    fn nodes_changed(
        &self,
        env: i64,
        since: &str,
        resource: Option<&str>,
        keys: &[String],
    ) -> Result<crate::api::impact::NodesChanged>;

    /// What `write` to `at` would change for each registered node of its
    /// environment (and the written level), nothing written: the
    /// server's `?dry_run=true`, or `ops::preview` over a store.
    fn dry_run(&self, at: &DocAddress, write: Write<'_>) -> Result<crate::api::impact::DryRun>;

    /// What an import of one level (as [`ConfigOps::import`]) would
    /// change, nothing written or defined.
    fn dry_run_import(
        &self,
        env: i64,
        level: &LevelDocs,
        kind: DocKind,
        replace: bool,
        register: bool,
    ) -> Result<crate::api::impact::DryRun>;
}

/// A document write that [`ConfigOps::dry_run`] previews.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Write<'a> {
    /// The whole document.
    Put(&'a Hash),
    /// One key of the stored document.
    Key(&'a KeyPath, &'a Value),
    /// A deletion marker.
    Delete,
    /// A new version holding version N's content.
    Restore(u64),
}

/// A resource definition's content: a JSON object of metadata.
pub(crate) type ResourceContent = serde_json::Map<String, serde_json::Value>;

/// The environment a tree import creates when it is missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NewEnv {
    /// Its hierarchy levels, least to most specific.
    pub(crate) levels: Vec<String>,
    /// The component it uses, created if missing.
    pub(crate) component: String,
    /// Which Hiera answers its lookups.
    pub(crate) hiera: HieraVersion,
}

/// A tree import: levels of documents for one environment.
pub(crate) struct TreeImport<'a> {
    pub(crate) env: i64,
    pub(crate) levels: &'a [LevelDocs],
    pub(crate) kind: DocKind,
    pub(crate) replace: bool,
    /// Adds each level value of the paths to its level's register.
    pub(crate) register: bool,
    /// Created when the environment is missing.
    pub(crate) new_env: NewEnv,
    /// Define every resource of the tree in a component created by this
    /// import, so that the import itself defines nothing (the bench's
    /// loader, as Fuel's components do; a server then derives its snapshot
    /// instead of rebuilding it).
    pub(crate) define_up_front: bool,
}

/// Imports a tree into an environment, creating the environment (and its
/// component) first when it is missing. `check_existing` says whether an
/// existing environment may take the tree. Every level path is checked
/// against the environment's levels before anything is written.
///
/// # Errors
///
/// As `check_existing`, [`LevelPath::check`] and the operations.
pub(crate) fn import_tree(
    ops: &dyn ConfigOps,
    import: &TreeImport<'_>,
    check_existing: &dyn Fn(&Environment) -> Result<()>,
) -> Result<ImportSummary> {
    // The store checks this too; checked first, a missing environment is
    // not created for a tree that cannot be imported.
    for (path, docs) in import.levels {
        for doc in docs {
            let at = DocAddress::new(import.env, path.clone(), &doc.resource, import.kind);
            let Some(content) = doc.content.data() else {
                continue;
            };
            check_depth(&at, content).map_err(|e| {
                OpsError::Refused(format!("cannot import {}: {e}", doc.path.display()))
            })?;
        }
    }
    match ops.environment(import.env)? {
        Some(env) => {
            check_existing(&env)?;
            for (path, _) in import.levels {
                path.check(&env)?;
            }
        }
        None => {
            // The levels must fit before anything is created.
            let planned = Environment {
                id: import.env,
                components: Vec::new(),
                hierarchy_levels: import.new_env.levels.clone(),
                hiera: import.new_env.hiera,
            };
            for (path, _) in import.levels {
                path.check(&planned)?;
            }
            let resources = if import.define_up_front {
                resource_names(import.levels)
            } else {
                Vec::new()
            };
            ops.ensure_component(&import.new_env.component, &resources)?;
            ops.create_environment(import.env, &import.new_env)?;
        }
    }
    ops.import(
        import.env,
        import.levels,
        import.kind,
        import.replace,
        import.register,
    )
}

/// The resource names of the levels' documents, sorted, once each.
fn resource_names(levels: &[LevelDocs]) -> Vec<String> {
    let mut names: Vec<String> = levels
        .iter()
        .flat_map(|(_, files)| files.iter().map(|f| f.resource.clone()))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

#[cfg(test)]
mod tests;
