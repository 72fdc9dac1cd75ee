//! Tests of the SQLite store: every operation and error, versions, the
//! import's all-or-nothing rule, migrations, reopening, concurrent writers.

use super::sqlite::open_with_migrations;
use super::*;
use crate::configdb::{ErrorKind, LevelPath, ResourceDefinition, Snapshot};
use crate::hiera::Value;
use crate::rhash;
use std::sync::Arc;

mod authors;
mod changes;
mod dump;

fn store() -> SqliteStore {
    SqliteStore::open_in_memory().unwrap()
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
fn fuel() -> SqliteStore {
    let s = store();
    seed(&s);
    s
}

fn seed(s: &SqliteStore) {
    s.create_component(&component("fuel", &["astute", "globals", "override/node"]))
        .unwrap();
    s.create_environment(&NewEnvironment {
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

#[test]
fn components_crud_and_errors() {
    let s = store();
    let fuel = s
        .create_component(&component("fuel", &["astute", "override/plugins"]))
        .unwrap();
    assert_eq!(fuel.name, "fuel");
    assert_eq!(
        fuel.resource_definitions
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["astute", "override/plugins"]
    );
    let explicit = s
        .create_component(&NewComponent {
            id: Some(42),
            ..component("plugin", &[])
        })
        .unwrap();
    assert_eq!(explicit.id, 42);
    assert_eq!(s.component(&ComponentRef::Id(fuel.id)).unwrap(), fuel);
    assert_eq!(
        s.component(&ComponentRef::Name("fuel".into())).unwrap(),
        fuel
    );
    assert_eq!(
        s.components().unwrap(),
        vec![fuel.clone(), explicit.clone()]
    );

    let taken = format!("a component named \"fuel\" already exists (id {})", fuel.id);
    let cases: Vec<(NewComponent, ErrorKind, &str)> = vec![
        (component("fuel", &[]), ErrorKind::Conflict, &taken),
        (
            NewComponent {
                id: Some(42),
                ..component("other", &[])
            },
            ErrorKind::Conflict,
            "component id 42 is already taken",
        ),
        (component("", &[]), ErrorKind::Invalid, "it is empty"),
        (component("123", &[]), ErrorKind::Invalid, "all digits"),
        (
            component("x", &["a", "a"]),
            ErrorKind::Invalid,
            "resource \"a\" is listed twice",
        ),
        (component("x", &["/a"]), ErrorKind::Invalid, "empty segment"),
    ];
    for (new, kind, msg) in cases {
        assert_error(s.create_component(&new), kind, msg);
    }
    assert_eq!(
        s.components().unwrap().len(),
        2,
        "failed creates left nothing"
    );

    assert_error(
        s.component(&ComponentRef::Id(7)),
        ErrorKind::NotFound,
        "component 7 does not exist",
    );
    assert_error(
        s.component(&ComponentRef::Name("nope".into())),
        ErrorKind::NotFound,
        "component \"nope\" does not exist",
    );

    let grown = s
        .add_resource_definitions(&ComponentRef::Id(42), &names(&["plugins/x"]))
        .unwrap();
    assert_eq!(grown.resource_definitions.len(), 1);
    assert_error(
        s.add_resource_definitions(&ComponentRef::Id(42), &names(&["plugins/x"])),
        ErrorKind::Conflict,
        "component \"plugin\" already defines resource \"plugins/x\"",
    );

    s.delete_component(&ComponentRef::Id(42)).unwrap();
    assert_error(
        s.delete_component(&ComponentRef::Id(42)),
        ErrorKind::NotFound,
        "component 42",
    );
    assert_eq!(s.components().unwrap(), vec![fuel]);
}

#[test]
fn resource_names_clash_within_an_environment() {
    let s = fuel();
    s.create_component(&component("plugin", &["plugins/a"]))
        .unwrap();
    s.create_component(&component("dup", &["globals"])).unwrap();
    // Creating an environment with two definitions of "globals".
    assert_error(
        s.create_environment(&NewEnvironment {
            id: Some(2),
            components: vec![
                ComponentRef::Name("fuel".into()),
                ComponentRef::Name("dup".into()),
            ],
            hierarchy_levels: vec![],
        }),
        ErrorKind::Conflict,
        "resource \"globals\" would be defined twice in environment 2: by component \"fuel\" and by component \"dup\"",
    );
    assert_error(s.environment(2), ErrorKind::NotFound, "environment 2");
    // Growing a component used by an environment into a clash.
    s.create_environment(&NewEnvironment {
        id: Some(3),
        components: vec![
            ComponentRef::Name("fuel".into()),
            ComponentRef::Name("plugin".into()),
        ],
        hierarchy_levels: vec![],
    })
    .unwrap();
    assert_error(
        s.add_resource_definitions(
            &ComponentRef::Name("plugin".into()),
            &names(&["ok", "astute"]),
        ),
        ErrorKind::Conflict,
        "resource \"astute\" would be defined twice in environment 3",
    );
    let plugin = s.component(&ComponentRef::Name("plugin".into())).unwrap();
    assert_eq!(plugin.resource_definitions.len(), 1, "nothing added");
    // A component in use cannot be deleted.
    assert_error(
        s.delete_component(&ComponentRef::Name("plugin".into())),
        ErrorKind::Conflict,
        "component \"plugin\" is used by environment(s) 3",
    );
}

#[test]
fn environments_crud_and_errors() {
    let s = fuel();
    let fuel_id = s.component(&ComponentRef::Name("fuel".into())).unwrap().id;
    s.create_component(&component("plugin", &["plugins/a"]))
        .unwrap();
    let env = s.environment(1).unwrap();
    assert_eq!(
        env,
        Environment {
            id: 1,
            components: vec![fuel_id],
            hierarchy_levels: names(&["role", "nodes"]),
        }
    );
    // Assigned id, components by id and name, level order kept.
    let auto = s
        .create_environment(&NewEnvironment {
            id: None,
            components: vec![
                ComponentRef::Name("plugin".into()),
                ComponentRef::Id(fuel_id),
            ],
            hierarchy_levels: names(&["z", "a", "m"]),
        })
        .unwrap();
    assert_eq!(auto.id, 2);
    assert_eq!(auto.hierarchy_levels, names(&["z", "a", "m"]));
    assert_eq!(auto.components.len(), 2);
    assert_eq!(auto.components[1], fuel_id);
    assert_eq!(s.environments().unwrap(), vec![env.clone(), auto.clone()]);

    let new = |id, components: Vec<ComponentRef>, levels: &[&str]| NewEnvironment {
        id,
        components,
        hierarchy_levels: names(levels),
    };
    let cases: Vec<(NewEnvironment, ErrorKind, &str)> = vec![
        (
            new(Some(1), vec![], &[]),
            ErrorKind::Conflict,
            "environment 1 already exists",
        ),
        (
            new(None, vec![ComponentRef::Id(99)], &[]),
            ErrorKind::NotFound,
            "component 99 does not exist",
        ),
        (
            new(None, vec![ComponentRef::Name("nope".into())], &[]),
            ErrorKind::NotFound,
            "component \"nope\" does not exist",
        ),
        (
            new(
                None,
                vec![ComponentRef::Id(fuel_id), ComponentRef::Name("fuel".into())],
                &[],
            ),
            ErrorKind::Conflict,
            "component \"fuel\" is listed twice",
        ),
        (
            new(None, vec![], &["nodes", "nodes"]),
            ErrorKind::Invalid,
            "level \"nodes\" is listed twice",
        ),
        (
            new(None, vec![], &["a/b"]),
            ErrorKind::Invalid,
            "may not contain '/'",
        ),
    ];
    for (n, kind, msg) in cases {
        assert_error(s.create_environment(&n), kind, msg);
    }
    assert_eq!(
        s.environments().unwrap().len(),
        2,
        "failed creates left nothing"
    );
    assert_error(
        s.environment(5),
        ErrorKind::NotFound,
        "environment 5 does not exist",
    );
    s.delete_environment(2).unwrap();
    assert_error(
        s.delete_environment(2),
        ErrorKind::NotFound,
        "environment 2",
    );
    assert_eq!(s.environments().unwrap(), vec![env]);
}

#[test]
fn every_write_is_a_version() {
    let s = fuel();
    let a = at(1, "nodes=node-1", "astute", DocKind::Values);
    assert_eq!(s.get(&a, None).unwrap(), None, "never written");
    assert_eq!(s.history(&a).unwrap(), vec![]);
    let docs = [
        rhash! {"k" => 1},
        rhash! {"k" => 2, "l" => Value::Array(vec![])},
        rhash! {"k" => 1},
    ];
    for (i, d) in docs.iter().enumerate() {
        let v = s.put(&a, d).unwrap();
        assert_eq!(v.number, i as u64 + 1);
        assert!(!v.deleted);
        assert_eq!(
            v.size,
            crate::wire::to_string(&Value::Hash(d.clone())).len()
        );
    }
    let (latest, content) = s.get(&a, None).unwrap().unwrap();
    assert_eq!((latest.number, content), (3, docs[2].clone()));
    let (v2, content) = s.get(&a, Some(2)).unwrap().unwrap();
    assert_eq!((v2.number, content), (2, docs[1].clone()));
    let history = s.history(&a).unwrap();
    assert_eq!(
        history.iter().map(|v| v.number).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(history[1], v2);
    assert!(history.iter().all(|v| v.created_at > 1_600_000_000));
    assert_error(
        s.get(&a, Some(7)),
        ErrorKind::NotFound,
        "version 7 of the values of resource \"astute\" at nodes=node-1 of environment 1 does not exist (the latest is 3)",
    );
    assert_error(
        s.get(&at(1, "", "astute", DocKind::Values), Some(1)),
        ErrorKind::NotFound,
        "(it has no versions)",
    );

    // Restore makes a new version with the old content.
    let restored = s.restore(&a, 2).unwrap();
    assert_eq!(restored.number, 4);
    assert_eq!(s.get(&a, None).unwrap().unwrap().1, docs[1]);
    assert_error(s.restore(&a, 9), ErrorKind::NotFound, "version 9");

    // Delete writes a marker; history survives; restore brings it back.
    let marker = s.delete(&a).unwrap();
    assert_eq!((marker.number, marker.deleted, marker.size), (5, true, 0));
    let (v, content) = s.get(&a, None).unwrap().unwrap();
    assert!(v.deleted);
    assert!(content.is_empty());
    assert_error(
        s.delete(&a),
        ErrorKind::NotFound,
        "there is no values of resource",
    );
    assert_error(
        s.restore(&a, 5),
        ErrorKind::Invalid,
        "it is a deletion marker",
    );
    assert_eq!(s.restore(&a, 1).unwrap().number, 6);
    assert_eq!(s.get(&a, None).unwrap().unwrap().1, docs[0]);
    assert_eq!(s.history(&a).unwrap().len(), 6);

    // The two kinds and other slots are separate documents.
    let o = at(1, "nodes=node-1", "astute", DocKind::Overrides);
    assert_eq!(s.put(&o, &rhash! {"o" => 1}).unwrap().number, 1);
    assert_eq!(
        s.put(&at(1, "", "astute", DocKind::Values), &Hash::default())
            .unwrap()
            .number,
        1
    );
    assert_error(
        s.delete(&at(1, "nodes=node-2", "astute", DocKind::Values)),
        ErrorKind::NotFound,
        "there is no values",
    );
}

#[test]
fn update_edits_the_latest_in_one_transaction() {
    use crate::configdb::keypath::{self, KeyPath};
    let s = fuel();
    let o = at(1, "nodes=n1", "astute", DocKind::Overrides);
    let set = |key: &str, value: Value| {
        let key = KeyPath::parse(key).unwrap();
        move |doc: &mut Hash| keypath::set(doc, &key, value.clone()).map_err(Into::into)
    };
    // From nothing, then keeping siblings.
    assert_eq!(
        s.update(&o, &mut set("nova.debug", true.into()))
            .unwrap()
            .number,
        1
    );
    assert_eq!(
        s.update(&o, &mut set("nova.workers", 8.into()))
            .unwrap()
            .number,
        2
    );
    assert_eq!(
        s.get(&o, None).unwrap().unwrap().1,
        rhash! {"nova" => Value::Hash(rhash! {"debug" => true, "workers" => 8})}
    );
    // A failing edit writes nothing.
    assert_error(
        s.update(&o, &mut set("nova.debug.x", 1.into())),
        ErrorKind::Invalid,
        "\"nova.debug\" is TrueClass, not a Hash or an Array",
    );
    assert_eq!(s.history(&o).unwrap().len(), 2);
    // After a deletion it starts from an empty Hash again.
    s.delete(&o).unwrap();
    s.update(&o, &mut set("x", 1.into())).unwrap();
    assert_eq!(s.get(&o, None).unwrap().unwrap().1, rhash! {"x" => 1});
    assert_error(
        s.update(&at(1, "", "nope", DocKind::Values), &mut |_| Ok(())),
        ErrorKind::NotFound,
        "resource \"nope\"",
    );
}

#[test]
fn concurrent_key_updates_lose_nothing() {
    use crate::configdb::keypath::{self, KeyPath};
    const WRITES: usize = 100;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db.sqlite");
    seed(&SqliteStore::open(&file).unwrap());
    let o = at(1, "", "globals", DocKind::Overrides);
    let (file, o) = (&file, &o);
    std::thread::scope(|scope| {
        for writer in 0..2 {
            scope.spawn(move || {
                let own = SqliteStore::open(file).unwrap();
                for i in 0..WRITES {
                    let key = KeyPath::parse(&format!("w{writer}.k{i}")).unwrap();
                    own.update(o, &mut |doc| {
                        keypath::set(doc, &key, Value::Int(i as i64)).map_err(Into::into)
                    })
                    .unwrap();
                }
            });
        }
    });
    let s = SqliteStore::open(file).unwrap();
    let (v, doc) = s.get(o, None).unwrap().unwrap();
    assert_eq!(v.number, 2 * WRITES as u64);
    for writer in 0..2 {
        let inner = doc[&Value::str(format!("w{writer}"))].as_hash().unwrap();
        assert_eq!(inner.len(), WRITES, "writer {writer} kept every key");
    }
}

#[test]
fn a_document_lives_at_its_slot() {
    let s = fuel();
    let long = at(
        1,
        "role=controller,nodes=node-1",
        "globals",
        DocKind::Values,
    );
    let short = at(1, "nodes=node-1", "globals", DocKind::Values);
    s.put(&long, &rhash! {"a" => 1}).unwrap();
    s.put(&short, &rhash! {"a" => 2}).unwrap();
    assert_eq!(s.history(&long).unwrap().len(), 2);
    assert_eq!(s.get(&long, None).unwrap().unwrap().1, rhash! {"a" => 2});
}

#[test]
fn document_errors_change_nothing() {
    let s = fuel();
    let doc = rhash! {"a" => 1};
    let cases: Vec<(DocAddress, ErrorKind, &str)> = vec![
        (
            at(9, "", "astute", DocKind::Values),
            ErrorKind::NotFound,
            "environment 9 does not exist",
        ),
        (
            at(1, "racks=r1", "astute", DocKind::Values),
            ErrorKind::NotFound,
            "level \"racks\" is not one of environment 1's levels [role, nodes]",
        ),
        (
            at(1, "nodes=n,role=r", "astute", DocKind::Values),
            ErrorKind::Invalid,
            "level \"role\" must come before level \"nodes\"",
        ),
        (
            at(1, "", "nope", DocKind::Overrides),
            ErrorKind::NotFound,
            "resource \"nope\" is not defined in environment 1 (it defines 3 others; its components list their resource_definitions)",
        ),
    ];
    for (a, kind, msg) in cases {
        assert_error(s.put(&a, &doc), kind, msg);
        assert_error(s.get(&a, None), kind, msg);
        assert_error(s.history(&a), kind, msg);
        assert_error(s.restore(&a, 1), kind, msg);
        assert_error(s.delete(&a), kind, msg);
    }
    assert!(s.load_all().unwrap().documents.is_empty());
}

#[test]
fn every_value_type_round_trips() {
    let s = fuel();
    let mut odd = Hash::default();
    odd.insert(Value::Int(1), "int key".into());
    odd.insert(Value::Symbol("sym".into()), Value::Float(1.0));
    let doc = rhash! {
        "nil" => Value::Nil,
        "float" => Value::Float(2.0),
        "big" => Value::integer("123456789012345678901234567890".parse().unwrap()),
        "sym" => Value::Symbol("s".into()),
        "odd" => Value::Hash(odd),
        "nan" => Value::Float(f64::INFINITY),
        "__hierad__" => "user data",
    };
    let a = at(1, "", "astute", DocKind::Values);
    s.put(&a, &doc).unwrap();
    assert_eq!(s.get(&a, None).unwrap().unwrap().1, doc);
    assert_eq!(s.load_all().unwrap().documents[0].content, doc);
}

/// A document nesting `levels` levels: Hashes with a non-String key (the
/// deepest stored form), a Symbol at the bottom.
fn nested_doc(levels: usize) -> Hash {
    let mut doc = rhash! {"leaf" => Value::Symbol("s".into())};
    for _ in 1..levels {
        let mut h = Hash::default();
        h.insert(Value::Int(1), Value::Hash(doc));
        doc = h;
    }
    doc
}

/// Issue 9, defect 1: one depth limit on every write, checked before
/// anything is written; what is accepted reads back, here and on reopening.
#[test]
fn every_write_refuses_documents_nested_past_the_limit() {
    let s = fuel();
    let a = at(1, "", "astute", DocKind::Values);
    let deepest = nested_doc(crate::wire::MAX_DEPTH);
    s.put(&a, &deepest).unwrap();
    assert_eq!(s.get(&a, None).unwrap().unwrap().1, deepest);
    assert_eq!(s.load_all().unwrap().documents[0].content, deepest);
    let too_deep = nested_doc(crate::wire::MAX_DEPTH + 1);
    let msg = "the values of resource \"astute\" at the root of environment 1 would nest more than 64 levels";
    assert_error(s.put(&a, &too_deep), ErrorKind::Invalid, msg);
    // The key path counts: "a.b" puts the value two levels down.
    let key = crate::configdb::KeyPath::parse("a.b").unwrap();
    for (levels, ok) in [(62, true), (63, false)] {
        let value = Value::Hash(nested_doc(levels));
        let r = s.update(&a, &mut |doc| {
            crate::configdb::keypath::set(doc, &key, value.clone())?;
            Ok(())
        });
        match ok {
            true => assert!(r.is_ok(), "{r:?}"),
            false => assert_error(r, ErrorKind::Invalid, msg),
        }
    }
    let node = at(1, "nodes=n1", "globals", DocKind::Values);
    let batch = ImportBatch {
        env: 1,
        documents: vec![
            import_doc("nodes=n1", "astute", DocKind::Values, rhash! {"x" => 1}),
            import_doc("nodes=n1", "globals", DocKind::Values, too_deep.clone()),
        ],
        ..ImportBatch::default()
    };
    assert_error(
        s.import(&batch),
        ErrorKind::Invalid,
        "the values of resource \"globals\" at nodes=n1 of environment 1 would nest more than 64",
    );
    assert_eq!(s.history(&node).unwrap(), vec![]);
    // A version stored before the limit existed is not restored.
    let versions = s.history(&a).unwrap().len();
    let plain = (0..crate::wire::MAX_DEPTH).fold(Value::Nil, |v, _| Value::Array(vec![v]));
    let text = crate::wire::to_string(&Value::Hash(rhash! {"a" => plain}));
    s.raw(|conn| {
        conn.execute(
            // Plain, as a version stored before packing existed.
            "UPDATE documents SET content = ?1, packing = 0, packed = NULL
             WHERE resource = 'astute' AND version = 1",
            [&text],
        )
    })
    .unwrap();
    assert_error(s.restore(&a, 1), ErrorKind::Invalid, msg);
    assert_eq!(s.history(&a).unwrap().len(), versions);
}

#[test]
fn load_all_reads_latest_live_versions() {
    let s = fuel();
    let root = at(1, "", "astute", DocKind::Values);
    let node = at(1, "nodes=n1", "astute", DocKind::Overrides);
    let gone = at(1, "nodes=n2", "globals", DocKind::Values);
    s.put(&root, &rhash! {"k" => "old"}).unwrap();
    s.put(&root, &rhash! {"k" => "root", "x" => 1}).unwrap();
    s.put(&node, &rhash! {"k" => "n1"}).unwrap();
    s.put(&gone, &rhash! {"g" => 1}).unwrap();
    s.delete(&gone).unwrap();
    let data = s.load_all().unwrap();
    assert_eq!(data.environments, s.environments().unwrap());
    assert_eq!(data.components, s.components().unwrap());
    let mut docs: Vec<_> = data
        .documents
        .iter()
        .map(|d| {
            (
                d.slot.as_ref().map(ToString::to_string),
                d.kind,
                d.version.number,
                d.content.clone(),
            )
        })
        .collect();
    docs.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        docs,
        vec![
            (None, DocKind::Values, 2, rhash! {"k" => "root", "x" => 1}),
            (
                Some("nodes=n1".into()),
                DocKind::Overrides,
                1,
                rhash! {"k" => "n1"}
            ),
        ]
    );
    let snap = Snapshot::build(data);
    assert_eq!(
        *snap.effective(1, &path("nodes=n1"), "astute").unwrap(),
        rhash! {"k" => "n1", "x" => 1}
    );
    assert!(
        snap.effective(1, &path("nodes=n2"), "globals")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn deleting_an_environment_is_restorable_and_purge_is_not() {
    let s = fuel();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    s.put(&a, &rhash! {"a" => 1}).unwrap();
    s.put(&a, &rhash! {"a" => 2}).unwrap();
    s.set_retention(
        1,
        &Retention {
            keep_versions: Some(5),
            keep_days: None,
        },
    )
    .unwrap();
    s.delete_environment(1).unwrap();
    assert!(s.load_all().unwrap().documents.is_empty());
    assert!(s.load_all().unwrap().environments.is_empty());
    assert!(s.environments().unwrap().is_empty());
    assert_error(
        s.get(&a, None),
        ErrorKind::NotFound,
        "environment 1 does not exist",
    );
    assert_error(
        s.put(&a, &Hash::default()),
        ErrorKind::NotFound,
        "environment 1 does not exist",
    );
    assert_error(
        s.delete_environment(1),
        ErrorKind::NotFound,
        "environment 1 does not exist",
    );
    let deleted = s.deleted_environments().unwrap();
    assert_eq!(deleted.len(), 1);
    assert_eq!(deleted[0].0.hierarchy_levels, names(&["role", "nodes"]));
    assert!(deleted[0].1 > 1_600_000_000);
    // Its id stays taken, with a way out named.
    let again = NewEnvironment {
        id: Some(1),
        components: vec![ComponentRef::Name("fuel".into())],
        hierarchy_levels: names(&["nodes"]),
    };
    assert_error(
        s.create_environment(&again),
        ErrorKind::Conflict,
        "environment 1 was deleted and can still be restored: restore it (POST /api/v1/config/environments/1/restore) or purge it",
    );
    // An assigned id never reuses it either.
    let other = s
        .create_environment(&NewEnvironment {
            id: None,
            ..again.clone()
        })
        .unwrap();
    assert_eq!(other.id, 2);
    // The component stays in use by it.
    assert_error(
        s.delete_component(&ComponentRef::Name("fuel".into())),
        ErrorKind::Conflict,
        "is used by environment(s) 1, 2; delete them first, and purge the deleted one(s) 1",
    );

    // Restore brings everything back: documents, history, retention.
    assert_error(
        s.restore_environment(2),
        ErrorKind::Conflict,
        "environment 2 is not deleted",
    );
    assert_error(
        s.restore_environment(9),
        ErrorKind::NotFound,
        "environment 9 does not exist",
    );
    let restored = s.restore_environment(1).unwrap();
    assert_eq!(restored.hierarchy_levels, names(&["role", "nodes"]));
    assert_eq!(s.get(&a, None).unwrap().unwrap().1, rhash! {"a" => 2});
    assert_eq!(s.get(&a, Some(1)).unwrap().unwrap().1, rhash! {"a" => 1});
    assert_eq!(s.load_all().unwrap().documents.len(), 1);
    assert_eq!(s.retention(1).unwrap().keep_versions, Some(5));
    assert!(s.deleted_environments().unwrap().is_empty());

    // Purge (live or deleted) removes it for good; the id is free again.
    s.delete_environment(1).unwrap();
    s.purge_environment(1).unwrap();
    s.purge_environment(2).unwrap();
    assert_error(
        s.purge_environment(1),
        ErrorKind::NotFound,
        "environment 1 does not exist",
    );
    assert_error(
        s.restore_environment(1),
        ErrorKind::NotFound,
        "environment 1 does not exist",
    );
    s.create_environment(&again).unwrap();
    assert_eq!(s.history(&a).unwrap(), vec![], "no history carried over");
    assert_eq!(s.put(&a, &rhash! {"a" => 3}).unwrap().number, 1);
}

/// A document of about `kib` KiB whose `changed` key holds `value`.
fn big_doc(kib: usize, changed: usize, value: i64) -> Hash {
    let mut doc = Hash::default();
    for i in 0..kib * 1024 / 48 {
        let v = if i == changed {
            Value::Int(value)
        } else {
            Value::str(format!("node-{i}.domain.tld/{}", i * 7919 % 10_007))
        };
        doc.insert(Value::str(format!("key_{i}")), v);
    }
    doc
}

/// Issue 9, defect 6: every write stored a full copy (20 one-key writes
/// to a 16 MiB document grew the database by 320 MiB).
#[test]
fn history_is_packed_and_every_version_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open(dir.path().join("db.sqlite")).unwrap();
    seed(&s);
    let a = at(1, "", "astute", DocKind::Values);
    let first = big_doc(512, 0, 0);
    let doc_bytes = crate::wire::to_string(&Value::Hash(first.clone())).len() as u64;
    let mut written = vec![first.clone()];
    s.put(&a, &first).unwrap();
    // 40 one-key writes, a delete and a restore among them.
    for w in 1..=40 {
        let v = if w == 20 {
            s.delete(&a).unwrap();
            Hash::default()
        } else if w == 21 {
            s.restore(&a, 19).unwrap();
            written[18].clone()
        } else {
            let doc = big_doc(512, w, w as i64);
            s.put(&a, &doc).unwrap();
            doc
        };
        written.push(v);
    }
    for (n, want) in written.iter().enumerate() {
        let (v, got) = s.get(&a, Some(n as u64 + 1)).unwrap().unwrap();
        assert_eq!(v.number, n as u64 + 1);
        assert_eq!(&got, want, "version {}", n + 1);
    }
    // 41 versions of a 512 KiB document take a few times its size, not 41.
    let size = s.database_size().unwrap();
    assert!(
        size.bytes < 4 * doc_bytes,
        "{} bytes for 41 versions of {doc_bytes}",
        size.bytes
    );
    // Only the latest is plain; the others are packed, most as deltas.
    let packings: Vec<(i64, i64)> = s.raw(|c| {
        c.prepare("SELECT version, packing FROM documents ORDER BY version")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    });
    for (version, packing) in packings {
        let want = match version {
            41 => 0,
            21 => 0, // a deletion marker has no content to pack
            16 | 32 | 20 => 1,
            _ => 2,
        };
        assert_eq!(packing, want, "version {version}");
    }
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
        let old = open_with_migrations(&file, &migrations::MIGRATIONS[..1]).unwrap();
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
    // Versions written before authors were recorded have none.
    let old = s.history(&a).unwrap();
    assert!(old.len() == 4 && old.iter().all(|v| v.author.is_none()));
    assert_eq!(s.put(&a, &rhash! {"v" => 9}).unwrap().number, 5);
    for (n, d) in docs.iter().enumerate() {
        assert_eq!(&s.get(&a, Some(n as u64 + 1)).unwrap().unwrap().1, d);
    }
    assert_eq!(s.retention(1).unwrap(), Retention::default());
    s.delete_environment(1).unwrap();
    s.restore_environment(1).unwrap();
    assert_eq!(s.get(&a, None).unwrap().unwrap().1, rhash! {"v" => 9});
}

#[test]
fn retention_prunes_the_oldest_versions_only() {
    let s = fuel();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    let g = at(1, "", "globals", DocKind::Values);
    for i in 1..=40 {
        s.put(&a, &rhash! {"v" => i}).unwrap();
    }
    for i in 1..=3 {
        s.put(&g, &rhash! {"g" => i}).unwrap();
    }
    s.delete(&g).unwrap();
    let now = 4_000_000_000;
    // The default keeps everything: nothing goes.
    let report = s.prune(&Retention::KEEP_ALL, now, 100).unwrap();
    assert_eq!(report, PruneReport::default());
    assert_eq!(s.history(&a).unwrap().len(), 40);
    // A server default of 10 versions, in batches of 7.
    let default = Retention {
        keep_versions: Some(10),
        keep_days: Some(0),
    };
    let mut pruned = 0;
    for _ in 0..10 {
        let report = s.prune(&default, now, 7).unwrap();
        pruned += report.pruned;
        if !report.more {
            break;
        }
    }
    assert_eq!(pruned, 30, "globals: 4 versions, under the limit");
    let kept: Vec<u64> = s.history(&a).unwrap().iter().map(|v| v.number).collect();
    assert_eq!(kept, (31..=40).collect::<Vec<_>>());
    for n in 31..=40 {
        assert_eq!(
            s.get(&a, Some(n)).unwrap().unwrap().1,
            rhash! {"v" => n as i64}
        );
    }
    // A pruned version reads as one that never existed.
    let pruned_msg = kind_of(s.get(&a, Some(30)));
    let never_msg = kind_of(s.get(&a, Some(99)));
    assert_eq!(pruned_msg.0, ErrorKind::NotFound);
    assert_eq!(
        pruned_msg.1.replace("version 30", "version N"),
        never_msg.1.replace("version 99", "version N")
    );
    assert_error(s.restore(&a, 30), ErrorKind::NotFound, "version 30");

    // The environment's own retention wins over the default: 1 version,
    // but a deleted document keeps its marker and the content under it.
    s.set_retention(
        1,
        &Retention {
            keep_versions: Some(1),
            keep_days: None,
        },
    )
    .unwrap();
    assert_eq!(s.prune(&default, now, 100).unwrap().pruned, 9 + 2);
    assert_eq!(s.history(&a).unwrap().len(), 1);
    let g_kept: Vec<(u64, bool)> = s
        .history(&g)
        .unwrap()
        .iter()
        .map(|v| (v.number, v.deleted))
        .collect();
    assert_eq!(g_kept, [(3, false), (4, true)]);
    assert_eq!(s.restore(&g, 3).unwrap().number, 5);
    assert_eq!(s.load_all().unwrap().documents.len(), 2);

    // By age: versions older than 2 days go, the latest never does.
    s.set_retention(
        1,
        &Retention {
            keep_versions: Some(0),
            keep_days: Some(2),
        },
    )
    .unwrap();
    s.put(&a, &rhash! {"v" => 41}).unwrap();
    s.put(&a, &rhash! {"v" => 42}).unwrap();
    let today = s.history(&a).unwrap()[0].created_at;
    assert_eq!(s.prune(&default, today + 60, 100).unwrap().pruned, 0);
    assert_eq!(
        s.prune(&default, today + 3 * 86_400, 100).unwrap().pruned,
        2 + 2
    );
    assert_eq!(s.history(&a).unwrap().len(), 1);
    assert_eq!(s.get(&a, None).unwrap().unwrap().1, rhash! {"v" => 42});
    assert!(s.database_size().unwrap().bytes > 0);
}

fn import_doc(p: &str, resource: &str, kind: DocKind, content: Hash) -> ImportDoc {
    ImportDoc {
        path: path(p),
        resource: resource.into(),
        kind,
        content,
    }
}

#[test]
fn import_writes_all_skips_unchanged_and_replaces() {
    let s = fuel();
    let user_override = at(1, "nodes=n1", "astute", DocKind::Overrides);
    s.put(&user_override, &rhash! {"mine" => true}).unwrap();
    let batch = ImportBatch {
        env: 1,
        documents: vec![
            import_doc("nodes=n1", "astute", DocKind::Values, rhash! {"a" => 1}),
            import_doc("nodes=n1", "globals", DocKind::Values, rhash! {"g" => 1}),
            import_doc(
                "nodes=n1",
                "override/node",
                DocKind::Values,
                rhash! {"o" => 1},
            ),
            import_doc("", "astute", DocKind::Values, rhash! {"root" => 1}),
        ],
        replace: vec![],
        define_missing_in: None,
        author: None,
    };
    let report = s.import(&batch).unwrap();
    assert_eq!(report.written.len(), 4);
    assert!(report.unchanged.is_empty() && report.deleted.is_empty());

    // Re-import: astute changed, globals the same, override/node gone,
    // a new plugin resource defined on the fly.
    let batch = ImportBatch {
        env: 1,
        documents: vec![
            import_doc("nodes=n1", "astute", DocKind::Values, rhash! {"a" => 2}),
            import_doc("nodes=n1", "globals", DocKind::Values, rhash! {"g" => 1}),
            import_doc(
                "nodes=n1",
                "plugins/contrail",
                DocKind::Values,
                rhash! {"p" => 1},
            ),
        ],
        replace: vec![(path("nodes=n1"), DocKind::Values)],
        define_missing_in: Some(ComponentRef::Name("fuel".into())),
        author: None,
    };
    let report = s.import(&batch).unwrap();
    let written: Vec<(&str, u64)> = report
        .written
        .iter()
        .map(|(a, v)| (a.resource.as_str(), v.number))
        .collect();
    assert_eq!(written, [("astute", 2), ("plugins/contrail", 1)]);
    assert_eq!(report.unchanged.len(), 1);
    assert_eq!(report.unchanged[0].resource, "globals");
    assert_eq!(report.defined, ["plugins/contrail"]);
    let deleted: Vec<(&str, u64, bool)> = report
        .deleted
        .iter()
        .map(|(a, v)| (a.resource.as_str(), v.number, v.deleted))
        .collect();
    assert_eq!(deleted, [("override/node", 2, true)]);
    // The overrides and the root were outside the replaced scope.
    assert_eq!(
        s.get(&user_override, None).unwrap().unwrap().1,
        rhash! {"mine" => true}
    );
    let data = s.load_all().unwrap();
    assert_eq!(data.documents.len(), 5);
    let snap = Snapshot::build(data);
    assert_eq!(
        *snap
            .effective(1, &path("nodes=n1"), "plugins/contrail")
            .unwrap(),
        rhash! {"p" => 1}
    );
    assert_eq!(
        *snap
            .effective(1, &path("nodes=n1"), "override/node")
            .unwrap(),
        Hash::default()
    );
}

#[test]
fn a_failed_import_leaves_nothing() {
    let s = fuel();
    s.create_component(&component("plugin", &[])).unwrap();
    let before = s.load_all().unwrap();
    let good = |r: &str| import_doc("nodes=n1", r, DocKind::Values, rhash! {"x" => 1});
    let cases: Vec<(ImportBatch, ErrorKind, &str)> = vec![
        (
            ImportBatch {
                env: 1,
                documents: vec![good("astute"), good("globals"), good("undefined")],
                ..ImportBatch::default()
            },
            ErrorKind::NotFound,
            "resource \"undefined\" is not defined in environment 1",
        ),
        (
            ImportBatch {
                env: 1,
                documents: vec![
                    good("astute"),
                    import_doc(
                        "role=r,nodes=n1",
                        "astute",
                        DocKind::Values,
                        Hash::default(),
                    ),
                ],
                ..ImportBatch::default()
            },
            ErrorKind::Invalid,
            "the values of resource \"astute\" at role=r,nodes=n1 of environment 1 appears twice in one import",
        ),
        (
            ImportBatch {
                env: 1,
                documents: vec![good("astute"), good("new/one"), good("bad//name")],
                define_missing_in: Some(ComponentRef::Name("fuel".into())),
                author: None,
                ..ImportBatch::default()
            },
            ErrorKind::Invalid,
            "resource \"bad//name\" is not a valid name",
        ),
        (
            ImportBatch {
                env: 1,
                documents: vec![good("astute"), good("new/one")],
                define_missing_in: Some(ComponentRef::Name("plugin".into())),
                author: None,
                ..ImportBatch::default()
            },
            ErrorKind::Invalid,
            "component plugin is not used by environment 1",
        ),
        (
            ImportBatch {
                env: 1,
                documents: vec![good("astute"), good("globals")],
                replace: vec![(path("racks=1"), DocKind::Values)],
                ..ImportBatch::default()
            },
            ErrorKind::NotFound,
            "level \"racks\"",
        ),
        (
            ImportBatch {
                env: 4,
                documents: vec![good("astute")],
                ..ImportBatch::default()
            },
            ErrorKind::NotFound,
            "environment 4 does not exist",
        ),
    ];
    for (batch, kind, msg) in cases {
        assert_error(s.import(&batch), kind, msg);
        assert_eq!(
            s.load_all().unwrap(),
            before,
            "{msg}: nothing written or defined"
        );
    }
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
    assert_eq!(user_version(), migrations::MIGRATIONS.len() as i64);
    // Opening again runs nothing (CREATE TABLE would fail if it did).
    drop(SqliteStore::open(&file).unwrap());
    assert_eq!(user_version(), migrations::MIGRATIONS.len() as i64);

    // A later release appends a migration: only it runs, once.
    let counting = "CREATE TABLE IF NOT EXISTS runs (n INTEGER); INSERT INTO runs VALUES (1);";
    let mut longer = migrations::MIGRATIONS.to_vec();
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
            if found == longer.len() as i64 && known == migrations::MIGRATIONS.len()
    ));
    // A failing migration rolls back with its version bump.
    let other = dir.path().join("other.sqlite");
    let broken = [migrations::MIGRATIONS[0], "CREATE TABLE t (a); NOT SQL;"];
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

#[test]
fn reopening_keeps_data_and_versions() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db.sqlite");
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    {
        let s = SqliteStore::open(&file).unwrap();
        seed(&s);
        s.put(&a, &rhash! {"v" => 1}).unwrap();
        s.put(&a, &rhash! {"v" => 2}).unwrap();
        s.delete(&a).unwrap();
    }
    let s = SqliteStore::open(&file).unwrap();
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

#[test]
fn concurrent_writers_lose_nothing() {
    const WRITES: i64 = 200;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db.sqlite");
    seed(&SqliteStore::open(&file).unwrap());
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    // Two connections on one file (as two processes would be), and two
    // threads sharing one store.
    // Held as the server will hold it.
    let shared: Arc<dyn Store> = Arc::new(SqliteStore::open(&file).unwrap());
    let (file, a) = (&file, &a);
    std::thread::scope(|scope| {
        for writer in 0..2_i64 {
            scope.spawn(move || {
                let own = SqliteStore::open(file).unwrap();
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

#[test]
fn resource_definitions_keep_their_order() {
    let s = store();
    let c = s.create_component(&component("c", &["a", "b/c"])).unwrap();
    assert_eq!(
        c.resource_definitions,
        vec![
            ResourceDefinition {
                id: 1,
                name: "a".into(),
                content: Default::default(),
            },
            ResourceDefinition {
                id: 2,
                name: "b/c".into(),
                content: Default::default(),
            },
        ]
    );
}

/// Synthetic Fuel-sized data: an astute-like document of about 85 KB of
/// JSON (like the fixtures in shared/fixtures/fuel) and a globals of ~6 KB.
mod synthetic {
    use super::*;

    fn section(seed: i64, keys: usize, depth: usize) -> Value {
        let mut h = Hash::default();
        for k in 0..keys {
            let key = format!("key_{seed}_{k}");
            let v = match (k % 5, depth) {
                (0, d) if d > 0 => section(seed * 7 + k as i64, keys / 2 + 1, d - 1),
                (1, _) => Value::Array(
                    (0..4)
                        .map(|i| Value::str(format!("10.{seed}.{k}.{i}/24")))
                        .collect(),
                ),
                (2, _) => Value::Bool(k % 2 == 0),
                (3, _) => Value::Int(seed * 1000 + k as i64),
                _ => Value::str(format!("value-{seed}-{k}-some-text")),
            };
            h.insert(Value::str(key), v);
        }
        Value::Hash(h)
    }

    pub(crate) fn astute(node: usize) -> Hash {
        let mut doc = Hash::default();
        for s in 0..40 {
            doc.insert(Value::str(format!("section_{s}")), section(s, 12, 2));
        }
        doc.insert(Value::str("uid"), Value::str(node.to_string()));
        doc.insert(
            Value::str("fqdn"),
            Value::str(format!("node-{node}.domain.tld")),
        );
        doc.insert(Value::str("network_scheme"), section(node as i64, 14, 2));
        doc
    }

    /// The part of astute that differs per node.
    pub(crate) fn node_part(node: usize) -> Hash {
        let mut doc = Hash::default();
        doc.insert(Value::str("uid"), Value::str(node.to_string()));
        doc.insert(
            Value::str("fqdn"),
            Value::str(format!("node-{node}.domain.tld")),
        );
        doc.insert(Value::str("network_scheme"), section(node as i64, 14, 2));
        doc
    }

    pub(crate) fn globals(node: usize) -> Hash {
        match section(node as i64, 40, 1) {
            Value::Hash(h) => h,
            _ => unreachable!(),
        }
    }

    fn count(v: &Value) -> usize {
        1 + match v {
            Value::Hash(h) => h.values().map(count).sum(),
            Value::Array(a) => a.iter().map(count).sum(),
            _ => 0,
        }
    }

    /// The real data/astute.yaml is 74 KB as JSON with 3,133 values.
    #[test]
    fn sizes_are_fuel_like() {
        let doc = Value::Hash(astute(1));
        let bytes = crate::wire::to_string(&doc).len();
        assert!((60_000..120_000).contains(&bytes), "astute {bytes} bytes");
        let values = count(&doc);
        assert!((2_500..8_000).contains(&values), "astute {values} values");
    }
}

/// CPU seconds this process has used, all threads (Linux), so figures
/// mean something on a shared, loaded machine.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime, in clock ticks (100 per second on Linux).
    (ticks(11) + ticks(12)) / 100.0
}

/// Roughly the heap a decoded value holds (IndexMap indices included as
/// one word per entry; allocator overhead left out).
fn heap_bytes(v: &Value) -> usize {
    let cell = std::mem::size_of::<Value>();
    match v {
        Value::String(s) | Value::Symbol(s) => s.capacity(),
        Value::Array(a) => a.capacity() * cell + a.iter().map(heap_bytes).sum::<usize>(),
        Value::Hash(h) => {
            h.capacity() * (2 * cell + 2 * std::mem::size_of::<usize>())
                + h.iter()
                    .map(|(k, v)| heap_bytes(k) + heap_bytes(v))
                    .sum::<usize>()
        }
        _ => 0,
    }
}

/// Measures load_all + Snapshot::build for 1,000 nodes; run with
/// `cargo test --release -- --ignored --nocapture snapshot_scale`.
#[test]
#[ignore = "a measurement: run in release"]
fn snapshot_scale() {
    use std::time::Instant;
    const NODES: usize = 1000;
    let dir = tempfile::tempdir().unwrap();
    for (label, full) in [
        ("full astute per node", true),
        ("shared root astute", false),
    ] {
        let file = dir.path().join(format!("{full}.sqlite"));
        let s = SqliteStore::open(&file).unwrap();
        seed(&s);
        let mut documents = vec![
            import_doc(
                "",
                "astute",
                DocKind::Values,
                if full {
                    Hash::default()
                } else {
                    synthetic::astute(0)
                },
            ),
            import_doc("", "globals", DocKind::Values, synthetic::globals(0)),
        ];
        for n in 1..=NODES {
            let p = format!("nodes=node-{n}.domain.tld");
            let astute = if full {
                synthetic::astute(n)
            } else {
                synthetic::node_part(n)
            };
            documents.push(import_doc(&p, "astute", DocKind::Values, astute));
            documents.push(import_doc(
                &p,
                "globals",
                DocKind::Values,
                synthetic::globals(n),
            ));
            if n % 10 == 0 {
                documents.push(import_doc(
                    &p,
                    "astute",
                    DocKind::Overrides,
                    rhash! {"section_1" => Value::Hash(rhash! {"key_1_3" => "override"})},
                ));
            }
        }
        let t = Instant::now();
        s.import(&ImportBatch {
            env: 1,
            documents,
            ..ImportBatch::default()
        })
        .unwrap();
        let import = t.elapsed();
        let bytes = std::fs::metadata(&file).unwrap().len()
            + std::fs::metadata(dir.path().join(format!("{full}.sqlite-wal")))
                .map(|m| m.len())
                .unwrap_or(0);
        drop(s);
        let s = SqliteStore::open(&file).unwrap();
        let (t, cpu) = (Instant::now(), cpu_seconds());
        let data = s.load_all().unwrap();
        let load = t.elapsed();
        let mut load_cpu = cpu_seconds() - cpu;
        let docs = data.documents.len();
        let heap_mb = data
            .documents
            .iter()
            .map(|d| {
                d.content.capacity() * 2 * std::mem::size_of::<Value>()
                    + d.content
                        .iter()
                        .map(|(k, v)| heap_bytes(k) + heap_bytes(v))
                        .sum::<usize>()
            })
            .sum::<usize>() as f64
            / 1e6;
        let (t, cpu) = (Instant::now(), cpu_seconds());
        let snap = Snapshot::build(data);
        let build = t.elapsed();
        load_cpu += cpu_seconds() - cpu;
        // The lookup path: one key per datasource, folded on its own.
        let t = Instant::now();
        let (section, fqdn) = (Value::str("section_1"), Value::str("fqdn"));
        for n in 1..=NODES {
            let p = path(&format!("nodes=node-{n}.domain.tld"));
            let at = snap.at(1, &p).unwrap();
            assert!(at.effective_key("astute", &section).is_some());
            let (got, _) = at.effective_key("astute", &fqdn).unwrap();
            assert_eq!(*got, Value::str(format!("node-{n}.domain.tld")));
        }
        let keyed = t.elapsed();
        let t = Instant::now();
        let mut shared_with_root = 0;
        let root = snap.effective(1, &LevelPath::root(), "globals").unwrap();
        for n in 1..=NODES {
            let p = path(&format!("nodes=node-{n}.domain.tld"));
            let a = snap.effective(1, &p, "astute").unwrap();
            assert_eq!(a[&Value::str("uid")], Value::str(n.to_string()));
            let g = snap.effective(1, &p, "override/node").unwrap();
            shared_with_root += usize::from(g.is_empty());
            let _ = snap.effective(1, &p, "globals").unwrap();
        }
        let first = t.elapsed();
        let t = Instant::now();
        for n in 1..=NODES {
            let p = path(&format!("nodes=node-{n}.domain.tld"));
            let _ = snap.effective(1, &p, "astute").unwrap();
        }
        let cached = t.elapsed();
        assert_eq!(shared_with_root, NODES);
        assert!(!root.is_empty());
        println!(
            "{label}: {docs} documents, database {:.1} MB; import {import:?}; load_all {load:?} + build {build:?} wall, {load_cpu:.2} CPU-s; effective_key x 2 keys x {NODES} nodes {keyed:?}; first effective of 3 resources x {NODES} nodes {first:?}; cached astute x {NODES} {cached:?}; decoded documents ~{heap_mb:.0} MB of heap",
            bytes as f64 / 1e6
        );
        drop(snap);
        // CPU time, not wall time: other work shares this machine. On two
        // idle cores the wall time is about half of it.
        assert!(load_cpu < 3.0, "{load_cpu} CPU-s");
    }
}

/// Issue 9: reading never fails on what the writer accepted. Generated
/// values of every type the model has (Symbols, NaN and infinite Floats,
/// big Integers, Hashes with non-String keys and with a `__hierad__` key,
/// nesting up to the limit) go through a real store, whose encoding and
/// decoding must give them back, from `get` and from `load_all`.
/// `PROPTEST_CASES` sets the number of cases (256 by default).
mod round_trip {
    use super::*;
    use crate::wire::MAX_DEPTH;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            ".{0,8}",
            Just(crate::wire::TAG.to_owned()),
            Just("$serde_json::private::Number".to_owned()),
            Just("%{x}".to_owned()),
        ]
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Nil),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            "-?[1-9][0-9]{19,40}".prop_map(|t| Value::integer(t.parse().unwrap())),
            any::<f64>().prop_map(Value::Float),
            prop_oneof![
                Just(f64::NAN),
                Just(f64::INFINITY),
                Just(f64::NEG_INFINITY),
                Just(-0.0)
            ]
            .prop_map(Value::Float),
            text().prop_map(Value::String),
            text().prop_map(Value::Symbol),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(4, 48, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((text().prop_map(Value::String), inner.clone()), 0..5)
                    .prop_map(|kv| Value::Hash(kv.into_iter().collect())),
                prop::collection::vec((inner.clone(), inner), 0..4)
                    .prop_map(|kv| Value::Hash(kv.into_iter().collect())),
            ]
        })
    }

    /// A value inside a chain of containers as deep as the limit allows:
    /// 0 an Array, 1 a String-keyed Hash, 2 a Symbol-keyed Hash, 3 a Hash
    /// under its `__hierad__` key, 4 a Hash keyed by the value itself.
    fn deep() -> impl Strategy<Value = Value> {
        (value(), prop::collection::vec(0..5u8, 0..MAX_DEPTH)).prop_map(|(v, chain)| {
            // The document's own Hash is a level too.
            let room = MAX_DEPTH - 1 - v.depth_upto(MAX_DEPTH);
            chain.into_iter().take(room).fold(v, |v, kind| {
                let mut h = Hash::default();
                match kind {
                    0 => return Value::Array(vec![v]),
                    1 => h.insert(Value::str("k"), v),
                    2 => h.insert(Value::Symbol("k".into()), v),
                    3 => h.insert(Value::str(crate::wire::TAG), v),
                    _ => h.insert(v, Value::Nil),
                };
                Value::Hash(h)
            })
        })
    }

    proptest! {
        #[test]
        fn what_the_store_accepts_reads_back(v in prop_oneof![value(), deep()]) {
            let s = fuel();
            let a = at(1, "", "astute", DocKind::Values);
            let doc = rhash! {"v" => v};
            s.put(&a, &doc).unwrap();
            let (_, back) = s.get(&a, None).unwrap().unwrap();
            prop_assert_eq!(&back, &doc);
            let text = crate::wire::to_string(&Value::Hash(doc.clone()));
            prop_assert_eq!(crate::wire::to_string(&Value::Hash(back)), text);
            prop_assert_eq!(&s.load_all().unwrap().documents[0].content, &doc);
        }
    }
}
