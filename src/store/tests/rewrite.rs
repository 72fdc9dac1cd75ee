//! Rewriting every latest document in one transaction (`hierad secrets
//! rotate`): only changed documents get a version, by the author, in one
//! generation; a refusal writes nothing; concurrent writers lose nothing.

use super::*;

/// Marks every document holding key "secret" as rotated once more.
fn mark(_: &DocAddress, doc: &Hash) -> std::result::Result<Option<Hash>, String> {
    let Some(Value::Int(n)) = doc.get(&Value::str("secret")) else {
        return Ok(None);
    };
    let mut new = doc.clone();
    new.insert(Value::str("secret"), Value::Int(n + 1));
    Ok(Some(new))
}

fn only_changed_documents_get_a_version() {
    let s = fuel();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    let g = at(1, "", "globals", DocKind::Values);
    let gone = at(1, "", "globals", DocKind::Overrides);
    s.put(&a, &rhash! {"secret" => 1}).unwrap();
    s.put(&g, &rhash! {"plain" => 1}).unwrap();
    s.put(&gone, &rhash! {"secret" => 1}).unwrap();
    s.delete(&gone).unwrap();
    let before = s.generation().unwrap();
    let written = s.rewrite_latest(Some(1), &mut mark, Some("admin")).unwrap();
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].0, a);
    assert_eq!(s.generation().unwrap(), before + 1, "one generation");
    let (v, doc) = s.get(&a, None).unwrap().unwrap();
    assert_eq!((v.number, v.author.as_deref()), (2, Some("admin")));
    assert_eq!(doc, rhash! {"secret" => 2});
    assert_eq!(s.history(&g).unwrap().len(), 1, "no block, no version");
    assert_eq!(s.history(&gone).unwrap().len(), 2, "deleted: left alone");
    // Every environment, or one that does not exist.
    assert_eq!(s.rewrite_latest(None, &mut mark, None).unwrap().len(), 1);
    assert_error(
        s.rewrite_latest(Some(9), &mut mark, None),
        ErrorKind::NotFound,
        "environment 9",
    );
}

fn a_refusal_writes_nothing() {
    let s = fuel();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    let g = at(1, "", "globals", DocKind::Values);
    s.put(&a, &rhash! {"secret" => 1}).unwrap();
    s.put(&g, &rhash! {"secret" => 1, "bad" => true}).unwrap();
    let before = (s.generation().unwrap(), s.load_all().unwrap());
    let mut refuse = |at: &DocAddress, doc: &Hash| {
        if doc.contains_key(&Value::str("bad")) {
            return Err("cannot re-encrypt the value at bad".to_owned());
        }
        mark(at, doc)
    };
    assert_error(
        s.rewrite_latest(None, &mut refuse, Some("admin")),
        ErrorKind::Invalid,
        "the values of resource \"globals\" at the root of environment 1: cannot re-encrypt the value at bad; nothing was written",
    );
    assert_eq!(s.generation().unwrap(), before.0);
    assert_eq!(s.load_all().unwrap(), before.1);
    assert_eq!(s.history(&a).unwrap().len(), 1);
}

fn concurrent_writers_lose_nothing_to_a_rewrite() {
    use crate::configdb::keypath::{self, KeyPath};
    const WRITES: usize = 60;
    const REWRITES: usize = 10;
    let db = Db::new();
    seed(db.open().as_ref());
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    db.open().put(&a, &rhash! {"secret" => 0}).unwrap();
    let (db, a) = (&db, &a);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let own = db.open();
            for i in 0..WRITES {
                let key = KeyPath::parse(&format!("k{i}")).unwrap();
                own.update(a, &mut |doc| {
                    keypath::set(doc, &key, Value::Int(i as i64)).map_err(Into::into)
                })
                .unwrap();
            }
        });
        scope.spawn(move || {
            let own = db.open();
            for _ in 0..REWRITES {
                own.rewrite_latest(Some(1), &mut mark, Some("admin"))
                    .unwrap();
            }
        });
    });
    let s = db.open();
    let (v, doc) = s.get(a, None).unwrap().unwrap();
    assert_eq!(v.number, (1 + WRITES + REWRITES) as u64);
    assert_eq!(doc[&Value::str("secret")], Value::Int(REWRITES as i64));
    for i in 0..WRITES {
        assert_eq!(doc[&Value::str(format!("k{i}"))], Value::Int(i as i64));
    }
}

both![
    only_changed_documents_get_a_version,
    a_refusal_writes_nothing,
    concurrent_writers_lose_nothing_to_a_rewrite,
];
