//! The operator's path: put the override_resources schema on a resource and
//! upload a YAML file to a level with `hierad config` (as the `set` of
//! docs/spec/configdb-api.md, from stdin); a refused upload changes nothing;
//! `hierad config get` shows the effective `configuration`; and `puppet apply`
//! with `include hierad_resources::override` changes the resources.

use super::{CLUSTER_DATA, Case, LEVEL, apply_on};
use crate::shim::env::Hierad;
use crate::shim::oracle::ROOT;
use serde_json::json;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn hierad_cli(hierad: &Hierad, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hierad"))
        .args(args)
        .args(["--server", hierad.url()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hierad");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn upload_with_hierad_config_then_puppet_apply_changes_the_resources() {
    let hierad = Hierad::start();
    let manifest = "file { '@D/out/a': content => \"manifest a\\n\", mode => '0644' }\ninclude hierad_resources::override\n";
    let case = Case::new("operator", manifest, json!({}));
    let upload = |hierad: &Hierad, env: i64, dir: &Path| {
        let schema = Path::new(ROOT).join("schemas/override_resources.json");
        let resource = ["--component", "shim", "--resource", CLUSTER_DATA];
        let set = [
            &["config", "schema"][..],
            &resource,
            &["--set", schema.to_str().unwrap()],
        ]
        .concat();
        let out = hierad_cli(hierad, &set, "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let env = env.to_string();
        let put = [
            "config",
            "set",
            "--env",
            &env,
            "--level",
            LEVEL,
            "--resource",
            CLUSTER_DATA,
        ];
        let d = dir.to_string_lossy();
        let yaml = format!(
            "configuration:\n  file:\n    {d}/out/a:\n      content: \"from hierad\\n\"\n    {d}/out/motd:\n      content: \"created\\n\"\ndefaults:\n  file:\n    mode: \"0600\"\n"
        );
        let out = hierad_cli(hierad, &put, &yaml);
        assert!(out.status.success(), "{}", text(&out.stderr));
        // A typo is refused on upload, naming it; the upload before stays.
        let out = hierad_cli(hierad, &put, "configuration_options:\n  create: maybe\n");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr
                .contains("at /configuration_options/create: the value is not of type \"boolean\""),
            "{stderr}"
        );
        let get = [
            "config",
            "get",
            "--env",
            &env,
            "--level",
            LEVEL,
            "--resource",
            CLUSTER_DATA,
        ];
        let shown = hierad_cli(
            hierad,
            &[&get[..], &["--key", "configuration", "--format", "json"]].concat(),
            "",
        );
        let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
        assert_eq!(
            shown["configuration"]["file"][format!("{d}/out/motd")]["content"],
            "created\n",
            "{shown}"
        );
    };
    let runs = apply_on(&hierad, vec![case], &upload);
    let run = &runs[0];
    assert_eq!(run.outcome.status, 0, "{}", run.show());
    assert_eq!(
        run.file("a"),
        Some(("from hierad\n".into(), 0o600)),
        "{}",
        run.show()
    );
    assert_eq!(
        run.file("motd"),
        Some(("created\n".into(), 0o600)),
        "{}",
        run.show()
    );
    assert!(run.reported("File[@D/out/motd]"), "{}", run.show());
}
