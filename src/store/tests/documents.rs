//! Document versions: every write, update, delete, the depth limit, the
//! error paths, concurrent key updates, and `load_all`.

use super::*;
use crate::configdb::Snapshot;
use crate::hiera::Value;
use crate::rhash;

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

fn concurrent_key_updates_lose_nothing() {
    use crate::configdb::keypath::{self, KeyPath};
    const WRITES: usize = 100;
    let db = Db::new();
    seed(db.open().as_ref());
    let o = at(1, "", "globals", DocKind::Overrides);
    let (db, o) = (&db, &o);
    std::thread::scope(|scope| {
        for writer in 0..2 {
            scope.spawn(move || {
                let own = db.open();
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
    let s = db.open();
    let (v, doc) = s.get(o, None).unwrap().unwrap();
    assert_eq!(v.number, 2 * WRITES as u64);
    for writer in 0..2 {
        let inner = doc[&Value::str(format!("w{writer}"))].as_hash().unwrap();
        assert_eq!(inner.len(), WRITES, "writer {writer} kept every key");
    }
}

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

/// One depth limit on every write, checked before
/// anything is written; what is accepted reads back, here and on reopening.
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
    s.execute_sql(
        // Plain, as a version stored before packing existed.
        "UPDATE documents SET content = ?1, packing = 0, packed = NULL
         WHERE resource = 'astute' AND version = 1",
        crate::store::sql::params![&text],
    )
    .unwrap();
    assert_error(s.restore(&a, 1), ErrorKind::Invalid, msg);
    assert_eq!(s.history(&a).unwrap().len(), versions);
}

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

both![
    every_write_is_a_version,
    update_edits_the_latest_in_one_transaction,
    concurrent_key_updates_lose_nothing,
    a_document_lives_at_its_slot,
    document_errors_change_nothing,
    every_value_type_round_trips,
    every_write_refuses_documents_nested_past_the_limit,
    load_all_reads_latest_live_versions,
];
