//! `hierad import-environment` through the binary: Fuel's /etc/hiera (a
//! version 3 hiera.yaml: the sample, data/) becomes a Hiera 3
//! environment answered as `hierad lookup` answers over the files; a
//! hierarchy with no form in hierad is refused naming its entry, before
//! the database is opened. (Hiera 5 directories against the real
//! `puppet lookup`: tests/oracle/hiera5/server.rs.)

use crate::binary::{self, ROOT};
use crate::server::TestServer;

const NODES: [&str; 3] = [
    "node-126.test.domain.local",
    "node-127.test.domain.local",
    "node-128.test.domain.local",
];

const KEYS: [&str; 12] = [
    "nova",
    "use_syslog",
    "management_vip",
    "network_metadata",
    "keystone_hash",
    "node_name",
    "primary_role",
    "configuration",
    "plugins",
    "dns_nameservers",
    "memcached_servers",
    "no_such_key",
];

#[test]
fn fuels_etc_hiera_answers_as_hiera_over_its_files() {
    let server = TestServer::empty();
    let data = format!("{ROOT}/data");
    let printed = binary::ok(
        &[
            "import-environment",
            &data,
            "--server",
            &server.url,
            "--env",
            "9",
        ][..],
    );
    assert!(printed.contains(":backends:\n- hierad\n"), "{printed}");
    assert!(printed.contains(":environment: 9"), "{printed}");
    let mut compared = 0;
    for node in NODES {
        let fqdn = format!("::fqdn={node}");
        for key in KEYS {
            let files = binary::run(&["lookup", "-c", "data/hiera.yaml", key, &fqdn][..]);
            let served =
                binary::run(&["lookup", "--server", &server.url, "--env", "9", key, &fqdn][..]);
            assert_eq!(
                (served.status.code(), binary::text(&served.stdout)),
                (files.status.code(), binary::text(&files.stdout)),
                "{node} {key}"
            );
            compared += usize::from(files.status.success() && files.stdout.len() > 4);
        }
    }
    assert!(compared >= 30, "only {compared} lookups found something");
}

#[test]
fn a_hierarchy_with_no_form_is_refused_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hiera.yaml"),
        "version: 5\ndefaults: {data_hash: yaml_data}\nhierarchy:\n  - name: Globbed\n    glob: \"nodes/*.yaml\"\n",
    )
    .unwrap();
    let db = dir.path().join("h.db");
    let (env_dir, db_arg) = (dir.path().to_string_lossy(), db.to_string_lossy());
    let message = binary::refused(
        &[
            "import-environment",
            &env_dir,
            "--db",
            &db_arg,
            "--env",
            "4",
        ][..],
    );
    assert!(
        message.contains("hierarchy entry \"Globbed\": glob and globs have no form in hierad"),
        "{message}"
    );
    // Refused before the database was even opened.
    assert!(!db.exists());
}
