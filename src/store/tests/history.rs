//! History: packed old versions read back, retention, imports.

use super::*;
use crate::configdb::Snapshot;
use crate::hiera::Value;
use crate::rhash;

pub(super) fn big_doc(kib: usize, changed: usize, value: i64) -> Hash {
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

/// Once, every write stored a full copy (20 one-key writes
/// to a 16 MiB document grew the database by 320 MiB).
fn history_is_packed_and_every_version_reads_back() {
    let s = fuel();
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
    // 41 versions of a 512 KiB document take a few times its size, not
    // 41 (PostgreSQL's size counts its catalogs too: the stored bytes).
    let stored = s
        .query_sql("SELECT sum(length(content)) + sum(coalesce(length(packed), 0)) FROM documents")
        .unwrap()[0]
        .int(0)
        .unwrap();
    assert!(
        (stored as u64) < 4 * doc_bytes,
        "{stored} bytes for 41 versions of {doc_bytes}"
    );
    if on() == On::Sqlite {
        let size = s.database_size().unwrap();
        assert!(
            size.bytes < 4 * doc_bytes,
            "{} bytes for 41 versions of {doc_bytes}",
            size.bytes
        );
    }
    // Only the latest is plain; the others are packed, most as deltas.
    let packings: Vec<(i64, i64)> = s
        .query_sql("SELECT version, packing FROM documents ORDER BY version")
        .unwrap()
        .iter()
        .map(|r| (r.int(0).unwrap(), r.int(1).unwrap()))
        .collect();
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
        register: false,
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
        register: false,
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

/// `hierad doctor`'s check reads every stored version, not only the
/// latest: a corrupt packed version is reported, with every older one
/// packed against it, and the check goes on to the other documents. (It
/// read only the latest versions: "no unreadable documents" while 12
/// versions of a history answered 500.)
fn every_unreadable_version_is_found_history_included() {
    let s = fuel();
    let a = at(1, "", "astute", DocKind::Values);
    let g = at(1, "nodes=n1", "globals", DocKind::Values);
    for n in 1..=20 {
        s.put(&a, &rhash! {"n" => n, "pad" => "x".repeat(200)})
            .unwrap();
    }
    s.put(&g, &rhash! {"g" => 1}).unwrap();
    s.put(&g, &rhash! {"g" => 2}).unwrap();
    let check = |s: &dyn Store| {
        let mut bad = Vec::new();
        let checked = s
            .check_versions(&mut |v| {
                bad.push((v.at.resource.clone(), v.version, v.latest, v.reason));
                Ok(())
            })
            .unwrap();
        (checked, bad)
    };
    let (checked, bad) = check(s.as_ref());
    assert_eq!(
        checked,
        crate::store::VersionsChecked {
            versions: 22,
            documents: 2
        }
    );
    assert!(bad.is_empty(), "{bad:?}");

    // Version 14 is a delta (16 is a keyframe): 13 down to 1 are packed
    // against it, each against the one above.
    s.execute_sql(
        "UPDATE documents SET packed = ?1 WHERE resource = 'astute' AND version = 14",
        crate::store::sql::params![&[0u8, 0x11, 0x22, 0x33][..]],
    )
    .unwrap();
    s.execute_sql(
        "UPDATE documents SET content = '[' WHERE resource = 'globals' AND version = 2",
        &[],
    )
    .unwrap();
    let (checked, bad) = check(s.as_ref());
    assert_eq!(checked.versions, 22);
    let numbers: Vec<u64> = bad.iter().map(|b| b.1).collect();
    assert_eq!(numbers, [14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 2]);
    assert_eq!(bad[0].3, "not a zstd frame");
    assert!(bad[1..14].iter().all(|b| b.0 == "astute"
        && !b.2
        && b.3 == "it is packed against a newer version that cannot be read"));
    assert_eq!(
        bad[14],
        (
            "globals".to_owned(),
            2,
            true,
            "it is not valid wire JSON".to_owned()
        )
    );
}

both![
    every_unreadable_version_is_found_history_included,
    history_is_packed_and_every_version_reads_back,
    retention_prunes_the_oldest_versions_only,
    import_writes_all_skips_unchanged_and_replaces,
    a_failed_import_leaves_nothing,
];
