//! What only the PostgreSQL engine has: its migrations table, NOTIFY at
//! commit, generations visible in order under concurrent writers, and
//! the errors of an unreachable server.

use super::*;
use crate::rhash;
use ::postgres::fallible_iterator::FallibleIterator as _;
use std::time::Duration;

fn pg_store() -> (String, PgStore) {
    let url = pg::fresh_database();
    let store = PgStore::open(&url).unwrap();
    (url, store)
}

#[test]
fn migrations_run_once_and_a_newer_schema_is_refused() {
    let (url, store) = pg_store();
    let version = |store: &PgStore| {
        store
            .query_sql("SELECT version FROM schema_version")
            .unwrap()[0]
            .int(0)
            .unwrap()
    };
    let known = crate::store::migrations::POSTGRES.len();
    assert_eq!(version(&store), known as i64);
    seed(&store);
    // Opening again runs nothing (CREATE TABLE would fail if it did).
    let again = PgStore::open(&url).unwrap();
    assert_eq!(version(&again), known as i64);
    assert_eq!(again.environments().unwrap().len(), 1);
    again
        .execute_sql("UPDATE schema_version SET version = version + 1", &[])
        .unwrap();
    match PgStore::open(&url) {
        Err(StoreError::SchemaTooNew { found, known: k }) => {
            assert_eq!((found, k), (known as i64 + 1, known));
        }
        other => panic!("expected SchemaTooNew, got {other:?}"),
    }
}

/// A database whose sessions default to read-only (a role or database
/// with default_transaction_read_only, as a reporting replica's may be)
/// opens: a schema up to date is checked without a write. (Opening ran a
/// CREATE TABLE IF NOT EXISTS in a plain transaction, refused so.) Its
/// writes, `BEGIN READ WRITE`, go on; `check_writable` says so.
#[test]
fn a_database_read_only_by_default_opens() {
    let (url, store) = pg_store();
    seed(&store);
    let doc = at(1, "nodes=n1", "astute", DocKind::Values);
    store.put(&doc, &rhash! {"v" => 1}).unwrap();
    drop(store);
    let name = url.rsplit('/').next().unwrap();
    pg::server().admin(&format!(
        "ALTER DATABASE {name} SET default_transaction_read_only = on"
    ));
    let store = PgStore::open(&url).unwrap();
    assert_eq!(store.get(&doc, None).unwrap().unwrap().1, rhash! {"v" => 1});
    store.check_writable().unwrap();
    store.put(&doc, &rhash! {"v" => 2}).unwrap();
}

/// Replicas starting together migrate one database once.
#[test]
fn replicas_opening_together_migrate_once() {
    let url = pg::fresh_database();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| PgStore::open(&url).unwrap());
        }
    });
    let store = PgStore::open(&url).unwrap();
    assert_eq!(store.generation().unwrap(), 0);
}

#[test]
fn every_commit_is_announced_with_its_generation() {
    let (_url, store) = pg_store();
    seed(&store);
    let feed = store
        .change_feed()
        .expect("PostgreSQL announces its writes");
    assert_eq!(feed.channel, "hierad_changes");
    let mut listener = ::postgres::Config::from(feed.config)
        .connect(::postgres::NoTls)
        .unwrap();
    listener.batch_execute("LISTEN hierad_changes").unwrap();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    // A refused write announces nothing; a register write is announced
    // like a document write (servers hold registers in their snapshots).
    assert!(
        store
            .put(&at(1, "", "nope", DocKind::Values), &rhash! {})
            .is_err()
    );
    store
        .set_register(1, "nodes", Some(&names(&["n1"])))
        .unwrap();
    let mut expected = vec![store.generation().unwrap().to_string()];
    for v in 0..3_i64 {
        store.put(&a, &rhash! {"v" => v}).unwrap();
        expected.push(store.generation().unwrap().to_string());
    }
    let mut heard = Vec::new();
    let mut notifications = listener.notifications();
    let mut iter = notifications.timeout_iter(Duration::from_secs(10));
    while heard.len() < expected.len() {
        let Some(n) = iter.next().unwrap() else {
            panic!("heard {heard:?} of {expected:?} within 10 s");
        };
        assert_eq!(n.channel(), "hierad_changes");
        heard.push(n.payload().to_owned());
    }
    assert_eq!(heard, expected);
}

/// Writers on four connections; a reader that has seen generation g has
/// seen every generation up to g (they commit in order), and none is lost.
#[test]
fn generations_become_visible_in_order() {
    const WRITES: i64 = 50;
    let url = pg::fresh_database();
    seed(&PgStore::open(&url).unwrap());
    let done = std::sync::atomic::AtomicBool::new(false);
    let url = &url;
    let done = &done;
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..4_i64)
            .map(|w| {
                scope.spawn(move || {
                    let own = PgStore::open(url).unwrap();
                    let a = at(1, &format!("nodes=n{w}"), "astute", DocKind::Values);
                    for i in 0..WRITES {
                        own.put(&a, &rhash! {"i" => i}).unwrap();
                    }
                })
            })
            .collect();
        let reader = scope.spawn(move || {
            let own = PgStore::open(url).unwrap();
            let mut checks = 0;
            while !done.load(std::sync::atomic::Ordering::Acquire) && checks < 10_000 {
                let rows = own
                    .query_sql(
                        "SELECT (SELECT value FROM generation),
                                (SELECT count(DISTINCT generation) FROM changes)",
                    )
                    .unwrap();
                let (generation, logged) = (rows[0].int(0).unwrap(), rows[0].int(1).unwrap());
                // seed took 2 generations, all logged.
                assert_eq!(
                    logged, generation,
                    "a generation at or below {generation} is missing"
                );
                checks += 1;
            }
            checks
        });
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        assert!(reader.join().unwrap() > 0);
    });
    let store = PgStore::open(url).unwrap();
    assert_eq!(store.generation().unwrap(), 2 + 4 * WRITES as u64);
}

#[test]
fn an_unreachable_server_is_named_without_the_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://hierad:s3cret-pw@127.0.0.1:{port}/hierad");
    let err = PgStore::open(&url).unwrap_err();
    let text = format!("{err} {err:?}");
    assert!(matches!(err, StoreError::Database(_)), "{text}");
    assert!(text.contains(&format!("127.0.0.1:{port}/hierad")), "{text}");
    assert!(!text.contains("s3cret-pw"), "{text}");
    let err = PgStore::open("postgres://hierad:s3cret-pw@[nope/x").unwrap_err();
    assert!(!err.to_string().contains("s3cret-pw"), "{err}");
}

#[test]
fn open_picks_the_engine_from_db() {
    let url = pg::fresh_database();
    let store = crate::store::open(std::path::Path::new(&url)).unwrap();
    assert!(store.change_feed().is_some());
    let dir = tempfile::tempdir().unwrap();
    let store = crate::store::open(&dir.path().join("x.db")).unwrap();
    assert!(store.change_feed().is_none());
    assert_eq!(
        crate::store::describe(std::path::Path::new("postgresql://u:pw@h/db")),
        "postgresql://u:***@h/db"
    );
}

/// A database restart: a write during the outage fails with a database
/// error naming the server, and once it is back the store reconnects by
/// itself (its pooled connections were closed by the restart).
#[test]
fn the_store_reconnects_after_a_database_restart() {
    let server = pg::private();
    server.admin("CREATE DATABASE outage");
    let store = PgStore::open(&server.url("outage")).unwrap();
    seed(&store);
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    store.put(&a, &rhash! {"v" => 1}).unwrap();
    server.stop();
    for _ in 0..2 {
        match store.put(&a, &rhash! {"v" => 2}) {
            Err(StoreError::Database(e)) => {
                assert!(
                    e.to_string()
                        .contains(&format!("127.0.0.1:{}", server.port)),
                    "{e}"
                );
            }
            other => panic!("expected a database error, got {other:?}"),
        }
    }
    server.start_again();
    let v = store.put(&a, &rhash! {"v" => 3}).unwrap();
    assert_eq!(v.number, 2, "the writes during the outage wrote nothing");
    assert_eq!(store.get(&a, None).unwrap().unwrap().1, rhash! {"v" => 3});
}
