//! The store's level registers: their contract in `Store`, on
//! both engines.

use super::*;

/// Environments 1 and 2, levels [role, nodes], component "fuel".
fn seeded() -> Box<dyn Store> {
    let s = store();
    s.create_component(&NewComponent {
        id: None,
        name: "fuel".into(),
        resource_definitions: names(&["astute"]),
    })
    .unwrap();
    for id in [1, 2] {
        s.create_environment(&NewEnvironment {
            hiera: Default::default(),
            id: Some(id),
            components: vec![ComponentRef::Name("fuel".into())],
            hierarchy_levels: names(&["role", "nodes"]),
        })
        .unwrap();
    }
    s
}

#[track_caller]
fn refused<T: std::fmt::Debug>(r: Result<T>, kind: ErrorKind, msg: &str) {
    match r {
        Err(StoreError::Config(e)) => {
            assert_eq!(e.kind(), kind, "{e}");
            assert!(e.to_string().contains(msg), "{e} should contain {msg:?}");
        }
        other => panic!("expected a model error, got {other:?}"),
    }
}

fn registers_are_kept_per_environment_and_level() {
    let store = seeded();
    let s: &dyn Store = store.as_ref();
    assert_eq!(s.register(1, "nodes").unwrap(), None);
    assert_eq!(s.in_register(1, "nodes", "n1").unwrap(), None);
    assert_eq!(
        s.add_to_register(1, "nodes", &names(&["n2", "n1"]))
            .unwrap(),
        2
    );
    assert_eq!(
        s.add_to_register(1, "nodes", &names(&["n1", "n3"]))
            .unwrap(),
        1
    );
    assert_eq!(
        s.register(1, "nodes").unwrap(),
        Some(names(&["n1", "n2", "n3"]))
    );
    assert_eq!(s.in_register(1, "nodes", "n1").unwrap(), Some(true));
    assert_eq!(s.in_register(1, "nodes", "n9").unwrap(), Some(false));
    assert_eq!(s.register(1, "role").unwrap(), None);
    assert_eq!(s.register(2, "nodes").unwrap(), None);
    assert_eq!(
        s.remove_from_register(1, "nodes", &names(&["n3", "n9"]))
            .unwrap(),
        1
    );
    s.set_register(2, "nodes", Some(&names(&["n7"]))).unwrap();
    assert_eq!(s.registered_in("nodes", "n7").unwrap(), vec![2]);
    assert_eq!(s.registered_in("nodes", "n1").unwrap(), vec![1]);
    assert_eq!(s.registered_in("role", "n1").unwrap(), Vec::<i64>::new());
    // An empty register refuses every value; None removes it.
    s.set_register(1, "role", Some(&[])).unwrap();
    assert_eq!(s.register(1, "role").unwrap(), Some(vec![]));
    assert_eq!(s.in_register(1, "role", "any").unwrap(), Some(false));
    s.set_register(1, "role", None).unwrap();
    assert_eq!(s.register(1, "role").unwrap(), None);
    // Errors.
    refused(
        s.register(9, "nodes"),
        ErrorKind::NotFound,
        "environment 9 does not exist",
    );
    refused(
        s.add_to_register(1, "racks", &names(&["r"])),
        ErrorKind::NotFound,
        "level \"racks\" is not one of environment 1's levels [role, nodes]",
    );
    refused(
        s.add_to_register(1, "nodes", &names(&["a/b"])),
        ErrorKind::Invalid,
        "may not contain '/'",
    );
    refused(
        s.remove_from_register(1, "role", &names(&["x"])),
        ErrorKind::NotFound,
        "environment 1 keeps no register of level \"role\"",
    );
    // A refused call changed nothing.
    assert_eq!(s.register(1, "nodes").unwrap(), Some(names(&["n1", "n2"])));
}

fn paths_are_checked_against_the_registers() {
    let store = seeded();
    let s: &dyn Store = store.as_ref();
    // Without registers every path passes.
    s.check_registered(1, &path("role=r,nodes=anything"))
        .unwrap();
    s.add_to_register(1, "nodes", &names(&["n1"])).unwrap();
    s.add_to_register(2, "nodes", &names(&["n2"])).unwrap();
    s.check_registered(1, &path("nodes=n1")).unwrap();
    s.check_registered(1, &path("role=free,nodes=n1")).unwrap();
    s.check_registered(1, &LevelPath::root()).unwrap();
    refused(
        s.check_registered(1, &path("nodes=n9")),
        ErrorKind::NotFound,
        "Cannot find a node with the given identifier: \"n9\" is not in the register of level \"nodes\" of environment 1, nor of any other environment",
    );
    refused(
        s.check_registered(1, &path("role=r,nodes=n2")),
        ErrorKind::NotFound,
        "Node with the given ID not assigned to cluster with the given ID: \"n2\" is not in the register of level \"nodes\" of environment 1 (it is registered in environment 2)",
    );
    // A deleted environment's register no longer assigns; a purge removes
    // the register with the environment.
    s.delete_environment(2).unwrap();
    refused(
        s.check_registered(1, &path("nodes=n2")),
        ErrorKind::NotFound,
        "Cannot find a node",
    );
    s.purge_environment(2).unwrap();
    s.create_environment(&NewEnvironment {
        hiera: Default::default(),
        id: Some(2),
        components: vec![ComponentRef::Name("fuel".into())],
        hierarchy_levels: names(&["nodes"]),
    })
    .unwrap();
    assert_eq!(s.register(2, "nodes").unwrap(), None);
}

both![
    registers_are_kept_per_environment_and_level,
    paths_are_checked_against_the_registers,
];
