//! Data files kept unparsed (configdb/unparsed.rs): imported, read back
//! as Hiera's error, versioned, packed, dumped and replayed, checked,
//! rotated past, and repaired by a write.

use super::*;
use crate::configdb::unparsed::{Unparsed, UnparsedDocument};
use crate::configdb::{ConfigError, Snapshot};
use crate::hiera::error::ErrorClass;
use crate::store::dump::Dumped;

fn file(path: &str, bytes: &[u8]) -> Content {
    Content::File(Unparsed {
        path: path.to_owned(),
        bytes: bytes.to_vec(),
    })
}

const BROKEN: &[u8] = b"key: [1\nother: 2\n";

/// Imports `astute` as a broken file and `globals` as data at
/// `nodes=n1` of a fresh Fuel store.
fn with_broken_astute() -> Box<dyn Store> {
    let s = fuel();
    s.set_register(1, "nodes", Some(&names(&["n1"]))).unwrap();
    let batch = ImportBatch {
        env: 1,
        documents: vec![
            ImportDoc {
                content: file("data/astute.yaml", BROKEN),
                ..import_doc("nodes=n1", "astute", DocKind::Values, Hash::default())
            },
            import_doc("nodes=n1", "globals", DocKind::Values, rhash! {"g" => 1}),
        ],
        ..ImportBatch::default()
    };
    let report = s.import(&batch).unwrap();
    assert_eq!(report.written.len(), 2);
    // The same files again: nothing new.
    assert_eq!(s.import(&batch).unwrap().unchanged.len(), 2);
    s
}

fn unparsed_error<T: std::fmt::Debug>(r: Result<T>) -> UnparsedDocument {
    match r {
        Err(StoreError::Config(ConfigError::Unparsed(doc))) => *doc,
        other => panic!("expected the file's error, got {other:?}"),
    }
}

fn kept_files_fail_the_reads_that_need_them_with_hieras_error() {
    let s = with_broken_astute();
    let astute = at(1, "nodes=n1", "astute", DocKind::Values);
    let doc = unparsed_error(s.get(&astute, None));
    assert_eq!(
        (doc.path.as_str(), doc.version, doc.error.class),
        ("data/astute.yaml", 1, ErrorClass::PsychSyntaxError)
    );
    assert!(
        doc.to_string().contains("holds data/astute.yaml as imported, which does not parse: Psych::SyntaxError: (<unknown>): did not find expected ',' or ']'"),
        "{doc}"
    );
    // A key's edit cannot start from a file that does not parse.
    let mut edit = |d: &mut Hash| {
        d.insert(Value::str("k"), Value::Int(1));
        Ok(())
    };
    unparsed_error(s.write_document(&astute, DocWrite::Update(&mut edit), WriteCtx::default()));

    let data = s.load_all().unwrap();
    assert!(data.unreadable.is_empty(), "{:?}", data.unreadable);
    assert_eq!(data.unparsed.len(), 1);
    assert_eq!(data.unparsed[0].at, astute);
    let snapshot = Snapshot::build(data);
    let n1 = path("nodes=n1");
    let e = snapshot.try_effective(1, &n1, "astute").unwrap_err();
    assert!(matches!(e, ConfigError::Unparsed(_)), "{e:?}");
    // What does not read the file answers: another resource, another
    // level value, the root.
    assert_eq!(
        *snapshot.try_effective(1, &n1, "globals").unwrap(),
        rhash! {"g" => 1}
    );
    for p in ["", "nodes=n2"] {
        assert!(snapshot.try_effective(1, &path(p), "astute").is_ok(), "{p}");
    }
}

fn a_write_over_a_kept_file_repairs_it_and_history_keeps_both() {
    let s = with_broken_astute();
    let astute = at(1, "nodes=n1", "astute", DocKind::Values);
    s.put(&astute, &rhash! {"key" => 1}).unwrap();
    s.put(&astute, &rhash! {"key" => 2}).unwrap();
    assert_eq!(
        s.get(&astute, None).unwrap().unwrap().1,
        rhash! {"key" => 2}
    );
    assert!(s.load_all().unwrap().unparsed.is_empty());
    // Version 1, packed by now, is still the file.
    assert_eq!(unparsed_error(s.get(&astute, Some(1))).version, 1);
    let history = s.history(&astute).unwrap();
    assert_eq!(history.len(), 3);
    assert_eq!(
        history[0].size,
        file("data/astute.yaml", BROKEN).to_stored().len()
    );
    // Restoring the file keeps it again, as it was.
    s.restore(&astute, 1).unwrap();
    let data = s.load_all().unwrap();
    assert_eq!(data.unparsed.len(), 1);
    assert_eq!(data.unparsed[0].version, 4);
    assert_eq!(
        unparsed_error(s.get(&astute, None)).path,
        "data/astute.yaml"
    );
}

fn dumps_checks_and_rotations_carry_kept_files_as_they_are() {
    let s = with_broken_astute();
    // Bytes that are not UTF-8 too.
    let latin = ImportBatch {
        env: 1,
        documents: vec![ImportDoc {
            content: file("/srv/data/globals.yaml", b"k: caf\xe9\n"),
            ..import_doc("", "globals", DocKind::Values, Hash::default())
        }],
        ..ImportBatch::default()
    };
    s.import(&latin).unwrap();
    let mut unreadable = Vec::new();
    let checked = s
        .check_versions(&mut |bad| {
            unreadable.push(bad);
            Ok(())
        })
        .unwrap();
    assert!(unreadable.is_empty(), "{unreadable:?}");
    assert_eq!(checked.versions, 3);

    let mut rows = Vec::new();
    s.dump(&mut |row| {
        rows.push(row);
        Ok(())
    })
    .unwrap();
    let files = rows
        .iter()
        .filter(|r| {
            matches!(
                r,
                Dumped::Version {
                    content: Some(Content::File(_)),
                    ..
                }
            )
        })
        .count();
    assert_eq!(files, 2);
    let copy = store();
    copy.replay(&mut rows.iter().cloned().map(Ok), false)
        .unwrap();
    assert_eq!(copy.load_all().unwrap(), s.load_all().unwrap());
    let root = at(1, "", "globals", DocKind::Values);
    let doc = unparsed_error(copy.get(&root, None));
    assert_eq!(doc.error.class, ErrorClass::PsychSyntaxError);
    assert!(doc.error.message.contains("invalid") || doc.error.message.contains("UTF-8"));

    // A rewrite of every latest document (eyaml rotation) leaves files be.
    let mut seen = Vec::new();
    let written = s
        .rewrite_latest(
            None,
            &mut |at, _| {
                seen.push(at.resource.clone());
                Ok(Some(rhash! {"rotated" => true}))
            },
            None,
        )
        .unwrap();
    assert_eq!(seen, ["globals"], "only nodes=n1's globals holds data");
    assert_eq!(written.len(), 1);
    assert_eq!(s.load_all().unwrap().unparsed.len(), 2);
}

fn a_file_that_parses_is_stored_as_its_data_whoever_sent_it() {
    let s = fuel();
    let batch = ImportBatch {
        env: 1,
        documents: vec![ImportDoc {
            content: file("data/astute.yaml", b"a: 1\n"),
            ..import_doc("", "astute", DocKind::Values, Hash::default())
        }],
        ..ImportBatch::default()
    };
    s.import(&batch).unwrap();
    let astute = at(1, "", "astute", DocKind::Values);
    assert_eq!(s.get(&astute, None).unwrap().unwrap().1, rhash! {"a" => 1});
    assert_eq!(s.kept_file(&astute).unwrap(), None);
    let data = s.load_all().unwrap();
    assert!(data.unparsed.is_empty() && data.unreadable.is_empty());
}

both![
    a_file_that_parses_is_stored_as_its_data_whoever_sent_it,
    kept_files_fail_the_reads_that_need_them_with_hieras_error,
    a_write_over_a_kept_file_repairs_it_and_history_keeps_both,
    dumps_checks_and_rotations_carry_kept_files_as_they_are,
];
