//! Unit tests of `bench/generate.rs`.

use super::*;
use std::collections::HashSet;

fn generate(nodes: usize, seed: u64) -> Result<Generated, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = Sources::read(&repo.join("tests/fixtures/fuel"), &repo.join("data")).unwrap();
    super::generate(&sources, nodes, seed)
}

fn doc<'g>(docs: &'g [(String, Hash)], name: &str) -> &'g Hash {
    &docs.iter().find(|(n, _)| n == name).unwrap().1
}

#[test]
fn node_keys_vary_and_shared_keys_are_shared() {
    let g = generate(60, 1).unwrap();
    assert_eq!(g.nodes.len(), 60);
    let astute = doc(&g.root, "astute");
    for key in NODE_KEYS {
        assert!(get(astute, key).is_none(), "{key} is per node");
    }
    let mut fqdns = HashSet::new();
    let mut schemes = HashSet::new();
    for node in &g.nodes {
        let own = doc(&node.docs, "astute");
        let keys: Vec<&str> = own.keys().filter_map(Value::as_str).collect();
        assert_eq!(keys.len(), NODE_KEYS.len(), "{keys:?}");
        assert_eq!(
            get(own, "fqdn").and_then(Value::as_str),
            Some(node.fqdn.as_str())
        );
        fqdns.insert(node.fqdn.clone());
        schemes.insert(crate::wire::to_string(get(own, "network_scheme").unwrap()));
        // No address of a fixture node survives in a generated node.
        let text = crate::wire::to_string(&Value::Hash(own.clone()));
        assert!(
            !text.contains("192.168.0.6") && !text.contains("node-126"),
            "{text}"
        );
    }
    assert_eq!(fqdns.len(), 60);
    assert_eq!(schemes.len(), 60, "every node has its own addresses");
    let roles: Vec<String> = g
        .nodes
        .iter()
        .take(5)
        .map(|n| crate::wire::to_string(get(doc(&n.docs, "astute"), "roles").unwrap()))
        .collect();
    assert_eq!(
        roles,
        [
            r#"["primary-controller"]"#,
            r#"["controller"]"#,
            r#"["controller"]"#,
            r#"["ceph-osd"]"#,
            r#"["ceph-osd"]"#
        ]
    );
}

#[test]
fn shared_lists_have_a_fixed_size() {
    for nodes in [3, 10, 1000] {
        let g = generate(nodes, 1).unwrap();
        let astute = doc(&g.root, "astute");
        let metadata = get(astute, "network_metadata").unwrap();
        let listed = get(metadata.as_hash().unwrap(), "nodes")
            .unwrap()
            .as_hash()
            .unwrap();
        assert_eq!(listed.len(), LISTED_NODES);
        let size = crate::wire::to_string(metadata).len();
        assert!(
            (45_000..70_000).contains(&size),
            "network_metadata is {size} B"
        );
        assert_eq!(
            get(astute, "nodes").unwrap().as_array().unwrap().len(),
            LISTED_NODES
        );
    }
}

#[test]
fn plan_and_hierarchy() {
    let g = generate(10, 1).unwrap();
    let hiera = doc(&g.root, "hiera");
    let levels = hiera.get(&Value::Symbol("hierarchy".into())).unwrap();
    assert_eq!(levels.as_array().unwrap().len(), 17);
    assert_eq!(g.plan.nodes.len(), 10);
    assert_eq!(g.plan.hierarchy.len(), 17);
    let class = |name: &str| g.plan.classes.iter().find(|c| c.name == name).unwrap();
    assert!(class("large").keys.contains(&"network_metadata".to_owned()));
    assert!(class("hash").keys.contains(&"nova".to_owned()));
    assert!(
        class("interpolated")
            .keys
            .contains(&"nova_internal_url".to_owned())
    );
    assert!(
        class("priority")
            .keys
            .contains(&"network_scheme".to_owned())
    );
    assert!(class("array").keys.contains(&"ntp_servers".to_owned()));
    // Fuel's `nodes` (about 12 KB) is a large answer, not a small array.
    assert!(class("large-array").keys.contains(&"nodes".to_owned()));
    assert!(!class("array").keys.contains(&"nodes".to_owned()));
    for c in &g.plan.classes {
        assert!(!c.keys.is_empty(), "class {} is empty", c.name);
    }
}

#[test]
fn same_seed_same_environment() {
    let a = generate(30, 5).unwrap();
    let b = generate(30, 5).unwrap();
    let c = generate(30, 6).unwrap();
    assert_eq!(a.root, b.root);
    assert_eq!(a.plan, b.plan);
    let overrides = |g: &Generated| -> Vec<String> {
        g.nodes
            .iter()
            .flat_map(|n| n.docs.iter().map(|(name, _)| name.clone()))
            .collect()
    };
    assert_eq!(overrides(&a), overrides(&b));
    assert_ne!(
        (doc(&a.root, "override/plugins"), overrides(&a)),
        (doc(&c.root, "override/plugins"), overrides(&c))
    );
}

#[test]
fn written_tree_reads_back_as_hiera_reads_it() {
    let g = generate(12, 3).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let written = write(&g, dir.path()).unwrap();
    let node_docs: usize = g.nodes.iter().map(|n| n.docs.len()).sum();
    assert_eq!(written.files, g.root.len() + node_docs + 1);
    let root = crate::tree::read_tree(&dir.path().join("root")).unwrap();
    assert_eq!(root.len(), g.root.len());
    for file in root {
        assert_eq!(
            file.content.data().unwrap(),
            doc(&g.root, &file.resource),
            "{}",
            file.resource
        );
    }
    let node = &g.nodes[4];
    let tree = crate::tree::read_tree(&dir.path().join("nodes").join(&node.fqdn)).unwrap();
    let names: Vec<&str> = tree.iter().map(|f| f.resource.as_str()).collect();
    let want: Vec<&str> = node.docs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), want.len());
    assert_eq!(tree[0].content.data().unwrap(), doc(&node.docs, "astute"));
    let plan: Plan =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(PLAN_FILE)).unwrap())
            .unwrap();
    assert_eq!(plan, g.plan);
}
