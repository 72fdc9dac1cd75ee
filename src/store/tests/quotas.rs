//! Quotas (store/quota.rs): a document's size and an environment's total
//! of latest documents, checked by every document write in its
//! transaction; the running total kept exact through puts, edits,
//! deletes, imports and a replayed copy.

use super::*;
use crate::configdb::OverQuota;
use crate::store::dump::Dumped;

/// A document whose stored encoding takes exactly `bytes` bytes.
fn doc_of(bytes: usize) -> Hash {
    // {"k":"…"} is 8 bytes around the string.
    let d = rhash! {"k" => "x".repeat(bytes - 8)};
    assert_eq!(size_of(&d), bytes);
    d
}

fn size_of(d: &Hash) -> usize {
    crate::wire::to_string(&Value::Hash(d.clone())).len()
}

/// The running total of environment `env`.
fn live_bytes(s: &dyn Store, env: i64) -> i64 {
    s.query_sql(&format!(
        "SELECT live_bytes FROM environments WHERE id = {env}"
    ))
    .unwrap()[0]
        .int(0)
        .unwrap()
}

/// The total counted the slow way, from the heads.
fn summed(s: &dyn Store, env: i64) -> i64 {
    s.query_sql(&format!(
        "SELECT CAST(coalesce(sum(d.size), 0) AS BIGINT) FROM heads h JOIN documents d USING
             (environment_id, level, level_value, resource, kind, version)
         WHERE h.environment_id = {env} AND d.deleted = 0"
    ))
    .unwrap()[0]
        .int(0)
        .unwrap()
}

fn over_quota<T: std::fmt::Debug>(r: Result<T>) -> OverQuota {
    match r {
        Err(StoreError::Config(ConfigError::OverQuota(over))) => over,
        other => panic!("expected OverQuota, got {other:?}"),
    }
}

fn a_document_over_the_limit_is_refused_by_every_write() {
    let s = fuel();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    // Written before the limit: a restore of it is a write like any other.
    s.put(&a, &doc_of(300)).unwrap();
    s.put(&a, &doc_of(100)).unwrap();
    s.set_quotas(Quotas {
        document_bytes: 200,
        environment_bytes: 0,
    });
    let before = s.history(&a).unwrap();

    s.put(&a, &doc_of(200)).unwrap();
    let before_refusals = s.history(&a).unwrap();
    assert_eq!(before_refusals.len(), before.len() + 1);
    let refused = over_quota(s.put(&a, &doc_of(201)));
    assert_eq!(
        refused,
        OverQuota::Document {
            doc: a.clone(),
            size: 201,
            limit: 200
        }
    );
    assert_error(
        s.put(&a, &doc_of(201)),
        ErrorKind::OverQuota,
        "the values of resource \"astute\" at nodes=n1 of environment 1 would take 201 bytes, over the limit of 200 bytes a document may take (hierad serve --max-document-mib); nothing was stored",
    );
    over_quota(s.update(&a, &mut |d| {
        d.insert(Value::from("more"), Value::from("y"));
        Ok(())
    }));
    over_quota(s.restore(&a, 1));
    let batch = ImportBatch {
        env: 1,
        documents: vec![
            import_doc("nodes=n2", "astute", DocKind::Values, doc_of(50)),
            import_doc("nodes=n1", "astute", DocKind::Overrides, doc_of(250)),
        ],
        ..ImportBatch::default()
    };
    over_quota(s.import(&batch));
    assert_eq!(s.history(&a).unwrap(), before_refusals, "nothing written");
    let n2 = at(1, "nodes=n2", "astute", DocKind::Values);
    assert_eq!(s.history(&n2).unwrap(), vec![], "the import wrote nothing");
    assert_eq!(live_bytes(s.as_ref(), 1), 200);
    // Deleting is never refused; 0 is no limit.
    s.delete(&a).unwrap();
    s.set_quotas(Quotas::default());
    s.put(&a, &doc_of(5000)).unwrap();
}

fn the_environment_total_is_kept_and_bounded() {
    let s = fuel();
    s.create_environment(&NewEnvironment {
        hiera: Default::default(),
        id: Some(2),
        components: vec![ComponentRef::Name("fuel".into())],
        hierarchy_levels: names(&["nodes"]),
    })
    .unwrap();
    s.set_quotas(Quotas {
        document_bytes: 0,
        environment_bytes: 1000,
    });
    let n1 = at(1, "nodes=n1", "astute", DocKind::Values);
    let n1o = at(1, "nodes=n1", "astute", DocKind::Overrides);
    let root = at(1, "", "globals", DocKind::Values);
    s.put(&n1, &doc_of(300)).unwrap();
    s.put(&n1o, &doc_of(200)).unwrap();
    s.put(&root, &doc_of(400)).unwrap();
    assert_eq!(live_bytes(s.as_ref(), 1), 900);
    // Rewriting replaces the old size; deleting takes it away.
    s.put(&n1, &doc_of(100)).unwrap();
    assert_eq!(live_bytes(s.as_ref(), 1), 700);
    s.delete(&n1o).unwrap();
    assert_eq!(live_bytes(s.as_ref(), 1), 500);
    s.put(&n1o, &doc_of(450)).unwrap();
    assert_eq!(live_bytes(s.as_ref(), 1), 950);
    assert_eq!(live_bytes(s.as_ref(), 1), summed(s.as_ref(), 1));

    // Past the total: refused, with the total it would have made.
    assert_eq!(
        over_quota(s.put(&n1, &doc_of(151))),
        OverQuota::Environment {
            doc: n1.clone(),
            size: 151,
            total: 1001,
            limit: 1000
        }
    );
    s.put(&n1, &doc_of(150)).unwrap();
    assert_eq!(live_bytes(s.as_ref(), 1), 1000);
    // Another environment has its own total.
    s.put(&at(2, "nodes=n1", "astute", DocKind::Values), &doc_of(900))
        .unwrap();

    // An import that crosses it writes none of its documents, even those
    // before the one that crossed.
    let history = |s: &dyn Store| [&n1, &n1o, &root].map(|a| s.history(a).unwrap()).to_vec();
    let before = history(s.as_ref());
    s.set_quotas(Quotas {
        document_bytes: 0,
        environment_bytes: 1200,
    });
    let batch = ImportBatch {
        env: 1,
        documents: vec![
            import_doc("nodes=n1", "astute", DocKind::Values, doc_of(50)),
            import_doc("nodes=n2", "globals", DocKind::Values, doc_of(100)),
            import_doc("", "astute", DocKind::Values, doc_of(300)),
        ],
        ..ImportBatch::default()
    };
    let over = over_quota(s.import(&batch));
    assert!(
        matches!(
            over,
            OverQuota::Environment {
                total: 1300,
                limit: 1200,
                ..
            }
        ),
        "{over:?}"
    );
    assert_eq!(history(s.as_ref()), before);
    assert_eq!(live_bytes(s.as_ref(), 1), 1000);

    // Over a lowered limit, a write that does not grow the total passes.
    s.set_quotas(Quotas {
        document_bytes: 0,
        environment_bytes: 500,
    });
    s.put(&n1, &doc_of(140)).unwrap();
    s.put(&n1o, &doc_of(450)).unwrap();
    over_quota(s.put(&n1o, &doc_of(451)));
    assert_eq!(live_bytes(s.as_ref(), 1), 990);

    // A replayed copy counts its totals anew.
    let mut rows = Vec::new();
    s.dump(&mut |row: Dumped| {
        rows.push(row);
        Ok(())
    })
    .unwrap();
    let copy = store();
    copy.replay(&mut rows.into_iter().map(Ok), false).unwrap();
    assert_eq!(live_bytes(copy.as_ref(), 1), 990);
    assert_eq!(live_bytes(copy.as_ref(), 2), 900);
}

both![
    a_document_over_the_limit_is_refused_by_every_write,
    the_environment_total_is_kept_and_bounded,
];
