//! [`SqliteStore`]: the [`Store`](super::Store) on an embedded SQLite file
//! (rusqlite), in WAL mode with foreign keys on; the store's logic is
//! [`super::shared`], run over [`Sql`] on a rusqlite transaction.
//!
//! Writes run in `BEGIN IMMEDIATE` transactions: the write lock is taken
//! before anything is read, so a version number read inside the
//! transaction is still the latest when the new row is inserted, and a
//! second writer (another thread or another process on the same file)
//! waits for the lock (up to [`BUSY_TIMEOUT`]) instead of failing.

use super::changes::Log;
use super::migrations;
use super::quota::QuotaCell;
use super::sql::{Cell, Engine, Param, Row, Sql};
use super::{DatabaseSize, Result, StoreError};
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, Transaction, TransactionBehavior};
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long a write waits for another writer's lock before failing.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// A ConfigDB in one SQLite database.
///
/// One connection behind a mutex: methods take `&self` so the store can be
/// shared (`Arc<dyn Store>`); each call holds the lock for one short
/// transaction. Several `SqliteStore`s (or processes) may open the same
/// file; SQLite's own locking orders their writes.
pub(crate) struct SqliteStore {
    conn: Mutex<Connection>,
    quotas: QuotaCell,
}

/// SQLite's "database is busy" or "locked": another connection holds the
/// lock.
fn is_busy(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<rusqlite::Error>()
        .and_then(rusqlite::Error::sqlite_error_code)
        .is_some_and(|c| {
            matches!(
                c,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            )
        })
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        // SQLite opens a file it may not write read-only without a word;
        // every write then fails so, and no retry helps.
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ReadOnly) {
            return StoreError::ReadOnly(e.to_string());
        }
        StoreError::Database(Box::new(e))
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database file and brings its schema
    /// up to date.
    ///
    /// # Errors
    ///
    /// The file cannot be opened, a migration fails, or the schema is
    /// newer than this build knows.
    pub(crate) fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        create_private(path)?;
        Self::from_connection(Connection::open(path)?, migrations::SQLITE)
    }

    /// A private database in memory, for tests and throwaway use.
    ///
    /// # Errors
    ///
    /// As [`SqliteStore::open`].
    pub(crate) fn open_in_memory() -> Result<Self> {
        Self::from_connection(Connection::open_in_memory()?, migrations::SQLITE)
    }

    fn from_connection(mut conn: Connection, migrations: &[&str]) -> Result<Self> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "foreign_keys", true)?;
        // Several servers opening one new file at once: switching it to
        // WAL can answer SQLITE_BUSY at once, without waiting on the busy
        // handler, while another connection switches it or migrates. Such
        // a start is retried, up to the busy timeout, not failed.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match Self::prepare(&mut conn, migrations) {
                Err(StoreError::Database(e))
                    if is_busy(&*e) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                done => break done?,
            }
        }
        Ok(SqliteStore {
            conn: Mutex::new(conn),
            quotas: QuotaCell::default(),
        })
    }

    /// WAL mode and the schema brought up to date.
    fn prepare(conn: &mut Connection, migrations: &[&str]) -> Result<()> {
        // WAL lets readers run while one writer writes; an in-memory
        // database answers "memory" and stays as it is.
        let _mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        migrations::migrate(conn, migrations)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic mid-transaction rolled it back on unwind (Transaction's
        // drop), so the connection behind a poisoned lock is sound.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Engine for SqliteStore {
    fn write<T>(&self, f: impl FnOnce(&dyn Sql, &mut Log) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut log = Log::default();
        let out = f(&Tx(&tx), &mut log)?;
        log.commit(&Tx(&tx))?;
        tx.commit()?;
        Ok(out)
    }

    fn read<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        f(&Tx(&tx))
    }

    fn database_size(&self) -> Result<DatabaseSize> {
        let conn = self.lock();
        let pragma = |name: &str| -> Result<u64> {
            let n: i64 = conn.pragma_query_value(None, name, |r| r.get(0))?;
            Ok(u64::try_from(n).unwrap_or_default())
        };
        let page = pragma("page_size")?;
        Ok(DatabaseSize {
            bytes: pragma("page_count")? * page,
            free_bytes: pragma("freelist_count")? * page,
        })
    }

    fn quotas(&self) -> &QuotaCell {
        &self.quotas
    }

    fn check_writable(&self) -> Result<()> {
        let conn = self.lock();
        if conn.is_readonly(rusqlite::MAIN_DB)? {
            return Err(StoreError::ReadOnly(READ_ONLY_FILE.to_owned()));
        }
        // A write transaction begun and rolled back changes nothing, and
        // meets what a write would (a -wal file it cannot write). Another
        // writer's lock is no refusal (writes wait their turn), so the
        // probe does not wait the whole busy timeout for it.
        conn.busy_timeout(PROBE_TIMEOUT)?;
        let probed = conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK");
        conn.busy_timeout(BUSY_TIMEOUT)?;
        match probed {
            Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) => Ok(()),
            other => Ok(other?),
        }
    }
}

/// Why SQLite opened a database file for reading only.
const READ_ONLY_FILE: &str = "SQLite could open the file for reading only (its permissions or owner, \
     or a read-only file system); make it and its folder writable by the user hierad runs as";

/// How long the write probe waits for another writer's lock.
const PROBE_TIMEOUT: Duration = Duration::from_millis(200);

/// [`Sql`] on a rusqlite transaction (statements cached per connection).
struct Tx<'a>(&'a Transaction<'a>);

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self {
            Param::Int(Some(n)) => ToSqlOutput::Owned(Value::Integer(n)),
            Param::Int(None) | Param::Text(None) => ToSqlOutput::Owned(Value::Null),
            Param::Text(Some(s)) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Param::Bool(b) => ToSqlOutput::Owned(Value::Integer(i64::from(b))),
            Param::Bytes(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

fn cell(value: ValueRef<'_>) -> rusqlite::Result<Cell> {
    Ok(match value {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(n) => Cell::Int(n),
        ValueRef::Text(t) => Cell::Text(
            std::str::from_utf8(t)
                .map_err(|e| rusqlite::Error::Utf8Error(0, e))?
                .to_owned(),
        ),
        ValueRef::Blob(b) => Cell::Bytes(b.to_vec()),
        ValueRef::Real(r) => Cell::Text(r.to_string()),
    })
}

impl Sql for Tx<'_> {
    fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        let mut out = Vec::new();
        self.for_each(sql, params, &mut |row| {
            out.push(row);
            Ok(())
        })?;
        Ok(out)
    }

    fn for_each(
        &self,
        sql: &str,
        params: &[Param<'_>],
        f: &mut dyn FnMut(Row) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self.0.prepare_cached(sql)?;
        let columns = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
        while let Some(row) = rows.next()? {
            let cells = (0..columns)
                .map(|i| cell(row.get_ref(i)?))
                .collect::<rusqlite::Result<_>>()?;
            f(Row(cells))?;
        }
        Ok(())
    }

    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<usize> {
        Ok(self
            .0
            .prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(params))?)
    }
}

/// Creates `path` empty, readable and writable by its owner only, unless
/// something is there. Left to SQLite, the file (and its `-wal` and `-shm`
/// files, which take the database file's mode) got the umask's mode,
/// 0644 most often: every password in the store readable by every local
/// user.
fn create_private(path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::Database(
            format!("cannot create the database file {}: {e}", path.display()).into(),
        )),
    }
}

#[cfg(test)]
pub(super) fn open_with_migrations(path: &Path, migrations: &[&str]) -> Result<SqliteStore> {
    SqliteStore::from_connection(Connection::open(path)?, migrations)
}

/// The database at `path` as SQLite opens one this process may not write
/// (a 0444 file, a read-only mount): read-only, without a word.
#[cfg(test)]
pub(super) fn open_read_only(path: &Path) -> Result<SqliteStore> {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI;
    SqliteStore::from_connection(
        Connection::open_with_flags(path, flags)?,
        migrations::SQLITE,
    )
}

#[cfg(test)]
impl SqliteStore {
    /// The connection itself, for tests that check its settings.
    pub(super) fn raw<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        f(&self.lock())
    }
}
