//! The change log: every committed write takes the next generation and
//! says what it changed; readers get documents, or everything when they
//! must reload.

use super::*;
use crate::store::changes::DERIVE_AT_MOST;

/// The documents a `Changes` names, with whether each is live, or `None`
/// for "everything" (and its generation).
fn summary(changes: &Changes) -> (u64, Option<Vec<(String, bool)>>) {
    let documents = match changes {
        Changes::None { .. } => Some(Vec::new()),
        Changes::Documents { documents, .. } => Some(
            documents
                .iter()
                .map(|(at, doc)| (at.resource.clone(), doc.is_some()))
                .collect(),
        ),
        Changes::Everything { .. } => None,
    };
    (changes.generation(), documents)
}

fn docs(list: &[(&str, bool)]) -> Option<Vec<(String, bool)>> {
    Some(
        list.iter()
            .map(|(r, live)| ((*r).to_owned(), *live))
            .collect(),
    )
}

fn every_write_takes_the_next_generation_and_names_what_it_changed() {
    let s = store();
    assert_eq!(s.generation().unwrap(), 0);
    assert_eq!(summary(&s.changes_since(0).unwrap()), (0, None));
    seed(s.as_ref());
    // A component and an environment: two structural writes.
    assert_eq!(s.generation().unwrap(), 2);
    assert_eq!(summary(&s.changes_since(2).unwrap()), (2, docs(&[])));
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    let g = at(1, "", "globals", DocKind::Overrides);
    s.put(&a, &rhash! {"v" => 1}).unwrap();
    assert_eq!(
        summary(&s.changes_since(2).unwrap()),
        (3, docs(&[("astute", true)]))
    );
    s.update(&g, &mut |doc| {
        doc.insert(Value::from("k"), Value::from("x"));
        Ok(())
    })
    .unwrap();
    s.delete(&a).unwrap();
    // Both documents once each, as they are now.
    let changes = s.changes_since(3).unwrap();
    assert_eq!(
        summary(&changes),
        (5, docs(&[("globals", true), ("astute", false)]))
    );
    let Changes::Documents { documents, .. } = changes else {
        unreachable!()
    };
    let (at_g, doc) = &documents[0];
    assert_eq!(at_g.path, path(""));
    assert_eq!(*doc.as_ref().unwrap().content, rhash! {"k" => "x"});
    s.restore(&a, 1).unwrap();
    assert_eq!(
        summary(&s.changes_since(5).unwrap()),
        (6, docs(&[("astute", true)]))
    );
    // Reaching back past a structural change: everything, as it is now.
    let changes = s.changes_since(1).unwrap();
    let Changes::Everything { generation, data } = changes else {
        panic!("expected everything, got {:?}", summary(&changes));
    };
    assert_eq!(generation, 6);
    assert_eq!(data.documents.len(), 2);
}

fn writes_that_change_nothing_a_snapshot_holds_take_no_generation() {
    let s = fuel();
    let before = s.generation().unwrap();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    // Refused writes.
    assert!(
        s.put(&at(1, "", "nope", DocKind::Values), &rhash! {})
            .is_err()
    );
    assert!(s.delete(&a).is_err());
    assert!(
        s.update(&a, &mut |_| Err(
            Invalid::LevelListedTwice("x".into()).into()
        ))
        .is_err()
    );
    // Settings outside the snapshot, and a re-import of the same content.
    s.set_retention(1, &Retention::KEEP_ALL).unwrap();
    s.prune(&Retention::KEEP_ALL, 0, 10).unwrap();
    let batch = ImportBatch {
        env: 1,
        documents: vec![import_doc(
            "nodes=n1",
            "astute",
            DocKind::Values,
            rhash! {"v" => 1},
        )],
        ..ImportBatch::default()
    };
    s.import(&batch).unwrap();
    assert_eq!(s.generation().unwrap(), before + 1);
    s.import(&batch).unwrap();
    assert_eq!(
        s.generation().unwrap(),
        before + 1,
        "an unchanged re-import"
    );
}

fn readers_reload_everything_when_documents_will_not_do() {
    let s = fuel();
    let start = s.generation().unwrap();
    // An import that defines resources changes the structure.
    let batch = ImportBatch {
        env: 1,
        documents: vec![import_doc("", "newres", DocKind::Values, rhash! {"v" => 1})],
        define_missing_in: Some(ComponentRef::Name("fuel".into())),
        ..ImportBatch::default()
    };
    s.import(&batch).unwrap();
    assert_eq!(summary(&s.changes_since(start).unwrap()), (start + 1, None));
    // Many documents at once.
    let nodes: Vec<String> = (0..=DERIVE_AT_MOST)
        .map(|i| format!("nodes=n{i}"))
        .collect();
    let batch = ImportBatch {
        env: 1,
        documents: nodes
            .iter()
            .map(|n| import_doc(n, "astute", DocKind::Values, rhash! {"v" => 1}))
            .collect(),
        ..ImportBatch::default()
    };
    s.import(&batch).unwrap();
    assert_eq!(
        summary(&s.changes_since(start + 1).unwrap()),
        (start + 2, None)
    );
    // A log that no longer reaches back (pruned), and a reader ahead of
    // the store (the database was replaced).
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    s.put(&a, &rhash! {"v" => 2}).unwrap();
    s.put(&a, &rhash! {"v" => 3}).unwrap();
    let now = start + 4;
    assert_eq!(
        summary(&s.changes_since(now - 1).unwrap()),
        (now, docs(&[("astute", true)]))
    );
    s.execute_sql(
        "DELETE FROM changes WHERE generation < ?1",
        crate::store::sql::params![now as i64],
    )
    .unwrap();
    assert_eq!(summary(&s.changes_since(now - 2).unwrap()), (now, None));
    assert_eq!(
        summary(&s.changes_since(now - 1).unwrap()),
        (now, docs(&[("astute", true)]))
    );
    assert_eq!(summary(&s.changes_since(now + 5).unwrap()), (now, None));
}

fn an_unreadable_changed_document_makes_readers_reload() {
    let s = fuel();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    s.put(&a, &rhash! {"v" => 1}).unwrap();
    let since = s.generation().unwrap();
    s.put(&a, &rhash! {"v" => 2}).unwrap();
    s.execute_sql(
        "UPDATE documents SET content = '[1]' WHERE version = 2",
        &[],
    )
    .unwrap();
    let changes = s.changes_since(since).unwrap();
    let Changes::Everything { data, .. } = changes else {
        panic!("expected everything, got {:?}", summary(&changes));
    };
    assert_eq!(data.unreadable.len(), 1);
}

fn a_second_connection_sees_every_generation_in_order() {
    let db = Db::new();
    let writer = db.open();
    seed(writer.as_ref());
    let reader = db.open();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    let start = reader.generation().unwrap();
    for (seen, v) in (start..).zip(0..20_i64) {
        writer.put(&a, &rhash! {"v" => v}).unwrap();
        let changes = reader.changes_since(seen).unwrap();
        assert_eq!(changes.generation(), seen + 1);
        let Changes::Documents { documents, .. } = changes else {
            panic!("one document changed");
        };
        assert_eq!(*documents[0].1.as_ref().unwrap().content, rhash! {"v" => v});
    }
}

/// The registers a `Changes::Documents` names, as they are now.
fn registers(changes: Changes) -> Vec<(i64, String, Option<Vec<String>>)> {
    match changes {
        Changes::Documents { registers, .. } => registers,
        other => panic!("expected documents and registers, got {other:?}"),
    }
}

fn register_writes_take_a_generation_and_name_the_register() {
    let s = fuel();
    let start = s.generation().unwrap();
    s.add_to_register(1, "nodes", &names(&["n2", "n1"]))
        .unwrap();
    assert_eq!(s.generation().unwrap(), start + 1);
    assert_eq!(
        registers(s.changes_since(start).unwrap()),
        vec![(1, "nodes".to_owned(), Some(names(&["n1", "n2"])))]
    );
    // Writes that change no register take no generation.
    s.add_to_register(1, "nodes", &names(&["n1"])).unwrap();
    assert_eq!(
        s.remove_from_register(1, "nodes", &names(&["n9"])).unwrap(),
        0
    );
    assert!(s.add_to_register(1, "racks", &names(&["r"])).is_err());
    assert_eq!(s.generation().unwrap(), start + 1);
    // A document and two registers since: each once, as it is now.
    s.remove_from_register(1, "nodes", &names(&["n2"])).unwrap();
    s.put(
        &at(1, "nodes=n1", "astute", DocKind::Values),
        &rhash! {"v" => 1},
    )
    .unwrap();
    s.set_register(1, "role", Some(&[])).unwrap();
    s.add_to_register(1, "nodes", &names(&["n3"])).unwrap();
    let changes = s.changes_since(start + 1).unwrap();
    assert_eq!(changes.generation(), start + 5);
    assert_eq!(summary(&changes), (start + 5, docs(&[("astute", true)])));
    assert_eq!(
        registers(changes),
        vec![
            (1, "nodes".to_owned(), Some(names(&["n1", "n3"]))),
            (1, "role".to_owned(), Some(Vec::new())),
        ]
    );
    // Removing a register; replacing one with the same values is a write.
    s.set_register(1, "role", None).unwrap();
    s.set_register(1, "nodes", Some(&names(&["n1", "n3"])))
        .unwrap();
    assert_eq!(
        registers(s.changes_since(start + 5).unwrap()),
        vec![
            (1, "nodes".to_owned(), Some(names(&["n1", "n3"]))),
            (1, "role".to_owned(), None),
        ]
    );
    // A reload reads every register, of deleted environments too.
    let Changes::Everything { data, .. } = s.changes_since(0).unwrap() else {
        panic!("a first load is everything");
    };
    assert_eq!(
        data.registers,
        vec![(1, "nodes".to_owned(), names(&["n1", "n3"]))]
    );
    s.delete_environment(1).unwrap();
    let Changes::Everything { data, .. } = s.changes_since(0).unwrap() else {
        panic!("a first load is everything");
    };
    assert_eq!(data.registers.len(), 1);
    s.purge_environment(1).unwrap();
    let Changes::Everything { data, .. } = s.changes_since(0).unwrap() else {
        panic!("a first load is everything");
    };
    assert_eq!(data.registers, Vec::new());
}

both![
    register_writes_take_a_generation_and_name_the_register,
    every_write_takes_the_next_generation_and_names_what_it_changed,
    writes_that_change_nothing_a_snapshot_holds_take_no_generation,
    readers_reload_everything_when_documents_will_not_do,
    an_unreadable_changed_document_makes_readers_reload,
    a_second_connection_sees_every_generation_in_order,
];
