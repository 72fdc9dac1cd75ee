//! Use case 4 of docs/spec/configdb-api.md with the real `hiera` command and the shim:
//! "hiera deployment_id --yaml test_scope.yaml" on a Puppet master whose
//! Hiera reads the hierad server (the built-in sample, environment 1),
//! before and after use case 3's `config override` of the node. The one
//! word added is `-c`: the test cannot own /etc/hiera.yaml.

use super::oracle::shim_lib;
use crate::server::TestServer;
use crate::tools::command;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_hierad");

const HIERARCHY: &str = r#"
  - "override/node/%{::fqdn}"
  - override/plugins
  - "override/configuration/%{::fqdn}"
  - override/configuration/role
  - override/configuration/cluster
  - "globals%{disable_globals_yaml}"
  - astute
"#;

#[test]
fn hiera_looks_up_the_value_use_case_3_set() {
    let server = TestServer::with_sample();
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "---\n:backends:\n  - hierad\n:hierarchy:{HIERARCHY}:merge_behavior: deeper\n:hierad:\n  :url: {}\n  :environment: 1\n  :level: \"nodes=%{{::fqdn}}\"\n",
        server.url
    );
    std::fs::write(dir.path().join("hiera.yaml"), config).unwrap();
    std::fs::write(
        dir.path().join("test_scope.yaml"),
        "---\n\"::fqdn\": node-1.domain.tld\n",
    )
    .unwrap();
    let hiera = || {
        let out = command("hiera")
            .args([
                "-c",
                "hiera.yaml",
                "deployment_id",
                "--yaml",
                "test_scope.yaml",
            ])
            .current_dir(dir.path())
            .env("RUBYLIB", shim_lib())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(hiera(), "15\n");
    // Use case 3, word for word.
    let out = Command::new(BIN)
        .args([
            "config",
            "override",
            "--env",
            "1",
            "--level",
            "node=node-1.domain.tld",
        ])
        .args([
            "--resource",
            "astute",
            "--key",
            "deployment_id",
            "--value",
            "2",
        ])
        .env("HIERAD_SERVER", &server.url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(hiera(), "2\n");
}
