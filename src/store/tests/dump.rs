//! Dump and replay (`hierad migrate`): a replayed copy dumps
//! the same (counts and checksum), reads the same through every method
//! (authors included),
//! is packed as the source is; a store that is not empty is refused, and a
//! replay that fails writes nothing.

use super::history::big_doc;
use super::*;
use crate::configdb::HieraVersion;
use crate::store::dump::{self, Dumped};

/// Every kind of row: a definition's content, retention, a register, a
/// deleted environment, 22 versions of a large document with a deletion
/// marker among them (packed as deltas and keyframes), overrides.
fn filled() -> Box<dyn Store> {
    let s = fuel();
    let content: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(r#"{"schema": {"type": "object"}, "owner": "ops"}"#).unwrap();
    s.set_resource_content(&ComponentRef::Name("fuel".into()), "astute", &content)
        .unwrap();
    s.set_retention(
        1,
        &Retention {
            keep_versions: Some(30),
            keep_days: None,
        },
    )
    .unwrap();
    let g = at(1, "", "globals", DocKind::Values);
    for i in 0..20 {
        s.put(&g, &big_doc(8, 1, i)).unwrap();
    }
    s.delete(&g).unwrap();
    s.put(&g, &rhash! {"back" => true}).unwrap();
    s.write_document(
        &at(1, "nodes=node-1", "astute", DocKind::Overrides),
        DocWrite::Put(&rhash! {"x" => 2}),
        WriteCtx::by("alice"),
    )
    .unwrap();
    s.set_register(1, "nodes", Some(&names(&["node-1", "node-2"])))
        .unwrap();
    let scope = |v: serde_json::Value| crate::store::scope_from(v).unwrap();
    s.put_scope(
        1,
        "node-1",
        &scope(serde_json::json!({"role": "db"})),
        Some("alice"),
    )
    .unwrap();
    s.delete_scope(1, "node-1", None).unwrap();
    s.put_scope(
        1,
        "node-1",
        &scope(serde_json::json!({"role": "web"})),
        None,
    )
    .unwrap();
    s.put_scope(1, "node-2", &scope(serde_json::json!({})), Some("bob"))
        .unwrap();
    s.create_tag("deploy-1", None, Some("carol")).unwrap();
    s.create_environment(&NewEnvironment {
        hiera: Default::default(),
        id: Some(2),
        components: vec![ComponentRef::Name("fuel".into())],
        hierarchy_levels: vec![],
    })
    .unwrap();
    s.put(
        &at(2, "", "globals", DocKind::Values),
        &rhash! {"gone" => "soon"},
    )
    .unwrap();
    s.delete_environment(2).unwrap();
    s
}

fn rows(s: &dyn Store) -> Vec<Dumped> {
    let mut rows = Vec::new();
    s.dump(&mut |row| {
        rows.push(row);
        Ok(())
    })
    .unwrap();
    rows
}

fn replay(s: &dyn Store, rows: &[Dumped], replace: bool) -> Result<()> {
    s.replay(&mut rows.iter().cloned().map(Ok), replace)
}

fn a_replayed_copy_dumps_and_reads_the_same() {
    let source = filled();
    let copy = store();
    let dumped = rows(source.as_ref());
    replay(copy.as_ref(), &dumped, false).unwrap();
    let (a, b) = (
        dump::tally(source.as_ref()).unwrap(),
        dump::tally(copy.as_ref()).unwrap(),
    );
    assert_eq!(a.checksum(), b.checksum());
    assert_eq!(a.counts(), b.counts());
    assert_eq!(
        a.counts().map(|(_, n)| n),
        [1, 3, 2, 1, 1, 2, 3, 24, 1, 4, 1],
        "{:?}",
        a.counts()
    );
    assert_eq!(rows(copy.as_ref()), dumped);
    // Every version, as `get` and `history` read it.
    for row in &dumped {
        if let Dumped::Version {
            env,
            level,
            value,
            resource,
            kind,
            version,
            ..
        } = row
        {
            if *env == 2 {
                continue; // deleted: no reads until restored
            }
            let p = if level.is_empty() {
                String::new()
            } else {
                format!("{level}={value}")
            };
            let doc = at(*env, &p, resource, *kind);
            assert_eq!(
                copy.get(&doc, Some(version.number)).unwrap(),
                source.get(&doc, Some(version.number)).unwrap()
            );
            assert_eq!(copy.history(&doc).unwrap(), source.history(&doc).unwrap());
        }
    }
    assert_eq!(copy.load_all().unwrap(), source.load_all().unwrap());
    // Node scopes with their history, and tags, as the source has them;
    // the copy's generations go on past the tag's.
    for node in ["node-1", "node-2"] {
        assert_eq!(
            copy.scope_history(1, node).unwrap(),
            source.scope_history(1, node).unwrap()
        );
        assert_eq!(
            copy.scope(1, node, None).unwrap(),
            source.scope(1, node, None).unwrap()
        );
    }
    assert_eq!(copy.tags().unwrap(), source.tags().unwrap());
    assert!(copy.generation().unwrap() > source.tag("deploy-1").unwrap().generation);
    assert_eq!(
        copy.deleted_environments().unwrap(),
        source.deleted_environments().unwrap()
    );
    assert_eq!(copy.retention(1).unwrap(), source.retention(1).unwrap());
    assert_eq!(
        copy.register(1, "nodes").unwrap(),
        Some(names(&["node-1", "node-2"]))
    );
    assert_eq!(copy.components().unwrap(), source.components().unwrap());
    // Packed as the source: the same packing for every row.
    let packings = |s: &dyn Store| -> Vec<(i64, i64)> {
        s.query_sql(
            "SELECT version, packing FROM documents
             WHERE resource = 'globals' AND environment_id = 1 ORDER BY version",
        )
        .unwrap()
        .iter()
        .map(|r| (r.int(0).unwrap(), r.int(1).unwrap()))
        .collect()
    };
    assert_eq!(packings(copy.as_ref()), packings(source.as_ref()));
    // Authors come along.
    let overrides = at(1, "nodes=node-1", "astute", DocKind::Overrides);
    assert_eq!(
        copy.history(&overrides).unwrap()[0].author.as_deref(),
        Some("alice")
    );
    // Servers on the copy reload; the restored environment comes back whole.
    assert!(copy.generation().unwrap() > 0);
    copy.restore_environment(2).unwrap();
    assert_eq!(
        copy.get(&at(2, "", "globals", DocKind::Values), None)
            .unwrap()
            .unwrap()
            .1,
        rhash! {"gone" => "soon"}
    );
    // Writes go on from the copied numbers.
    let g = at(1, "", "globals", DocKind::Values);
    assert_eq!(copy.put(&g, &rhash! {"next" => 1}).unwrap().number, 23);
}

fn replay_refuses_a_store_that_is_not_empty_and_a_failure_writes_nothing() {
    let dumped = rows(filled().as_ref());
    let target = fuel();
    let before = dump::tally(target.as_ref()).unwrap().checksum();
    assert_error(
        replay(target.as_ref(), &dumped, false),
        ErrorKind::Conflict,
        "already holds components or environments",
    );
    // A source that fails half way: nothing written, even with replace.
    let mut broken = dumped
        .iter()
        .take(5)
        .cloned()
        .map(Ok)
        .chain(std::iter::once(Err(StoreError::Database("gone".into()))));
    assert!(matches!(
        target.replay(&mut broken, true),
        Err(StoreError::Database(_))
    ));
    assert_eq!(dump::tally(target.as_ref()).unwrap().checksum(), before);
    // Versions out of order are refused.
    let mut reversed = dumped.clone();
    let first = reversed
        .iter()
        .position(|r| matches!(r, Dumped::Version { .. }))
        .unwrap();
    reversed.swap(first, first + 1);
    let (kind, text) = match replay(store().as_ref(), &reversed, false) {
        Err(StoreError::Corrupt { what, reason }) => (what, reason),
        other => panic!("{other:?}"),
    };
    assert!(text.contains("newest first"), "{kind}: {text}");
    replay(target.as_ref(), &dumped, true).unwrap();
    assert_eq!(rows(target.as_ref()), dumped);
}

/// A Hiera 5 environment reads back as one, and a replayed copy keeps
/// it so (its checksum line says so: a copy that lost it would differ).
fn a_hiera5_environment_is_kept_by_the_store_and_its_copies() {
    let source = fuel();
    source
        .create_environment(&NewEnvironment {
            id: Some(5),
            components: vec![ComponentRef::Name("fuel".into())],
            hierarchy_levels: vec!["trusted.certname".into()],
            hiera: HieraVersion::Five,
        })
        .unwrap();
    assert_eq!(source.environment(5).unwrap().hiera, HieraVersion::Five);
    assert_eq!(source.environment(1).unwrap().hiera, HieraVersion::Three);
    let copy = store();
    replay(copy.as_ref(), &rows(source.as_ref()), false).unwrap();
    assert_eq!(copy.environment(5).unwrap().hiera, HieraVersion::Five);
    let (a, b) = (
        dump::tally(source.as_ref()).unwrap(),
        dump::tally(copy.as_ref()).unwrap(),
    );
    assert_eq!(a.checksum(), b.checksum());
}

both![
    a_hiera5_environment_is_kept_by_the_store_and_its_copies,
    a_replayed_copy_dumps_and_reads_the_same,
    replay_refuses_a_store_that_is_not_empty_and_a_failure_writes_nothing,
];
