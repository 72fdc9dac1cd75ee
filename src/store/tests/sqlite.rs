//! What only the SQLite engine has (its file, pragmas and migrations by
//! `user_version`), and reopening and concurrent writers on both engines.

use super::*;
use crate::hiera::Value;
use crate::rhash;
use crate::store::sqlite::open_with_migrations;
use std::sync::Arc;

/// A new database file, and the `-wal` and `-shm` files SQLite makes
/// beside it, are readable by their owner only, whatever the umask: the
/// store holds every password of a cluster. (Made by SQLite they were
/// 0644 under the usual umask.)
#[test]
fn a_new_database_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("new.db");
    let s = crate::store::open(&file).unwrap();
    seed(s.as_ref());
    s.put(
        &at(1, "nodes=n1", "astute", DocKind::Values),
        &rhash! {"v" => 1},
    )
    .unwrap();
    for name in ["new.db", "new.db-wal", "new.db-shm"] {
        let mode = std::fs::metadata(dir.path().join(name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{name}: {mode:o}");
    }
    // An existing file keeps its mode (the operator chose it).
    let shared = dir.path().join("shared.db");
    std::fs::write(&shared, b"").unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o640)).unwrap();
    drop(crate::store::open(&shared).unwrap());
    let mode = std::fs::metadata(&shared).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
}

/// A database SQLite can open for reading only is told apart from one
/// that fails for a while: `check_writable` (which serve and the commands
/// that write ask at start) and every write say ReadOnly, which the server
/// answers without `Retry-After`; reads go on. (A read-only file was found
/// only by the first write, a database error answered 503 + Retry-After.)
#[test]
fn a_database_opened_read_only_says_so_and_reads() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ro.db");
    let writable = crate::store::open(&file).unwrap();
    seed(writable.as_ref());
    let doc = at(1, "nodes=n1", "astute", DocKind::Values);
    writable.put(&doc, &rhash! {"v" => 1}).unwrap();
    writable.check_writable().unwrap();
    drop(writable);

    let s = crate::store::sqlite::open_read_only(&file).unwrap();
    let e = s.check_writable().unwrap_err();
    assert!(
        matches!(&e, StoreError::ReadOnly(why) if why.contains("for reading only")),
        "{e:?}"
    );
    let e = s.put(&doc, &rhash! {"v" => 2}).unwrap_err();
    assert!(matches!(e, StoreError::ReadOnly(_)), "{e:?}");
    assert_eq!(s.get(&doc, None).unwrap().unwrap().1, rhash! {"v" => 1});
}

/// A `--db` that is neither a SQLite file nor a postgres:// URL is
/// refused, and no message repeats its password. (A libpq key=value
/// string, or `POSTGRES://`, was taken for a file name: created, and
/// logged with the password; a raw `@` in a URL's password put the rest
/// of it in the "cannot reach" message.)
#[test]
fn a_db_that_is_no_file_is_refused_without_its_password() {
    let refusal = |db: &str| {
        let path = std::path::Path::new(db);
        let e = crate::store::open(path).err().expect("refused").to_string();
        assert!(!e.contains("Pw-Sec"), "{e}");
        assert!(!crate::store::describe(path).contains("Pw-Sec"));
        assert!(!path.exists(), "no file made");
        e
    };
    let e = refusal("host=127.0.0.1 user=u password=Pw-Secret dbname=d");
    assert!(e.contains("libpq key=value"), "{e}");
    let e = refusal("mysql://u:Pw-Secret@h/d");
    assert!(e.contains("a mysql:// URL"), "{e}");
    let e = refusal("postgres://u:Pw-Sec@ret@127.0.0.1:1/d");
    assert!(e.contains("write an '@'"), "{e}");
    // The scheme in any case is PostgreSQL's (here: nobody listening).
    let e = refusal("POSTGRES://u:Pw-Secret@127.0.0.1:1/d?connect_timeout=1");
    assert!(e.contains("cannot reach PostgreSQL at 127.0.0.1:1"), "{e}");
}

/// Databases written before packing existed (schema 1) keep working:
/// their plain rows read as they did, and new writes pack from then on.
#[test]
fn a_database_of_the_first_schema_opens_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db.sqlite");
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    let docs: Vec<Hash> = (0..4).map(|i| rhash! {"v" => i}).collect();
    {
        let old = open_with_migrations(&file, &super::schema7::SQLITE[..1]).unwrap();
        // Rows as the first schema's hierad wrote them: plain text.
        old.raw(|c| {
            c.execute_batch(
                "INSERT INTO components VALUES (1, 'fuel');
                 INSERT INTO resource_definitions VALUES (1, 1, 'astute');
                 INSERT INTO environments VALUES (1);
                 INSERT INTO environment_components VALUES (1, 1, 0);
                 INSERT INTO hierarchy_levels VALUES (1, 0, 'nodes');",
            )
            .unwrap();
        });
        for (n, d) in docs.iter().enumerate() {
            old.raw(|c| {
                c.execute(
                    "INSERT INTO documents VALUES (1, 'nodes', 'n1', 'astute', 'values', ?1, 1700000000, 0, 9, ?2)",
                    rusqlite::params![n as i64 + 1, crate::wire::to_string(&Value::Hash(d.clone()))],
                )
                .unwrap();
            });
        }
        old.raw(|c| {
            c.execute(
                "INSERT INTO heads VALUES (1, 'nodes', 'n1', 'astute', 'values', 4)",
                [],
            )
            .unwrap();
        });
    }
    let s = SqliteStore::open(&file).unwrap();
    for (n, d) in docs.iter().enumerate() {
        assert_eq!(&s.get(&a, Some(n as u64 + 1)).unwrap().unwrap().1, d);
    }
    assert_eq!(s.load_all().unwrap().documents.len(), 1);
    // Migration 7 counted the environment's total (the head's size).
    let total = |s: &SqliteStore| {
        s.query_sql("SELECT live_bytes FROM environments").unwrap()[0]
            .int(0)
            .unwrap()
    };
    assert_eq!(total(&s), 9);
    // Versions written before authors were recorded have none.
    let old = s.history(&a).unwrap();
    assert!(old.len() == 4 && old.iter().all(|v| v.author.is_none()));
    let v5 = s.put(&a, &rhash! {"v" => 9}).unwrap();
    assert_eq!((v5.number, total(&s)), (5, v5.size as i64));
    for (n, d) in docs.iter().enumerate() {
        assert_eq!(&s.get(&a, Some(n as u64 + 1)).unwrap().unwrap().1, d);
    }
    assert_eq!(s.retention(1).unwrap(), Retention::default());
    s.delete_environment(1).unwrap();
    s.restore_environment(1).unwrap();
    assert_eq!(s.get(&a, None).unwrap().unwrap().1, rhash! {"v" => 9});
}

#[test]
fn migrations_run_once_and_are_tracked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db.sqlite");
    let user_version = || -> i64 {
        let conn = rusqlite::Connection::open(&file).unwrap();
        conn.pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap()
    };
    drop(SqliteStore::open(&file).unwrap());
    assert_eq!(user_version(), migrations::SQLITE.len() as i64);
    // Opening again runs nothing (CREATE TABLE would fail if it did).
    drop(SqliteStore::open(&file).unwrap());
    assert_eq!(user_version(), migrations::SQLITE.len() as i64);

    // A later release appends a migration: only it runs, once.
    let counting = "CREATE TABLE IF NOT EXISTS runs (n INTEGER); INSERT INTO runs VALUES (1);";
    let mut longer = migrations::SQLITE.to_vec();
    longer.push(counting);
    drop(open_with_migrations(&file, &longer).unwrap());
    drop(open_with_migrations(&file, &longer).unwrap());
    let conn = rusqlite::Connection::open(&file).unwrap();
    let runs: i64 = conn
        .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(runs, 1);
    assert_eq!(user_version(), longer.len() as i64);
    // The older build refuses the newer schema rather than misreading it.
    assert!(matches!(
        SqliteStore::open(&file),
        Err(StoreError::SchemaTooNew { found, known })
            if found == longer.len() as i64 && known == migrations::SQLITE.len()
    ));
    // A failing migration rolls back with its version bump.
    let other = dir.path().join("other.sqlite");
    let broken = [migrations::SQLITE[0], "CREATE TABLE t (a); NOT SQL;"];
    assert!(matches!(
        open_with_migrations(&other, &broken),
        Err(StoreError::Database(_))
    ));
    let conn = rusqlite::Connection::open(&other).unwrap();
    let v: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, 0);
}

#[test]
fn pragmas_are_set() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db.sqlite");
    let s = SqliteStore::open(&file).unwrap();
    seed(&s);
    drop(s);
    let conn = rusqlite::Connection::open(&file).unwrap();
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal", "WAL is persistent in the file");
    // Foreign keys are per connection: a store's connection has them on,
    // so a dangling environment_components row is refused.
    let s = SqliteStore::open(&file).unwrap();
    let err =
        s.raw(|conn| conn.execute("INSERT INTO environment_components VALUES (1, 999, 5)", []));
    assert!(err.is_err(), "foreign keys enforced");
}

fn reopening_keeps_data_and_versions() {
    let db = Db::new();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    {
        let s = db.open();
        seed(s.as_ref());
        s.put(&a, &rhash! {"v" => 1}).unwrap();
        s.put(&a, &rhash! {"v" => 2}).unwrap();
        s.delete(&a).unwrap();
    }
    let s = db.open();
    assert_eq!(
        s.environment(1).unwrap().hierarchy_levels,
        names(&["role", "nodes"])
    );
    let history = s.history(&a).unwrap();
    assert_eq!(
        history
            .iter()
            .map(|v| (v.number, v.deleted))
            .collect::<Vec<_>>(),
        [(1, false), (2, false), (3, true)]
    );
    assert_eq!(s.get(&a, Some(2)).unwrap().unwrap().1, rhash! {"v" => 2});
    assert_eq!(s.put(&a, &rhash! {"v" => 4}).unwrap().number, 4);
}

fn concurrent_writers_lose_nothing() {
    const WRITES: i64 = 200;
    let db = Db::new();
    seed(db.open().as_ref());
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    // Two connections on one file (as two processes would be), and two
    // threads sharing one store.
    // Held as the server will hold it.
    let shared: Arc<dyn Store> = Arc::from(db.open());
    let (db, a) = (&db, &a);
    std::thread::scope(|scope| {
        for writer in 0..2_i64 {
            scope.spawn(move || {
                let own = db.open();
                for i in 0..WRITES {
                    own.put(a, &rhash! {"writer" => writer, "i" => i}).unwrap();
                }
            });
            let shared = Arc::clone(&shared);
            scope.spawn(move || {
                for i in 0..WRITES {
                    shared
                        .put(a, &rhash! {"writer" => writer + 10, "i" => i})
                        .unwrap();
                }
            });
        }
    });
    let history = shared.history(a).unwrap();
    let total = 4 * WRITES as u64;
    assert_eq!(
        history.iter().map(|v| v.number).collect::<Vec<_>>(),
        (1..=total).collect::<Vec<_>>()
    );
    // Every write is there, each once.
    let mut seen = std::collections::HashSet::new();
    for n in 1..=total {
        let (_, doc) = shared.get(a, Some(n)).unwrap().unwrap();
        assert!(seen.insert(crate::wire::to_string(&Value::Hash(doc))));
    }
    assert_eq!(seen.len() as u64, total);
}

both![
    reopening_keeps_data_and_versions,
    concurrent_writers_lose_nothing,
];
