//! Lookups through the server against the real Hiera on the same files:
//! the core's differential fixtures (priority, array, interpolation, dotted,
//! every merge configuration) and the Fuel nodes are imported into a
//! running `hierad serve` with `hierad import`, then every top-level key is
//! looked up with priority, array and hash resolution through
//! `POST /api/v1/lookup` and compared, type for type, with what Hiera 3.10
//! answers in process (`tests/support/server_oracle.rb`) from the files.

use crate::server::{TestServer, call};
use crate::tagged;
use hierad::hiera::Value;
use serde_json::{Value as Json, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hiera");

/// One environment of the server: a fixture group under one configuration.
struct Env {
    id: i64,
    dir: PathBuf,
    config: String,
    scope: Option<String>,
    /// Imported at the root; for Fuel, each node at `nodes=<fqdn>`.
    trees: Vec<(PathBuf, Option<String>)>,
    /// The level path lookups use, and the scope file, per node (Fuel).
    level: Option<String>,
    keys_from: String,
}

fn environments() -> Vec<Env> {
    let mut envs = Vec::new();
    let mut id = 1;
    for group in ["priority", "array", "interpolation", "dotted"] {
        let dir = Path::new(FIXTURES).join(group);
        let scope = dir
            .join("scope.json")
            .is_file()
            .then(|| "scope.json".to_owned());
        envs.push(Env {
            id,
            trees: vec![(dir.join("data"), None)],
            config: "hiera.yaml".to_owned(),
            scope,
            level: None,
            keys_from: "data".to_owned(),
            dir,
        });
        id += 1;
    }
    let merge = Path::new(FIXTURES).join("merge");
    let mut configs: Vec<String> = std::fs::read_dir(&merge)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    configs.sort();
    for config in configs {
        envs.push(Env {
            id,
            trees: vec![(merge.join("data"), None)],
            config,
            scope: None,
            level: None,
            keys_from: "data".to_owned(),
            dir: merge.clone(),
        });
        id += 1;
    }
    let fuel = Path::new(FIXTURES).join("fuel");
    let mut nodes: Vec<String> = std::fs::read_dir(fuel.join("nodes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    nodes.sort();
    for node in nodes {
        envs.push(Env {
            id,
            trees: vec![(
                fuel.join("nodes").join(&node),
                Some(format!("nodes={node}")),
            )],
            config: "hiera.yaml".to_owned(),
            scope: Some(format!("scope-{node}.json")),
            level: Some(format!("nodes={node}")),
            keys_from: format!("nodes/{node}"),
            dir: fuel.clone(),
        });
        id += 1;
    }
    envs
}

fn hierad(args: &[&str], url: &str) {
    crate::binary::ok(&[args, &["--server", url]].concat());
}

/// Imports an environment's trees and its configuration (as `hiera`).
fn import(env: &Env, url: &str) {
    let id = env.id.to_string();
    let config_only = tempfile::tempdir().unwrap();
    std::fs::copy(
        env.dir.join(&env.config),
        config_only.path().join("hiera.yaml"),
    )
    .unwrap();
    hierad(
        &["import", config_only.path().to_str().unwrap(), "--env", &id],
        url,
    );
    for (tree, level) in &env.trees {
        let mut args = vec!["import", tree.to_str().unwrap(), "--env", &id];
        if let Some(level) = level {
            args.extend(["--level", level]);
        }
        hierad(&args, url);
    }
}

fn oracle(envs: &[Env]) -> Vec<Json> {
    let specs: Vec<Json> = envs
        .iter()
        .map(|e| json!({"env": e.id, "dir": e.dir, "config": e.config, "scope": e.scope, "keys_from": e.keys_from}))
        .collect();
    let mut child = crate::tools::command("ruby")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/support/server_oracle.rb"
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("ruby (apt-get install ruby hiera ruby-deep-merge)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(Json::Array(specs).to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the Ruby oracle failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn scope_of(env: &Env) -> Json {
    match &env.scope {
        Some(file) => {
            serde_json::from_str(&std::fs::read_to_string(env.dir.join(file)).unwrap()).unwrap()
        }
        None => json!({}),
    }
}

#[test]
fn server_lookups_match_hiera_on_the_same_files() {
    let server = TestServer::empty();
    let envs = environments();
    for env in &envs {
        import(env, &server.url);
    }
    let expected = oracle(&envs);
    assert!(
        expected.len() > 1000,
        "only {} oracle answers",
        expected.len()
    );
    let mut mismatches = Vec::new();
    for row in &expected {
        let env = envs.iter().find(|e| e.id == row["env"]).unwrap();
        let key = row["key"].as_str().unwrap();
        let res = row["res"].as_str().unwrap();
        let mut request =
            json!({"environment": env.id, "key": key, "resolution": res, "scope": scope_of(env)});
        if let Some(level) = &env.level {
            request["level"] = json!(level);
        }
        let reply = call(
            "POST",
            &format!("{}/api/v1/lookup", server.url),
            Some(&request.to_string()),
            &[("content-type", "application/json")],
        );
        let got: Result<Value, (String, String)> = match reply.status {
            200 => {
                let answer = reply.json();
                Ok(if answer["found"] == true {
                    hierad::wire::from_wire(answer["value"].clone()).unwrap()
                } else {
                    Value::Nil
                })
            }
            422 => {
                let e = reply.json();
                Err((
                    e["class"].as_str().unwrap().to_owned(),
                    e["message"].as_str().unwrap().to_owned(),
                ))
            }
            other => panic!("{other} for {request}: {}", reply.body),
        };
        let want: Result<Value, (String, String)> = match (&row.get("ok"), &row.get("err")) {
            (Some(ok), _) => Ok(tagged::decode(ok).unwrap()),
            // Ruby 3.1's error_highlight appends a source snippet after a
            // blank line to NoMethodError messages; the message is before it.
            (_, Some(err)) => Err((
                err[0].as_str().unwrap().to_owned(),
                err[1]
                    .as_str()
                    .unwrap()
                    .split("\n\n")
                    .next()
                    .unwrap()
                    .to_owned(),
            )),
            _ => unreachable!(),
        };
        if got != want {
            mismatches.push(format!(
                "env {} ({} {}) {res} {key}:\n  hiera:  {want:?}\n  server: {got:?}",
                env.id,
                env.dir.file_name().unwrap().to_string_lossy(),
                env.config
            ));
        }
    }
    println!(
        "{} lookups compared over {} environments",
        expected.len(),
        envs.len()
    );
    assert!(
        mismatches.is_empty(),
        "{} of {} server lookups differ from hiera:\n{}",
        mismatches.len(),
        expected.len(),
        mismatches
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
