//! The store's behaviour, on both engines: every operation and
//! error, versions, history, retention, imports, concurrent writers. Each
//! topic's file lists its tests in `both!`, which runs each on SQLite and
//! on PostgreSQL (a throwaway server, tests/common/postgres.rs): the test
//! `store::tests::documents::postgres::every_write_is_a_version` is
//! `documents.rs`'s `every_write_is_a_version` on PostgreSQL. What only
//! one engine has (SQLite's file and pragmas; PostgreSQL's connections
//! and NOTIFY) is tested in `sqlite.rs` and `postgres.rs`.

use super::*;
use crate::configdb::unparsed::Content;
use crate::configdb::{ErrorKind, LevelPath};
use crate::hiera::Value;
use crate::rhash;
use std::cell::Cell;

#[path = "../../../tests/common/postgres.rs"]
pub(super) mod pg;

mod authors;
mod changes;
mod documents;
mod dump;
mod generations;
mod history;
mod postgres;
mod quotas;
mod registers;
mod rewrite;
mod scale;
mod schema7;
mod scopes;
mod sqlite;
mod structure;
mod unparsed;
mod upgrade;

/// The engine a test runs on; `both!`'s wrappers set it for their thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum On {
    Sqlite,
    Postgres,
}

thread_local! {
    static ON: Cell<On> = const { Cell::new(On::Sqlite) };
}

/// The engine of the running test.
pub(super) fn on() -> On {
    ON.with(Cell::get)
}

/// Runs `test` on `engine`.
pub(super) fn run(engine: On, test: fn()) {
    ON.with(|on| on.set(engine));
    test();
}

/// `both![test, …]`: each `fn test()` of the file as a test on SQLite
/// (`sqlite::test`) and on PostgreSQL (`postgres::test`).
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test]
            fn $name() {
                super::run(super::On::Sqlite, super::$name);
            })*
        }
        mod postgres {
            $(#[test]
            fn $name() {
                super::run(super::On::Postgres, super::$name);
            })*
        }
    };
}
use both;

/// A fresh, empty store of the test's engine.
fn store() -> Box<dyn Store> {
    match on() {
        On::Sqlite => Box::new(SqliteStore::open_in_memory().unwrap()),
        On::Postgres => Box::new(PgStore::open(&pg::fresh_database()).unwrap()),
    }
}

/// One fresh database of the test's engine that [`Db::open`] opens again
/// and again: separate connections, as separate processes would have.
struct Db {
    open: Box<dyn Fn() -> Box<dyn Store> + Send + Sync>,
    _dir: Option<tempfile::TempDir>,
}

impl Db {
    fn new() -> Db {
        match on() {
            On::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let file = dir.path().join("db.sqlite");
                Db {
                    open: Box::new(move || Box::new(SqliteStore::open(&file).unwrap())),
                    _dir: Some(dir),
                }
            }
            On::Postgres => {
                let url = pg::fresh_database();
                Db {
                    open: Box::new(move || Box::new(PgStore::open(&url).unwrap())),
                    _dir: None,
                }
            }
        }
    }

    fn open(&self) -> Box<dyn Store> {
        (self.open)()
    }
}

fn path(text: &str) -> LevelPath {
    LevelPath::parse_cli(text).unwrap()
}

fn at(env: i64, p: &str, resource: &str, kind: DocKind) -> DocAddress {
    DocAddress::new(env, path(p), resource, kind)
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn component(name: &str, resources: &[&str]) -> NewComponent {
    NewComponent {
        id: None,
        name: name.into(),
        resource_definitions: names(resources),
    }
}

/// A store with component "fuel" (astute, globals, override/node) and
/// environment 1 with levels [role, nodes].
fn fuel() -> Box<dyn Store> {
    let s = store();
    seed(s.as_ref());
    s
}

fn seed(s: &dyn Store) {
    s.create_component(&component("fuel", &["astute", "globals", "override/node"]))
        .unwrap();
    s.create_environment(&NewEnvironment {
        hiera: Default::default(),
        id: Some(1),
        components: vec![ComponentRef::Name("fuel".into())],
        hierarchy_levels: names(&["role", "nodes"]),
    })
    .unwrap();
}

/// The model error of a failed call, or a panic naming what came back.
fn kind_of<T: std::fmt::Debug>(r: Result<T>) -> (ErrorKind, String) {
    match r {
        Err(StoreError::Config(e)) => (e.kind(), e.to_string()),
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[track_caller]
fn assert_error<T: std::fmt::Debug>(r: Result<T>, kind: ErrorKind, msg: &str) {
    let (got, text) = kind_of(r);
    assert_eq!(got, kind, "{text}");
    assert!(text.contains(msg), "{text:?} should contain {msg:?}");
}

fn import_doc(p: &str, resource: &str, kind: DocKind, content: Hash) -> ImportDoc {
    ImportDoc {
        path: path(p),
        resource: resource.into(),
        kind,
        content: Content::Data(content),
    }
}
