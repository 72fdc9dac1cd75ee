//! Components, environments, resource definitions: creating, deleting,
//! restoring, and the errors of each.

use super::*;
use crate::configdb::ResourceDefinition;

fn components_crud_and_errors() {
    let s = store();
    let fuel = s
        .create_component(&component("fuel", &["astute", "override/plugins"]))
        .unwrap();
    assert_eq!(fuel.name, "fuel");
    assert_eq!(
        fuel.resource_definitions
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["astute", "override/plugins"]
    );
    let explicit = s
        .create_component(&NewComponent {
            id: Some(42),
            ..component("plugin", &[])
        })
        .unwrap();
    assert_eq!(explicit.id, 42);
    assert_eq!(s.component(&ComponentRef::Id(fuel.id)).unwrap(), fuel);
    assert_eq!(
        s.component(&ComponentRef::Name("fuel".into())).unwrap(),
        fuel
    );
    assert_eq!(
        s.components().unwrap(),
        vec![fuel.clone(), explicit.clone()]
    );

    let taken = format!("a component named \"fuel\" already exists (id {})", fuel.id);
    let cases: Vec<(NewComponent, ErrorKind, &str)> = vec![
        (component("fuel", &[]), ErrorKind::Conflict, &taken),
        (
            NewComponent {
                id: Some(42),
                ..component("other", &[])
            },
            ErrorKind::Conflict,
            "component id 42 is already taken",
        ),
        (component("", &[]), ErrorKind::Invalid, "it is empty"),
        (component("123", &[]), ErrorKind::Invalid, "all digits"),
        (
            component("x", &["a", "a"]),
            ErrorKind::Invalid,
            "resource \"a\" is listed twice",
        ),
        (component("x", &["/a"]), ErrorKind::Invalid, "empty segment"),
    ];
    for (new, kind, msg) in cases {
        assert_error(s.create_component(&new), kind, msg);
    }
    assert_eq!(
        s.components().unwrap().len(),
        2,
        "failed creates left nothing"
    );

    assert_error(
        s.component(&ComponentRef::Id(7)),
        ErrorKind::NotFound,
        "component 7 does not exist",
    );
    assert_error(
        s.component(&ComponentRef::Name("nope".into())),
        ErrorKind::NotFound,
        "component \"nope\" does not exist",
    );

    let grown = s
        .add_resource_definitions(&ComponentRef::Id(42), &names(&["plugins/x"]))
        .unwrap();
    assert_eq!(grown.resource_definitions.len(), 1);
    assert_error(
        s.add_resource_definitions(&ComponentRef::Id(42), &names(&["plugins/x"])),
        ErrorKind::Conflict,
        "component \"plugin\" already defines resource \"plugins/x\"",
    );

    s.delete_component(&ComponentRef::Id(42)).unwrap();
    assert_error(
        s.delete_component(&ComponentRef::Id(42)),
        ErrorKind::NotFound,
        "component 42",
    );
    assert_eq!(s.components().unwrap(), vec![fuel]);
}

fn resource_names_clash_within_an_environment() {
    let s = fuel();
    s.create_component(&component("plugin", &["plugins/a"]))
        .unwrap();
    s.create_component(&component("dup", &["globals"])).unwrap();
    // Creating an environment with two definitions of "globals".
    assert_error(
        s.create_environment(&NewEnvironment {
            hiera: Default::default(),
            id: Some(2),
            components: vec![
                ComponentRef::Name("fuel".into()),
                ComponentRef::Name("dup".into()),
            ],
            hierarchy_levels: vec![],
        }),
        ErrorKind::Conflict,
        "resource \"globals\" would be defined twice in environment 2: by component \"fuel\" and by component \"dup\"",
    );
    assert_error(s.environment(2), ErrorKind::NotFound, "environment 2");
    // Growing a component used by an environment into a clash.
    s.create_environment(&NewEnvironment {
        hiera: Default::default(),
        id: Some(3),
        components: vec![
            ComponentRef::Name("fuel".into()),
            ComponentRef::Name("plugin".into()),
        ],
        hierarchy_levels: vec![],
    })
    .unwrap();
    assert_error(
        s.add_resource_definitions(
            &ComponentRef::Name("plugin".into()),
            &names(&["ok", "astute"]),
        ),
        ErrorKind::Conflict,
        "resource \"astute\" would be defined twice in environment 3",
    );
    let plugin = s.component(&ComponentRef::Name("plugin".into())).unwrap();
    assert_eq!(plugin.resource_definitions.len(), 1, "nothing added");
    // A component in use cannot be deleted.
    assert_error(
        s.delete_component(&ComponentRef::Name("plugin".into())),
        ErrorKind::Conflict,
        "component \"plugin\" is used by environment(s) 3",
    );
}

fn environments_crud_and_errors() {
    let s = fuel();
    let fuel_id = s.component(&ComponentRef::Name("fuel".into())).unwrap().id;
    s.create_component(&component("plugin", &["plugins/a"]))
        .unwrap();
    let env = s.environment(1).unwrap();
    assert_eq!(
        env,
        Environment {
            hiera: Default::default(),
            id: 1,
            components: vec![fuel_id],
            hierarchy_levels: names(&["role", "nodes"]),
        }
    );
    // Assigned id, components by id and name, level order kept.
    let auto = s
        .create_environment(&NewEnvironment {
            hiera: Default::default(),
            id: None,
            components: vec![
                ComponentRef::Name("plugin".into()),
                ComponentRef::Id(fuel_id),
            ],
            hierarchy_levels: names(&["z", "a", "m"]),
        })
        .unwrap();
    assert_eq!(auto.id, 2);
    assert_eq!(auto.hierarchy_levels, names(&["z", "a", "m"]));
    assert_eq!(auto.components.len(), 2);
    assert_eq!(auto.components[1], fuel_id);
    assert_eq!(s.environments().unwrap(), vec![env.clone(), auto.clone()]);

    let new = |id, components: Vec<ComponentRef>, levels: &[&str]| NewEnvironment {
        hiera: Default::default(),
        id,
        components,
        hierarchy_levels: names(levels),
    };
    let cases: Vec<(NewEnvironment, ErrorKind, &str)> = vec![
        (
            new(Some(1), vec![], &[]),
            ErrorKind::Conflict,
            "environment 1 already exists",
        ),
        (
            new(None, vec![ComponentRef::Id(99)], &[]),
            ErrorKind::NotFound,
            "component 99 does not exist",
        ),
        (
            new(None, vec![ComponentRef::Name("nope".into())], &[]),
            ErrorKind::NotFound,
            "component \"nope\" does not exist",
        ),
        (
            new(
                None,
                vec![ComponentRef::Id(fuel_id), ComponentRef::Name("fuel".into())],
                &[],
            ),
            ErrorKind::Conflict,
            "component \"fuel\" is listed twice",
        ),
        (
            new(None, vec![], &["nodes", "nodes"]),
            ErrorKind::Invalid,
            "level \"nodes\" is listed twice",
        ),
        (
            new(None, vec![], &["a/b"]),
            ErrorKind::Invalid,
            "may not contain '/'",
        ),
    ];
    for (n, kind, msg) in cases {
        assert_error(s.create_environment(&n), kind, msg);
    }
    assert_eq!(
        s.environments().unwrap().len(),
        2,
        "failed creates left nothing"
    );
    assert_error(
        s.environment(5),
        ErrorKind::NotFound,
        "environment 5 does not exist",
    );
    s.delete_environment(2).unwrap();
    assert_error(
        s.delete_environment(2),
        ErrorKind::NotFound,
        "environment 2",
    );
    assert_eq!(s.environments().unwrap(), vec![env]);
}

fn deleting_an_environment_is_restorable_and_purge_is_not() {
    let s = fuel();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    s.put(&a, &rhash! {"a" => 1}).unwrap();
    s.put(&a, &rhash! {"a" => 2}).unwrap();
    s.set_retention(
        1,
        &Retention {
            keep_versions: Some(5),
            keep_days: None,
        },
    )
    .unwrap();
    s.delete_environment(1).unwrap();
    assert!(s.load_all().unwrap().documents.is_empty());
    assert!(s.load_all().unwrap().environments.is_empty());
    assert!(s.environments().unwrap().is_empty());
    assert_error(
        s.get(&a, None),
        ErrorKind::NotFound,
        "environment 1 does not exist",
    );
    assert_error(
        s.put(&a, &Hash::default()),
        ErrorKind::NotFound,
        "environment 1 does not exist",
    );
    assert_error(
        s.delete_environment(1),
        ErrorKind::NotFound,
        "environment 1 does not exist",
    );
    let deleted = s.deleted_environments().unwrap();
    assert_eq!(deleted.len(), 1);
    assert_eq!(deleted[0].0.hierarchy_levels, names(&["role", "nodes"]));
    assert!(deleted[0].1 > 1_600_000_000);
    // Its id stays taken, with a way out named.
    let again = NewEnvironment {
        hiera: Default::default(),
        id: Some(1),
        components: vec![ComponentRef::Name("fuel".into())],
        hierarchy_levels: names(&["nodes"]),
    };
    assert_error(
        s.create_environment(&again),
        ErrorKind::Conflict,
        "environment 1 was deleted and can still be restored: restore it (POST /api/v1/config/environments/1/restore) or purge it",
    );
    // An assigned id never reuses it either.
    let other = s
        .create_environment(&NewEnvironment {
            id: None,
            ..again.clone()
        })
        .unwrap();
    assert_eq!(other.id, 2);
    // The component stays in use by it.
    assert_error(
        s.delete_component(&ComponentRef::Name("fuel".into())),
        ErrorKind::Conflict,
        "is used by environment(s) 1, 2; delete them first, and purge the deleted one(s) 1",
    );

    // Restore brings everything back: documents, history, retention.
    assert_error(
        s.restore_environment(2),
        ErrorKind::Conflict,
        "environment 2 is not deleted",
    );
    assert_error(
        s.restore_environment(9),
        ErrorKind::NotFound,
        "environment 9 does not exist",
    );
    let restored = s.restore_environment(1).unwrap();
    assert_eq!(restored.hierarchy_levels, names(&["role", "nodes"]));
    assert_eq!(s.get(&a, None).unwrap().unwrap().1, rhash! {"a" => 2});
    assert_eq!(s.get(&a, Some(1)).unwrap().unwrap().1, rhash! {"a" => 1});
    assert_eq!(s.load_all().unwrap().documents.len(), 1);
    assert_eq!(s.retention(1).unwrap().keep_versions, Some(5));
    assert!(s.deleted_environments().unwrap().is_empty());

    // Purge (live or deleted) removes it for good; the id is free again.
    s.delete_environment(1).unwrap();
    s.purge_environment(1).unwrap();
    s.purge_environment(2).unwrap();
    assert_error(
        s.purge_environment(1),
        ErrorKind::NotFound,
        "environment 1 does not exist",
    );
    assert_error(
        s.restore_environment(1),
        ErrorKind::NotFound,
        "environment 1 does not exist",
    );
    s.create_environment(&again).unwrap();
    assert_eq!(s.history(&a).unwrap(), vec![], "no history carried over");
    assert_eq!(s.put(&a, &rhash! {"a" => 3}).unwrap().number, 1);
}

/// A document of about `kib` KiB whose `changed` key holds `value`.
fn resource_definitions_keep_their_order() {
    let s = store();
    let c = s.create_component(&component("c", &["a", "b/c"])).unwrap();
    assert_eq!(
        c.resource_definitions,
        vec![
            ResourceDefinition {
                id: 1,
                name: "a".into(),
                content: Default::default(),
            },
            ResourceDefinition {
                id: 2,
                name: "b/c".into(),
                content: Default::default(),
            },
        ]
    );
}

both![
    components_crud_and_errors,
    resource_names_clash_within_an_environment,
    environments_crud_and_errors,
    deleting_an_environment_is_restorable_and_purge_is_not,
    resource_definitions_keep_their_order,
];
