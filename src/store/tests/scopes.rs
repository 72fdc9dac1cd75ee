//! Node scopes: versions with author and time, deletion markers, and
//! clear errors for unknown environments, nodes and scopes.

use super::*;
use crate::store::shared::scopes::scope_from;

fn scope(json: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    scope_from(json).unwrap()
}

fn a_registered_node_keeps_versions_of_its_scope() {
    let s = fuel();
    s.set_register(1, "nodes", Some(&names(&["node-1", "node-2"])))
        .unwrap();
    let first = scope(serde_json::json!({"fqdn": "node-1", "role": "compute"}));
    let v1 = s.put_scope(1, "node-1", &first, Some("alice")).unwrap();
    assert_eq!(
        (v1.number, v1.author.as_deref(), v1.deleted),
        (1, Some("alice"), false)
    );
    let second = scope(serde_json::json!({"fqdn": "node-1", "nested": {"a": [1, 2.5, null]}}));
    s.put_scope(1, "node-1", &second, Some("bob")).unwrap();
    assert_eq!(s.scope(1, "node-1", None).unwrap().1, second);
    assert_eq!(s.scope(1, "node-1", Some(1)).unwrap().1, first);
    let deleted = s.delete_scope(1, "node-1", Some("carol")).unwrap();
    assert!(deleted.deleted);
    let history: Vec<(u64, Option<String>, bool)> = s
        .scope_history(1, "node-1")
        .unwrap()
        .into_iter()
        .map(|v| (v.number, v.author, v.deleted))
        .collect();
    assert_eq!(
        history,
        vec![
            (1, Some("alice".into()), false),
            (2, Some("bob".into()), false),
            (3, Some("carol".into()), true)
        ]
    );
    assert_error(
        s.scope(1, "node-1", None),
        ErrorKind::NotFound,
        "node \"node-1\" of environment 1 has no stored scope",
    );
    assert_error(
        s.delete_scope(1, "node-1", None),
        ErrorKind::NotFound,
        "has no stored scope",
    );
    assert_error(
        s.scope(1, "node-1", Some(9)),
        ErrorKind::NotFound,
        "has no stored scope",
    );
    s.put_scope(1, "node-2", &first, None).unwrap();
    assert_eq!(s.scope(1, "node-2", None).unwrap().1, first);
}

fn unknown_environments_nodes_and_bodies_are_refused() {
    let s = fuel();
    s.set_register(1, "nodes", Some(&names(&["node-1"])))
        .unwrap();
    let any = scope(serde_json::json!({}));
    assert_error(
        s.put_scope(1, "node-9", &any, None),
        ErrorKind::NotFound,
        "node \"node-9\" is not registered in environment 1: no level register lists it",
    );
    assert_error(
        s.put_scope(7, "node-1", &any, None),
        ErrorKind::NotFound,
        "environment 7",
    );
    assert_error(s.scope_history(1, "node-9"), ErrorKind::NotFound, "node-9");
    assert!(s.scope_history(1, "node-1").unwrap().is_empty());
    let e = scope_from(serde_json::json!([1])).unwrap_err().to_string();
    assert_eq!(
        e,
        "a node scope must be a JSON object of facts and scope variables, not an array"
    );
}

/// A scope write or deletion takes a generation (answers cached for the
/// last one must not be reused), logged as a `scope` change naming the
/// node, which a reader derives no snapshot change from.
fn scope_writes_take_a_generation() {
    let s = fuel();
    s.set_register(1, "nodes", Some(&names(&["node-1"])))
        .unwrap();
    let before = s.generation().unwrap();
    s.put_scope(1, "node-1", &scope(serde_json::json!({"a": 1})), None)
        .unwrap();
    assert_eq!(s.generation().unwrap(), before + 1);
    s.delete_scope(1, "node-1", None).unwrap();
    assert_eq!(s.generation().unwrap(), before + 2);
    let logged = s
        .query_sql("SELECT level, level_value, kind FROM changes WHERE resource IS NULL AND kind = 'scope'")
        .unwrap();
    assert_eq!(logged.len(), 2);
    let mut row = logged.into_iter().next().unwrap();
    assert_eq!(
        (row.text(0).unwrap(), row.text(1).unwrap()),
        ("nodes".to_owned(), "node-1".to_owned())
    );
}

/// The feed's scope rows name the version each write made, its author
/// and time, as document rows do; a document row beside them keeps its
/// own.
fn the_feed_names_each_scope_versions_author_and_time() {
    let s = fuel();
    s.set_register(1, "nodes", Some(&names(&["node-1"])))
        .unwrap();
    let since = s.generation().unwrap();
    let one = scope(serde_json::json!({"a": 1}));
    let v1 = s.put_scope(1, "node-1", &one, Some("alice")).unwrap();
    let doc = s
        .put(
            &at(1, "nodes=node-1", "astute", DocKind::Values),
            &rhash! {"k" => 1},
        )
        .unwrap();
    let v2 = s.put_scope(1, "node-1", &one, Some("bob")).unwrap();
    let v3 = s.delete_scope(1, "node-1", Some("carol")).unwrap();
    let (newest, logged) = s.logged_since(since, 100).unwrap();
    assert_eq!(newest, since + 4);
    let rows: Vec<_> = logged
        .iter()
        .map(|l| {
            let who = l.author.as_deref();
            (
                l.generation - since,
                l.kind.as_str(),
                l.value.as_str(),
                l.version,
                who,
                l.created_at,
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                1,
                "scope",
                "node-1",
                Some(1),
                Some("alice"),
                Some(v1.created_at)
            ),
            (
                2,
                "values",
                "node-1",
                Some(doc.number),
                None,
                Some(doc.created_at)
            ),
            (
                3,
                "scope",
                "node-1",
                Some(2),
                Some("bob"),
                Some(v2.created_at)
            ),
            (
                4,
                "scope",
                "node-1",
                Some(3),
                Some("carol"),
                Some(v3.created_at)
            ),
        ]
    );
}

both![
    the_feed_names_each_scope_versions_author_and_time,
    scope_writes_take_a_generation,
    a_registered_node_keeps_versions_of_its_scope,
    unknown_environments_nodes_and_bodies_are_refused,
];
