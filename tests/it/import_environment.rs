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
        "version: 5\ndefaults: {data_hash: yaml_data}\nhierarchy:\n  - name: Globbed\n    glob: \"%{facts.role}/*.yaml\"\n",
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
        message.contains("hierarchy entry \"Globbed\": glob \"%{facts.role}/*.yaml\" interpolates"),
        "{message}"
    );
    // Refused before the database was even opened.
    assert!(!db.exists());
}

#[test]
fn a_data_file_that_does_not_parse_is_kept_and_fails_only_its_lookups() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "hiera.yaml",
        "version: 5\ndefaults: {datadir: data, data_hash: yaml_data}\nhierarchy:\n  - name: OS\n    path: \"os/%{facts.os.family}.yaml\"\n  - name: Common\n    path: common.yaml\n",
    );
    write("data/os/RedHat.yaml", "ports: [80\n");
    write("data/os/Debian.yaml", "ports: [22]\n");
    write("data/common.yaml", "ports: [443]\nname: common\n");
    write("facts/redhat.yaml", "os: {family: RedHat}\n");
    write("facts/debian.yaml", "os: {family: Debian}\n");
    let server = TestServer::empty();
    let env_dir = dir
        .path()
        .join("data")
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let imported = binary::run(
        &[
            "import-environment",
            &env_dir,
            "--server",
            &server.url,
            "--env",
            "5",
        ][..],
    );
    assert!(imported.status.success(), "{imported:?}");
    let stderr = binary::text(&imported.stderr);
    assert!(
        stderr.contains("kept unparsed") && stderr.contains("RedHat.yaml"),
        "{stderr}"
    );
    let look = |facts: &str, key: &str| {
        let facts = dir.path().join(facts).to_string_lossy().into_owned();
        binary::run(
            &[
                "puppet-lookup",
                "--server",
                &server.url,
                "--env",
                "5",
                "--node",
                "n1",
                "--facts",
                &facts,
                key,
            ][..],
        )
    };
    let debian = look("facts/debian.yaml", "ports");
    assert_eq!(binary::text(&debian.stdout), "---\n- 22\n", "{debian:?}");
    // `puppet lookup` fails a lookup that reads a file it cannot parse
    // with status 1 and nothing printed (its message is a LookupError's);
    // the message itself: src/lookup5/tests.rs.
    let redhat = look("facts/redhat.yaml", "ports");
    assert_eq!(
        (redhat.status.code(), binary::text(&redhat.stdout)),
        (Some(1), String::new()),
        "{redhat:?}"
    );
    let name = look("facts/debian.yaml", "name");
    assert_eq!(binary::text(&name.stdout), "--- common\n", "{name:?}");
}

/// tests/fixtures/control-repo's modules, mapped level and glob through
/// a server, without Puppet (the answers are Puppet's:
/// tests/oracle/hiera5/layers.rs compares them with `puppet lookup`).
#[test]
fn modules_mapped_paths_and_globs_are_imported_and_answered() {
    let server = TestServer::empty();
    let fixture = format!("{ROOT}/tests/fixtures/control-repo");
    let args = [
        "import-environment",
        &fixture,
        "--server",
        &server.url,
        "--env",
        "8",
    ];
    let out = binary::output(binary::command(&args[..]), None);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    for line in [
        "imported 22 data file(s)",
        "registered 4 value(s) of level facts.services",
        "imported the module layer of apache, ntp",
        "left out module legacy: its hiera.yaml is not version 5, which Puppet ignores",
        "leaves out hierarchy entry \"Per-service data\": the shim reads no mapped_paths",
    ] {
        assert!(stderr.contains(line), "{line}: {stderr}");
    }
    assert!(
        stdout.contains("uris: [\"shared/10-base\",\"shared/20-site\"]")
            && !stdout.contains("services")
            && !stdout.contains("modules/"),
        "{stdout}"
    );
    let facts = format!("{fixture}/facts/web1.yaml");
    for (key, want) in [
        (
            "ntp::servers",
            r#"["env.pool.ntp.org","debian.pool.ntp.org","module.pool.ntp.org"]"#,
        ),
        ("ntp::package", r#""ntpsec""#),
        ("apache::port", "8080"),
        ("service::ports", "[80,22,8140]"),
        ("service::first", r#""nginx on web1.example.com""#),
        ("shared::motd", r#""base motto""#),
    ] {
        let got = binary::ok(
            &[
                "puppet-lookup",
                "--server",
                &server.url,
                "--env",
                "8",
                "--node",
                "web1.example.com",
                "--facts",
                &facts,
                "--render-as",
                "json",
                key,
            ][..],
        );
        assert_eq!(got.trim(), want, "{key}");
    }
}
