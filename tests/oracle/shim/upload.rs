//! The upload task of docs/spec/configdb-api.md, shipped in the puppet/ module
//! (`hierad_resources`, on the hiera/ module's client), with the real Puppet and Ruby against a hierad started here: the
//! class `hierad_resources::upload` by `puppet apply` (sites without Bolt), and the
//! Bolt task `hierad_resources::upload` run as Bolt runs it (parameters as JSON on
//! stdin, the metadata's `files` laid out under `_installdir`).

use crate::server::TestServer;
use crate::tools::command;
use serde_json::{Value as Json, json};
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = env!("CARGO_BIN_EXE_hierad");
const NODE: &str = "nodes=node-1.domain.tld";
const NODE_NAME: &str = "node-1.domain.tld";

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A node's /etc/hiera: the sample's yaml files.
fn etc_hiera(dir: &Path) -> std::path::PathBuf {
    let etc = dir.join("etc-hiera");
    copy_tree(&Path::new(ROOT).join("data"), &etc);
    std::fs::remove_file(etc.join("README.md")).unwrap();
    etc
}

/// One key of the stored values of `resource` at the node, as plain text.
fn stored(url: &str, resource: &str, key: &str) -> String {
    let out = Command::new(BIN)
        .args([
            "config", "get", "--server", url, "--env", "1", "--level", NODE,
        ])
        .args([
            "--resource",
            resource,
            "--stored",
            "--key",
            key,
            "--format",
            "plain",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(if out.status.success() {
        &out.stdout
    } else {
        &out.stderr
    })
    .into_owned()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_puppet_class_uploads_etc_hiera_when_it_changes() {
    let server = TestServer::empty();
    let dir = tempfile::tempdir().unwrap();
    let etc = etc_hiera(dir.path());
    let modules = dir.path().join("modules");
    for (from, name) in [("hiera", "hierad"), ("puppet", "hierad_resources")] {
        let to = modules.join(name);
        copy_tree(&Path::new(ROOT).join(from), &to);
        std::fs::remove_dir_all(to.join("test")).unwrap();
    }
    let manifest = format!(
        "class {{ 'hierad_resources::upload': url => '{}', environment => 1, level => '{NODE}', datadir => '{}' }}",
        server.url,
        etc.display()
    );
    let apply_manifest = |manifest: &str| {
        let mut c = command("puppet");
        c.arg("apply");
        for (flag, sub) in [
            ("--confdir", "conf"),
            ("--vardir", "var"),
            ("--codedir", "code"),
            ("--logdir", "log"),
            ("--rundir", "run"),
        ] {
            c.arg(flag).arg(dir.path().join(sub));
        }
        c.arg("--modulepath").arg(&modules);
        c.args(["--color", "false", "--detailed-exitcodes", "-e", manifest]);
        c.output().unwrap()
    };
    let apply = || apply_manifest(&manifest);
    // First run: the environment is created and every file uploaded
    // (--detailed-exitcodes: 2 = changes applied).
    let out = apply();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("first upload"),
        "{}",
        text(&out)
    );
    assert_eq!(stored(&server.url, "astute", "deployment_id"), "15\n");
    assert_eq!(
        stored(&server.url, "override/plugins", "plugins.0.name"),
        "contrail\n"
    );
    // Nothing changed: nothing uploaded (0).
    let out = apply();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A changed file and a removed one: uploaded again, the removed
    // datasource deleted (replace).
    std::fs::write(etc.join("globals.yaml"), "uploaded_again: true\n").unwrap();
    std::fs::remove_file(etc.join("override/plugins.yaml")).unwrap();
    let out = apply();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("files changed"),
        "{}",
        text(&out)
    );
    assert_eq!(stored(&server.url, "globals", "uploaded_again"), "true\n");
    assert!(
        stored(&server.url, "override/plugins", "plugins")
            .contains("key \"plugins\" is not in the"),
        "deleted"
    );
    // send_facts: the node's facts become its stored scope (the files
    // are unchanged; the facts alone make the change).
    let with_facts = manifest.replace(" }", ", register => true, send_facts => true }");
    let out = apply_manifest(&with_facts);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let scope = crate::server::call(
        "GET",
        &format!(
            "{}/api/v1/config/environments/1/nodes/{NODE_NAME}/scope",
            server.url
        ),
        None,
        &[],
    );
    assert_eq!(scope.status, 200, "{}", scope.body);
    assert!(scope.json()["scope"]["::os"].is_object(), "{}", scope.body);
    // A server that cannot be reached fails the run, naming it.
    let down = manifest.replace(&server.url, "http://127.0.0.1:1");
    let mut c = command("puppet");
    c.arg("apply");
    for (flag, sub) in [
        ("--confdir", "conf"),
        ("--vardir", "var2"),
        ("--codedir", "code"),
        ("--logdir", "log"),
        ("--rundir", "run"),
    ] {
        c.arg(flag).arg(dir.path().join(sub));
    }
    c.arg("--modulepath").arg(&modules).args([
        "--color",
        "false",
        "--detailed-exitcodes",
        "-e",
        &down,
    ]);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("http://127.0.0.1:1"),
        "{}",
        text(&out)
    );
}

/// Runs tasks/upload.rb as Bolt does: `files` of the metadata copied under
/// a fresh `_installdir` (each under its module's name), the task itself
/// from another folder, the parameters on stdin.
fn bolt_run(params: &Json) -> Output {
    let install = tempfile::tempdir().unwrap();
    let metadata: Json = serde_json::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("puppet/tasks/upload.json")).unwrap(),
    )
    .unwrap();
    for file in metadata["files"].as_array().unwrap() {
        let file = file.as_str().unwrap();
        let (module, inside) = file.split_once('/').unwrap();
        let folder = match module {
            "hierad" => "hiera",
            "hierad_resources" => "puppet",
            other => panic!("{file}: no module {other}"),
        };
        let to = install.path().join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(Path::new(ROOT).join(folder).join(inside), &to)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    let task_dir = tempfile::tempdir().unwrap();
    let task = task_dir.path().join("upload.rb");
    std::fs::copy(Path::new(ROOT).join("puppet/tasks/upload.rb"), &task).unwrap();
    let mut params = params.clone();
    params["_installdir"] = json!(install.path());
    params["_task"] = json!("hierad_resources::upload");
    let mut child = command("ruby")
        .arg(&task)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(params.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_bolt_task_uploads_as_bolt_runs_it() {
    let server = TestServer::empty();
    let dir = tempfile::tempdir().unwrap();
    let etc = etc_hiera(dir.path());
    let params = json!({"url": server.url, "environment": 1, "level": NODE, "datadir": etc, "register": true});
    let out = bolt_run(&params);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let result: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["written"], json!(9), "{result}");
    assert_eq!(result["files"], json!(9), "{result}");
    assert_eq!(stored(&server.url, "astute", "deployment_id"), "15\n");
    // register: the node is now in the environment's register.
    let out = Command::new(BIN)
        .args([
            "register",
            "list",
            "--env",
            "1",
            "--level",
            "nodes",
            "--server",
            &server.url,
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "node-1.domain.tld\n",
        "{}",
        text(&out)
    );
    // Again: nothing new.
    let out = bolt_run(&params);
    let result: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (result["written"].clone(), result["unchanged"].clone()),
        (json!(0), json!(9)),
        "{result}"
    );
    // facts: stored as the node's scope, each a top-scope variable.
    let mut with_facts = params.clone();
    with_facts["facts"] = json!({"role": "web", "networking": {"fqdn": NODE_NAME}});
    let out = bolt_run(&with_facts);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let result: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["scope"], json!(NODE_NAME), "{result}");
    let scope = crate::server::call(
        "GET",
        &format!(
            "{}/api/v1/config/environments/1/nodes/{NODE_NAME}/scope",
            server.url
        ),
        None,
        &[],
    );
    assert_eq!(scope.status, 200, "{}", scope.body);
    assert_eq!(
        scope.json()["scope"],
        json!({"::role": "web", "::networking": {"fqdn": NODE_NAME}})
    );
    // Off by default: the first runs above stored none (version 1 is
    // this one).
    assert_eq!(scope.json()["version"], json!(1));
    // Facts need a node's level.
    let mut at_root = with_facts.clone();
    at_root["level"] = json!("");
    let out = bolt_run(&at_root);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("facts are stored for a node"),
        "{}",
        text(&out)
    );
    // Failures are Bolt's error object and exit 1.
    let cases = [
        (
            json!({"url": server.url, "environment": 1, "level": NODE, "datadir": "/nonexistent/hiera"}),
            "/nonexistent/hiera is not a directory",
        ),
        (
            json!({"url": "http://127.0.0.1:1", "environment": 1, "level": NODE, "datadir": etc}),
            "http://127.0.0.1:1",
        ),
    ];
    for (params, want) in cases {
        let out = bolt_run(&params);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let error: Json =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
        assert_eq!(error["_error"]["kind"], json!("hierad/upload-failed"));
        assert!(
            error["_error"]["msg"].as_str().unwrap().contains(want),
            "{error}"
        );
    }
}
