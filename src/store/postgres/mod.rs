//! [`PgStore`]: the [`Store`](crate::store::Store) on PostgreSQL, for several
//! hierad replicas on one database. The store's logic is
//! [`super::shared`], the same code SQLite runs, over [`Sql`] on a
//! PostgreSQL transaction ([`sql`]).
//!
//! The client: the `postgres` crate, the blocking facade of
//! `tokio-postgres` (the async client, which the server's LISTEN task uses
//! directly), pooled by `r2d2`. The [`Store`](crate::store::Store) trait is
//! synchronous and always called on blocking threads (`spawn_blocking`, the
//! CLI), so a blocking pool fits it without a runtime of its own.
//!
//! Transactions:
//! - A write runs in READ COMMITTED and first locks the one row of the
//!   `generation` table (`SELECT … FOR UPDATE`): writers then run one at a
//!   time, as under SQLite's `BEGIN IMMEDIATE`, so a version number read
//!   inside the transaction is still the latest at its insert, and every
//!   statement after the lock sees all earlier writes. The write's
//!   generation comes from that row (`value + 1`), not a sequence: a
//!   sequence hands out numbers at call time, so generation 8 could commit
//!   before 7 and a reader at 8 would never see 7; the row lock makes
//!   generations commit in their order.
//! - The write announces its generation with
//!   `pg_notify('hierad_changes', '<generation>')` in the same
//!   transaction; PostgreSQL delivers it at commit, never for a rollback.
//! - A read runs in REPEATABLE READ, READ ONLY: one snapshot for all its
//!   statements (`load_all`, `changes_since`).

pub(super) mod migrations;
mod sql;
mod tls;

use super::changes::Log;
use super::sql::{Engine, Sql};
use super::{DatabaseSize, Result, StoreError};
use postgres::{Client, IsolationLevel, Statement};
use sql::PgTx;
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

/// The channel every committed write is announced on, its payload the
/// generation (decimal).
pub(crate) const CHANNEL: &str = "hierad_changes";

/// How long opening a connection may take, and how long a caller waits
/// for a pooled one, before the store answers a database error.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a caller waits for a pooled connection while PostgreSQL is
/// known to be unreachable: long enough for a connection to a server that
/// came back, short enough that an outage answers 503 at once rather than
/// holding every write for [`CONNECT_TIMEOUT`].
const DOWN_WAIT: Duration = Duration::from_millis(500);

/// Connections kept open at most.
const POOL_SIZE: u32 = 16;

/// Whether `db` names a PostgreSQL database (`postgres://…` or
/// `postgresql://…`, the scheme in any case) rather than a SQLite file.
pub(crate) fn is_url(db: &str) -> bool {
    scheme(db)
        .is_some_and(|s| s.eq_ignore_ascii_case("postgres") || s.eq_ignore_ascii_case("postgresql"))
}

/// The scheme of a `scheme://…` URL (RFC 3986's characters), if `db` is one.
pub(crate) fn scheme(db: &str) -> Option<&str> {
    let (scheme, _) = db.split_once("://")?;
    let mut bytes = scheme.bytes();
    let first = bytes.next()?;
    (first.is_ascii_alphabetic() && bytes.all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)))
        .then_some(scheme)
}

/// `url` as tokio-postgres reads it: the scheme in lower case. Refused if
/// its user or password holds a raw `@`: the parser ends the user part at
/// the first one and takes the rest of the password for the host name,
/// which its errors then print.
fn normalized(url: &str) -> Result<String> {
    let (scheme, rest) = url.split_once("://").expect("is_url checked the scheme");
    let authority_and_path = &rest[..rest.find('?').unwrap_or(rest.len())];
    if authority_and_path.matches('@').count() > 1 {
        return Err(StoreError::Database(
            format!(
                "{}: more than one '@' before the host; write an '@' in the user name or password as %40",
                redact(url)
            )
            .into(),
        ));
    }
    Ok(format!("{}://{rest}", scheme.to_ascii_lowercase()))
}

/// What a LISTEN task needs to learn of every committed write: the
/// database's connection settings and the channel.
#[derive(Clone)]
pub(crate) struct ChangeFeed {
    /// The database (its `Debug` hides the password).
    pub(crate) config: tokio_postgres::Config,
    /// The channel to LISTEN on ([`CHANNEL`]).
    pub(crate) channel: &'static str,
    /// TLS as the URL sets it ([`tls`]); `sslmode=disable` never uses it.
    pub(crate) tls: tokio_postgres_rustls::MakeRustlsConnect,
}

impl std::fmt::Debug for ChangeFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeFeed")
            .field("config", &self.config)
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

/// A ConfigDB in one PostgreSQL database.
pub(crate) struct PgStore {
    pool: r2d2::Pool<Manager>,
    /// The server and database, for messages (never the password).
    server: String,
    /// The connection settings, for LISTEN connections.
    feed: tokio_postgres::Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    health: std::sync::Arc<Health>,
    quotas: crate::store::quota::QuotaCell,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("server", &self.server)
            .finish()
    }
}

/// A pooled connection and the statements prepared on it.
struct Conn {
    client: Client,
    statements: HashMap<String, Statement>,
    /// `BEGIN` failed on it: the pool drops it.
    broken: bool,
}

struct Manager {
    config: postgres::Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    health: std::sync::Arc<Health>,
}

impl r2d2::ManageConnection for Manager {
    type Connection = Conn;
    type Error = postgres::Error;

    fn connect(&self) -> Result<Conn, postgres::Error> {
        let client = self.config.connect(self.tls.clone())?;
        self.health.up();
        Ok(Conn {
            client,
            statements: HashMap::new(),
            broken: false,
        })
    }

    fn is_valid(&self, conn: &mut Conn) -> Result<(), postgres::Error> {
        conn.client.simple_query("").map(drop)
    }

    fn has_broken(&self, conn: &mut Conn) -> bool {
        conn.broken || conn.client.is_closed()
    }
}

/// `host:port/db as user`, from the connection settings: what messages
/// name, without the password.
fn describe(config: &tokio_postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .zip(config.get_ports().iter().chain(std::iter::repeat(&5432)))
        .map(|(host, port)| match host {
            tokio_postgres::config::Host::Tcp(name) => format!("{name}:{port}"),
            tokio_postgres::config::Host::Unix(path) => format!("{}:{port}", path.display()),
        })
        .collect();
    format!(
        "{}/{} as {}",
        if hosts.is_empty() {
            "localhost:5432".to_owned()
        } else {
            hosts.join(",")
        },
        config.get_dbname().unwrap_or("(default database)"),
        config.get_user().unwrap_or("(default user)")
    )
}

/// The URL with its password (in the user part or a `password=`
/// parameter) replaced by `***`, for messages and logs; anything that is
/// not a URL comes back as it is.
pub(crate) fn redact(db: &str) -> String {
    let Some((scheme, rest)) = db.split_once("://") else {
        return db.to_owned();
    };
    let query_at = rest.find('?').unwrap_or(rest.len());
    let (main, query) = rest.split_at(query_at);
    let main = match main.rfind('@') {
        Some(at) => match main[..at].split_once(':') {
            Some((user, _password)) => format!("{user}:***{}", &main[at..]),
            None => main.to_owned(),
        },
        None => main.to_owned(),
    };
    let query: Vec<String> = query
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
            _ => p.to_owned(),
        })
        .collect();
    if query.is_empty() {
        format!("{scheme}://{main}")
    } else {
        format!("{scheme}://{main}?{}", query.join("&"))
    }
}

impl PgStore {
    /// Connects to the database at `url` and brings its schema up to date.
    /// Without a password in the URL, `PGPASSWORD` gives it (as for psql).
    ///
    /// # Errors
    ///
    /// A URL that does not parse, a server that does not answer (the
    /// message names it, never the password), a migration that fails, or
    /// a schema newer than this build knows.
    pub(crate) fn open(url: &str) -> Result<Self> {
        let url = &normalized(url)?;
        let (with_tls, tls) = tls::from_url(url)?;
        // The parse error's text never quotes the URL.
        let mut parsed: tokio_postgres::Config = with_tls.parse().map_err(|e| {
            StoreError::Database(format!("{}: not a PostgreSQL URL: {e}", redact(url)).into())
        })?;
        if parsed.get_password().is_none() {
            if let Some(password) = std::env::var_os("PGPASSWORD") {
                parsed.password(password.as_encoded_bytes());
            }
        }
        if parsed.get_connect_timeout().is_none() {
            parsed.connect_timeout(CONNECT_TIMEOUT);
        }
        parsed.application_name("hierad");
        let server = describe(&parsed);
        let health = std::sync::Arc::new(Health::default());
        let manager = Manager {
            config: postgres::Config::from(parsed.clone()),
            tls: tls.clone(),
            health: std::sync::Arc::clone(&health),
        };
        // The first connection is made here, not waited for from the pool:
        // a server that is down or not trusted fails at once, saying why.
        let mut first = r2d2::ManageConnection::connect(&manager)
            .map_err(|e| unreachable(&server, chain(&e)))?;
        migrations::migrate(&mut first.client, crate::store::migrations::POSTGRES)
            .map_err(|e| context(&server, e))?;
        let pool = r2d2::Pool::builder()
            .max_size(POOL_SIZE)
            .min_idle(Some(1))
            .connection_timeout(CONNECT_TIMEOUT)
            // A connection PostgreSQL closed is dropped when it comes
            // back (`has_broken`); no round trip per checkout.
            .test_on_check_out(false)
            .error_handler(Box::new(RecordError(std::sync::Arc::clone(&health))))
            .build_unchecked(manager);
        Ok(PgStore {
            pool,
            server,
            feed: parsed,
            tls,
            health,
            quotas: crate::store::quota::QuotaCell::default(),
        })
    }

    fn conn(&self) -> Result<r2d2::PooledConnection<Manager>> {
        let wait = if self.health.is_down() {
            DOWN_WAIT
        } else {
            CONNECT_TIMEOUT
        };
        self.pool.get_timeout(wait).map_err(|e| {
            unreachable(
                &self.server,
                self.health.error().unwrap_or_else(|| e.to_string()),
            )
        })
    }

    fn context(&self, e: StoreError) -> StoreError {
        context(&self.server, e)
    }

    /// Runs `f` in one transaction. A pooled connection the server closed
    /// meanwhile (a restart, an idle timeout) fails at `BEGIN`, before
    /// anything is done: it is dropped and the transaction starts on
    /// another, so a database that came back works at the first call.
    fn run<T>(
        &self,
        isolation: IsolationLevel,
        read_only: bool,
        f: impl FnOnce(&PgTx<'_, '_>) -> Result<T>,
    ) -> Result<T> {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let mut conn = self.conn()?;
            let Conn {
                client,
                statements,
                broken,
            } = &mut *conn;
            let mut tx = match client
                .build_transaction()
                .isolation_level(isolation)
                .read_only(read_only)
                .start()
            {
                Ok(tx) => tx,
                // A standby refuses `BEGIN … READ WRITE`: the connection is
                // sound, and another would be refused the same.
                Err(e) if is_read_only(&e) => return Err(self.context(e.into())),
                Err(e) => {
                    *broken = true;
                    // Most likely closed by a restart or an outage; the
                    // next connection made or commit clears it.
                    self.health.failed(chain(&e));
                    if attempts <= POOL_SIZE {
                        continue;
                    }
                    return Err(self.context(e.into()));
                }
            };
            let out = (|| {
                let out = f(&PgTx {
                    tx: RefCell::new(&mut tx),
                    statements: RefCell::new(statements),
                })?;
                tx.commit()?;
                self.health.up();
                Ok(out)
            })();
            return out.map_err(|e| self.context(e));
        }
    }
}

/// No connection to the database at `server`, and why.
fn unreachable(server: &str, why: String) -> StoreError {
    StoreError::Database(format!("cannot reach PostgreSQL at {server}: {why}").into())
}

/// A database error, naming the server.
fn context(server: &str, e: StoreError) -> StoreError {
    match e {
        StoreError::Database(source) => {
            StoreError::Database(format!("PostgreSQL at {server}: {source}").into())
        }
        StoreError::ReadOnly(why) => StoreError::ReadOnly(format!("PostgreSQL at {server}: {why}")),
        other => other,
    }
}

/// An error with its causes ("db error: ERROR: relation … does not
/// exist"): the client's own text names only the kind.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> Self {
        // A read-only session (a standby, `default_transaction_read_only`)
        // refuses every write so: no retry helps.
        if is_read_only(&e) {
            return StoreError::ReadOnly(chain(&e));
        }
        StoreError::Database(chain(&e).into())
    }
}

/// Whether PostgreSQL refused `e` because the session may not write.
fn is_read_only(e: &postgres::Error) -> bool {
    e.code() == Some(&postgres::error::SqlState::READ_ONLY_SQL_TRANSACTION)
}

/// Whether PostgreSQL is known to be unreachable, and why: set when a
/// connection cannot be made (the pool's error handler) or a pooled one
/// was found closed; cleared by a connection made or a transaction
/// committed. r2d2's timeout error hides the cause; this keeps it.
#[derive(Debug, Default)]
struct Health {
    down: std::sync::atomic::AtomicBool,
    error: std::sync::Mutex<Option<String>>,
}

impl Health {
    fn failed(&self, error: String) {
        *self.lock() = Some(error);
        self.down.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    fn up(&self) {
        // Most calls find it up: no lock then.
        if self.down.swap(false, std::sync::atomic::Ordering::Relaxed) {
            *self.lock() = None;
        }
    }

    fn is_down(&self) -> bool {
        self.down.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn error(&self) -> Option<String> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The pool's error handler: records into the store's [`Health`].
#[derive(Debug)]
struct RecordError(std::sync::Arc<Health>);

impl r2d2::HandleError<postgres::Error> for RecordError {
    fn handle_error(&self, error: postgres::Error) {
        self.0.failed(chain(&error));
    }
}

impl Engine for PgStore {
    fn write<T>(&self, f: impl FnOnce(&dyn Sql, &mut Log) -> Result<T>) -> Result<T> {
        self.run(IsolationLevel::ReadCommitted, false, |tx| {
            tx.query_one("SELECT value FROM generation WHERE id = 1 FOR UPDATE", &[])?;
            let mut log = Log::default();
            let out = f(tx, &mut log)?;
            if let Some(generation) = log.commit(tx)? {
                let payload = generation.to_string();
                tx.execute(
                    "SELECT pg_notify(?1, ?2)",
                    super::sql::params![CHANNEL, payload.as_str()],
                )?;
            }
            Ok(out)
        })
    }

    fn read<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T>) -> Result<T> {
        self.run(IsolationLevel::RepeatableRead, true, |tx| f(tx))
    }

    fn check_writable(&self) -> Result<()> {
        // Writes begin `READ WRITE`, which overrides
        // default_transaction_read_only; only a standby refuses them.
        let standby = self.read(|tx| tx.query_one("SELECT pg_is_in_recovery()", &[])?.flag(0))?;
        if standby {
            return Err(self.context(StoreError::ReadOnly(
                "it is a hot standby (in recovery); point --db at the primary".to_owned(),
            )));
        }
        // An empty write transaction: whatever else refuses one.
        self.run(IsolationLevel::ReadCommitted, false, |_| Ok(()))
    }

    fn quotas(&self) -> &crate::store::quota::QuotaCell {
        &self.quotas
    }

    fn change_feed(&self) -> Option<ChangeFeed> {
        Some(ChangeFeed {
            config: self.feed.clone(),
            tls: self.tls.clone(),
            channel: CHANNEL,
        })
    }

    fn database_size(&self) -> Result<DatabaseSize> {
        self.read(|tx| {
            let bytes = tx
                .query_one("SELECT pg_database_size(current_database())", &[])?
                .int(0)?;
            Ok(DatabaseSize {
                bytes: u64::try_from(bytes).unwrap_or_default(),
                free_bytes: 0,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("postgres://hierad:s3cret@db.example:5432/hierad?sslmode=disable"),
            "postgres://hierad:***@db.example:5432/hierad?sslmode=disable"
        );
        assert_eq!(
            redact("postgresql://u:p@ss:w@h/db"),
            "postgresql://u:***@h/db"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact("postgres://u:pa/ss@h/db?password=x&sslmode=require"),
            "postgres://u:***@h/db?password=***&sslmode=require"
        );
        assert_eq!(redact("/var/lib/hierad.db"), "/var/lib/hierad.db");
    }
}
