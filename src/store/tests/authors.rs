//! Who wrote each version: every write records its author,
//! every read of a version gives it back, packed or not.

use super::*;

fn authors(s: &dyn Store, a: &DocAddress) -> Vec<(u64, Option<String>)> {
    s.history(a)
        .unwrap()
        .into_iter()
        .map(|v| (v.number, v.author))
        .collect()
}

fn every_write_records_its_author() {
    let s = fuel();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    let doc = rhash! {"k" => 1};
    let v1 = s
        .write_document(&a, DocWrite::Put(&doc), WriteCtx::by("alice"))
        .unwrap();
    assert_eq!(v1.author.as_deref(), Some("alice"));
    let mut edit = |d: &mut Hash| {
        d.insert(Value::str("k"), Value::Int(2));
        Ok(())
    };
    s.write_document(&a, DocWrite::Update(&mut edit), WriteCtx::by("bob"))
        .unwrap();
    // A conditional write carries its author too.
    let ctx = WriteCtx {
        author: Some("carol"),
        expected: Some(2),
    };
    s.write_document(&a, DocWrite::Delete, ctx).unwrap();
    s.write_document(&a, DocWrite::Restore(1), WriteCtx::by("local:dave"))
        .unwrap();
    // Unattributed (the tests' shorthand): None.
    s.put(&a, &doc).unwrap();
    let named = |n: u64, who: Option<&str>| (n, who.map(str::to_owned));
    assert_eq!(
        authors(s.as_ref(), &a),
        vec![
            named(1, Some("alice")),
            named(2, Some("bob")),
            named(3, Some("carol")),
            named(4, Some("local:dave")),
            named(5, None),
        ]
    );
    // Old versions are packed: reading one still names its author.
    let (v, _) = s.get(&a, Some(2)).unwrap().unwrap();
    assert_eq!(v.author.as_deref(), Some("bob"));
    let (v, _) = s.get(&a, Some(4)).unwrap().unwrap();
    assert_eq!(v.author.as_deref(), Some("local:dave"));
    // A stale conditional write records nothing.
    let stale = WriteCtx {
        author: Some("eve"),
        expected: Some(1),
    };
    assert!(s.write_document(&a, DocWrite::Put(&doc), stale).is_err());
    assert_eq!(authors(s.as_ref(), &a).len(), 5);
}

fn imports_record_their_author_on_writes_and_replacements() {
    let s = fuel();
    let n1 = at(1, "nodes=n1", "globals", DocKind::Values);
    s.write_document(
        &n1,
        DocWrite::Put(&rhash! {"g" => 1}),
        WriteCtx::by("alice"),
    )
    .unwrap();
    let batch = ImportBatch {
        env: 1,
        documents: vec![ImportDoc {
            path: path("nodes=n1"),
            resource: "astute".into(),
            kind: DocKind::Values,
            content: crate::configdb::unparsed::Content::Data(rhash! {"a" => 1}),
        }],
        replace: vec![(path("nodes=n1"), DocKind::Values)],
        define_missing_in: None,
        author: Some("importer".into()),
        register: false,
    };
    let report = s.import(&batch).unwrap();
    assert_eq!(report.written[0].1.author.as_deref(), Some("importer"));
    assert_eq!(report.deleted[0].1.author.as_deref(), Some("importer"));
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    assert_eq!(
        authors(s.as_ref(), &a),
        vec![(1, Some("importer".to_owned()))]
    );
    assert_eq!(
        authors(s.as_ref(), &n1),
        vec![
            (1, Some("alice".to_owned())),
            (2, Some("importer".to_owned()))
        ]
    );
    // The snapshot's latest versions name their authors as well.
    let loaded = s.load_all().unwrap();
    assert_eq!(loaded.documents.len(), 1);
    assert_eq!(
        loaded.documents[0].version.author.as_deref(),
        Some("importer")
    );
}

both![
    every_write_records_its_author,
    imports_record_their_author_on_writes_and_replacements,
];
