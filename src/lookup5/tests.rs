//! A small Puppet environment imported as `hierad import-environment`
//! imports it (`tree5::read`, then `ops::import_tree`), then looked up
//! in: `lookup_options` honoured and reserved, the node's level read, and
//! the refusals that change nothing. (`puppet lookup`'s own answers over
//! a larger tree: tests/oracle/hiera5_server.rs.)

use super::*;
use crate::configdb::HieraVersion;
use crate::ops::{self, Local, NewEnv, OpsError, TreeImport};
use crate::store::SqliteStore;
use crate::store::Store;
use crate::tree5;
use std::path::Path;
use std::sync::Arc;

/// [`super::lookup`] with no budget (what Puppet spends).
fn lookup(
    snapshot: &Snapshot,
    request: &Request5<'_>,
    key: &str,
) -> Result<Option<Value>, HieraError> {
    let mut unlimited = Meter::new(crate::hiera::budget::Budget::UNLIMITED);
    super::lookup(snapshot, request, key, &mut unlimited)
}

const HIERA: &str = "version: 5
defaults:
  datadir: data
  data_hash: yaml_data
hierarchy:
  - name: Nodes
    path: nodes/%{trusted.certname}.yaml
  - name: OS
    path: os/%{facts.os.family}.yaml
  - name: Common
    path: common.yaml
";

const FILES: [(&str, &str); 4] = [
    (
        "data/nodes/web1.example.com.yaml",
        "users: {alice: {uid: 1}}\nports: [80]\nname: web1\n",
    ),
    (
        "data/os/Debian.yaml",
        "users: {bob: {uid: 2}}\nports: [22]\nshell: \"%{lookup('name')}-sh\"\n",
    ),
    (
        "data/common.yaml",
        "lookup_options:\n  users: {merge: deep}\n  '^port.*': {merge: unique}\nusers: {root: {uid: 0}}\nports: [443]\nname: common\n",
    ),
    ("README.yaml", "not: read\n"),
];

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn control_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[("hiera.yaml", HIERA)]);
    write(dir.path(), &FILES);
    dir
}

fn import(store: &Arc<dyn Store>, dir: &Path, env: i64) -> Result<(), String> {
    let read = tree5::read(dir).map_err(|e| e.to_string())?;
    let local = Local::new(store.clone());
    let import = TreeImport {
        env,
        levels: &read.docs,
        kind: DocKind::Values,
        replace: false,
        register: true,
        new_env: NewEnv {
            levels: read.levels.clone(),
            component: format!("hiera5-{env}"),
            hiera: HieraVersion::Five,
        },
        define_up_front: false,
    };
    ops::import_tree(&local, &import, &|_| {
        Err(OpsError::Refused("exists".into()))
    })
    .map(|_| ())
    .map_err(|e| e.to_string())
}

fn store() -> Arc<dyn Store> {
    Arc::new(SqliteStore::open_in_memory().unwrap())
}

fn imported() -> Snapshot {
    let store = store();
    let dir = control_repo();
    import(&store, dir.path(), 7).unwrap();
    Snapshot::build(store.load_all().unwrap())
}

fn facts(certname: &str, family: &str) -> Hash {
    let yaml = format!(
        "clientcert: {certname}\nfqdn: {certname}\nhostname: x\ndomain: y\nos: {{family: {family}}}\n"
    );
    match crate::hiera::yaml::load(&yaml).unwrap() {
        Value::Hash(h) => h,
        _ => unreachable!(),
    }
}

fn look(snapshot: &Snapshot, facts: &Hash, key: &str, merge: Option<&Value>) -> Option<String> {
    let request = Request5 {
        env: 7,
        facts,
        merge,
    };
    lookup(snapshot, &request, key)
        .unwrap()
        .map(|v| crate::hiera::render::json::dump(&v))
}

#[test]
fn the_environment_is_hiera5_with_the_hierarchys_levels_and_registers() {
    let snapshot = imported();
    let env = snapshot.environment(7).unwrap();
    assert_eq!(env.hiera, HieraVersion::Five);
    assert_eq!(
        env.hierarchy_levels,
        ["facts.os.family", "trusted.certname"]
    );
    assert_eq!(
        snapshot.register(7, "trusted.certname"),
        Some(vec!["web1.example.com".to_owned()])
    );
}

#[test]
fn lookup_options_stored_as_data_are_honoured() {
    let snapshot = imported();
    let web1 = facts("web1.example.com", "Debian");
    assert_eq!(
        look(&snapshot, &web1, "users", None).as_deref(),
        Some(r#"{"root":{"uid":0},"bob":{"uid":2},"alice":{"uid":1}}"#)
    );
    // By regexp: `^port.*` merges unique.
    assert_eq!(
        look(&snapshot, &web1, "ports", None).as_deref(),
        Some("[80,22,443]")
    );
    // A merge given overrides them.
    let first = Value::str("first");
    assert_eq!(
        look(&snapshot, &web1, "ports", Some(&first)).as_deref(),
        Some("[80]")
    );
    assert_eq!(
        look(&snapshot, &web1, "shell", None).as_deref(),
        Some(r#""web1-sh""#)
    );
    // Another node reads common and its OS only.
    let db = facts("db1.example.com", "RedHat");
    assert_eq!(
        look(&snapshot, &db, "users", None).as_deref(),
        Some(r#"{"root":{"uid":0}}"#)
    );
    assert_eq!(
        look(&snapshot, &db, "name", None).as_deref(),
        Some(r#""common""#)
    );
}

#[test]
fn lookup_options_is_a_reserved_key() {
    let snapshot = imported();
    let web1 = facts("web1.example.com", "Debian");
    assert_eq!(look(&snapshot, &web1, "lookup_options", None), None);
    assert_eq!(look(&snapshot, &web1, "lookup_options.users", None), None);
}

#[test]
fn a_bad_merge_is_puppets_argument_error() {
    let snapshot = imported();
    let web1 = facts("web1.example.com", "Debian");
    let bad = Value::str("deeper");
    let request = Request5 {
        env: 7,
        facts: &web1,
        merge: Some(&bad),
    };
    let e = lookup(&snapshot, &request, "users").unwrap_err();
    assert_eq!(e.class, ErrorClass::ArgumentError);
    assert!(e.message.contains("deeper"), "{}", e.message);
}

/// Each refusal names its problem, and the store holds no environment
/// after it.
#[test]
fn hierarchies_with_no_form_are_refused_and_nothing_is_written() {
    for (hiera, files, expected) in [
        (
            "version: 5\nhierarchy:\n  - name: Globbed\n    glob: \"%{facts.a}/*.yaml\"\n",
            vec![],
            "hierarchy entry \"Globbed\": glob \"%{facts.a}/*.yaml\" interpolates",
        ),
        (
            "version: 5\nhierarchy:\n  - name: Nodes\n    path: \"nodes/%{trusted.certname}.yaml\"\n  - name: All\n    glob: \"*.yaml\"\n",
            vec![("data/nodes.yaml", "x: 1\n")],
            "hierarchy entry \"All\": its glob would keep it in resource \"nodes\"",
        ),
        (
            "version: 5\nhierarchy:\n  - name: A\n    glob: \"x/*.yaml\"\n  - name: B\n    glob: \"x/*.json\"\n",
            vec![("data/x/a.yaml", "x: 1\n"), ("data/x/a.json", "{}\n")],
            "would both be resource \"x/a\"",
        ),
        (
            "version: 5\nhierarchy:\n  - name: C\n    path: common.yaml\n",
            vec![(
                "modules/ntp/hiera.yaml",
                "version: 5\nhierarchy:\n  - {name: U, uri: \"http://x\", data_hash: yaml_data}\n",
            )],
            "module \"ntp\": hierarchy entry \"U\": it names no path",
        ),
        (
            "version: 5\nhierarchy:\n  - name: Two\n    path: \"%{facts.a}/%{facts.b}.yaml\"\n",
            vec![],
            "hierarchy entry \"Two\": path \"%{facts.a}/%{facts.b}.yaml\" interpolates more than one variable",
        ),
        (
            "version: 3\n:hierarchy: [common]\n",
            vec![],
            "reads a version 5 hiera.yaml",
        ),
        (
            "version: 5\nhierarchy:\n  - name: Nodes\n    path: \"nodes/%{trusted.certname}.yaml\"\n",
            vec![("data/nodes/a=b.yaml", "x: 1\n")],
            "nodes/a=b.yaml: its name cannot be a level value",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let hiera = hiera.replacen(
            "hierarchy:",
            "defaults: {data_hash: yaml_data}\nhierarchy:",
            1,
        );
        write(dir.path(), &[("hiera.yaml", &hiera)]);
        write(dir.path(), &files);
        let store = store();
        let e = import(&store, dir.path(), 3).unwrap_err();
        assert!(e.contains(expected), "{e}");
        assert!(store.environments().unwrap().is_empty(), "{e}");
    }
}

#[test]
fn an_existing_environment_is_refused_and_kept() {
    let store = store();
    let dir = control_repo();
    import(&store, dir.path(), 7).unwrap();
    let before = store.load_all().unwrap();
    assert_eq!(import(&store, dir.path(), 7).unwrap_err(), "exists");
    assert_eq!(store.load_all().unwrap(), before);
}

#[test]
fn a_kept_file_that_does_not_parse_fails_only_the_lookups_that_read_it() {
    let store = store();
    let dir = control_repo();
    write(
        dir.path(),
        &[("data/os/RedHat.yaml", "ports: [80\nname: x\n")],
    );
    import(&store, dir.path(), 7).unwrap();
    let snapshot = Snapshot::build(store.load_all().unwrap());
    let redhat = facts("db1.example.com", "RedHat");
    let request = Request5 {
        env: 7,
        facts: &redhat,
        merge: None,
    };
    let error = lookup(&snapshot, &request, "name").unwrap_err();
    assert!(
        error.message.starts_with("Unable to parse (") && error.message.contains("RedHat.yaml"),
        "{error:?}"
    );
    // A Debian node never reads it.
    let web1 = facts("web1.example.com", "Debian");
    assert_eq!(
        look(&snapshot, &web1, "ports", None).as_deref(),
        Some("[80,22,443]")
    );
}

/// What Puppet reads otherwise than Hiera 3: a YAML file that holds no
/// Hash is warned about and read as empty (kept unparsed, it fails no
/// lookup), and a file with aliases is data.
#[test]
fn files_hiera_3_refuses_are_read_as_puppet_reads_them() {
    let store = store();
    let dir = control_repo();
    write(
        dir.path(),
        &[
            ("data/os/RedHat.yaml", "- a list\n"),
            (
                "data/nodes/db1.example.com.yaml",
                "base: &base {port: 5432}\ndb_settings:\n  <<: *base\n  name: main\n",
            ),
        ],
    );
    import(&store, dir.path(), 7).unwrap();
    let snapshot = Snapshot::build(store.load_all().unwrap());
    let redhat = facts("db1.example.com", "RedHat");
    // Without the warning's reading, the list's level fails every lookup;
    // with it, the level reads as a family with no file does.
    let suse = facts("db1.example.com", "Suse");
    assert_eq!(
        look(&snapshot, &redhat, "ports", None),
        look(&snapshot, &suse, "ports", None)
    );
    assert!(look(&snapshot, &suse, "ports", None).is_some());
    assert_eq!(
        look(&snapshot, &redhat, "db_settings", None).as_deref(),
        Some(r#"{"port":5432,"name":"main"}"#)
    );
}

/// The module layer, a mapped level and a glob, as imported (answers as
/// Puppet gives them: tests/oracle/hiera5/layers.rs shows them on the
/// control repository).
#[test]
fn modules_mapped_paths_and_globs_are_read_where_they_were_kept() {
    let store = store();
    let dir = control_repo();
    let hiera = HIERA.replace(
        "  - name: Common\n",
        "  - name: Services\n    mapped_paths: [facts.services, s, \"svc/%{s}.yaml\"]\n  - name: Shared\n    glob: \"shared/*.yaml\"\n  - name: Common\n",
    );
    write(
        dir.path(),
        &[
            ("hiera.yaml", &hiera),
            ("data/svc/db.yaml", "ports: [5432]\n"),
            ("data/svc/web.yaml", "ports: [8080]\n"),
            ("data/shared/b.yaml", "motd: b\n"),
            ("data/shared/a.yaml", "motd: a\nntp::servers: [env]\n"),
            (
                "modules/ntp/hiera.yaml",
                "version: 5\nhierarchy:\n  - {name: C, path: common.yaml, data_hash: yaml_data}\n",
            ),
            (
                "modules/ntp/data/common.yaml",
                "lookup_options:\n  ntp::servers: {merge: unique}\nntp::servers: [mod]\nntp::only: 1\nports: [1]\n",
            ),
        ],
    );
    import(&store, dir.path(), 7).unwrap();
    let snapshot = Snapshot::build(store.load_all().unwrap());
    let mut web1 = facts("web1.example.com", "Debian");
    let services = Value::Array(vec![Value::str("web"), Value::str("db")]);
    web1.insert(Value::str("services"), services);
    let at = |key: &str| look(&snapshot, &web1, key, None);
    // The mapped level at each service, in order; the module's `ports`
    // (outside its namespace) never answers.
    assert_eq!(at("ports").as_deref(), Some("[80,22,8080,5432,443]"));
    // The glob's files in sorted order: a.yaml first.
    assert_eq!(at("motd").as_deref(), Some("\"a\""));
    // The module's key, and its lookup_options merging across layers.
    assert_eq!(at("ntp::only").as_deref(), Some("1"));
    assert_eq!(at("ntp::servers").as_deref(), Some("[\"env\",\"mod\"]"));
    assert_eq!(
        snapshot.resource_names(7).unwrap().collect::<Vec<_>>(),
        [
            "common",
            "hiera",
            "hiera-origin",
            "modules/ntp/common",
            "modules/ntp/hiera",
            "nodes",
            "os",
            "shared/a",
            "shared/b",
            "svc"
        ]
    );
}

/// The stored hiera.yaml is parsed once per snapshot, not per lookup;
/// a write (a new snapshot) reads the new one.
#[test]
fn the_hiera_yaml_is_parsed_once_per_snapshot() {
    let snapshot = imported();
    let first = SnapshotFiles::new(&snapshot, 7).unwrap();
    let again = SnapshotFiles::new(&snapshot, 7).unwrap();
    assert!(Arc::ptr_eq(&first.prepared, &again.prepared));
    // The kept config is the one a lookup would parse.
    let path = &first.prepared().config_path;
    assert!(first.config(path).is_some() && first.config("other.yaml").is_none());

    let web1 = facts("web1.example.com", "Debian");
    assert_eq!(
        look(&snapshot, &web1, "name", None).as_deref(),
        Some(r#""web1""#)
    );
    let common_only = "version: 5\ndefaults: {datadir: data, data_hash: yaml_data}\nhierarchy:\n  - name: Common\n    path: common.yaml\n";
    let Value::Hash(config) = crate::hiera::yaml::load(common_only).unwrap() else {
        unreachable!()
    };
    let version = crate::configdb::Version {
        number: 2,
        created_at: 0,
        size: 0,
        deleted: false,
        author: None,
    };
    let written = crate::configdb::snapshot::StoredDoc::new(version, Arc::new(config));
    let after = snapshot
        .with_document(
            7,
            &LevelPath::root(),
            CONFIG_RESOURCE,
            DocKind::Values,
            Some(written),
        )
        .unwrap();
    assert!(!Arc::ptr_eq(
        &SnapshotFiles::new(&after, 7).unwrap().prepared,
        &first.prepared
    ));
    assert_eq!(
        look(&after, &web1, "name", None).as_deref(),
        Some(r#""common""#)
    );
}
