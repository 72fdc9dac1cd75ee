//! Fuel data, yaml backend against hierad backend over the same files.
//! The nodes: the differential suite's three Fuel nodes (with their
//! override layers), and one node per file of `tests/fixtures/fuel/` (a
//! copy of ../shared/fixtures/fuel; each file as the node's astute.yaml).
//!
//! - Through Hiera's API in one Ruby process (tests/support/shim_batch.rb):
//!   every key of every node with priority, array and hash resolution,
//!   Hash resolution types, dotted keys and order overrides; each lookup
//!   is exactly one HTTP request.
//! - Through the real `hiera` command, priority lookups of a sample of
//!   each node's keys (see [`sample`]), `-f ruby` and `-f json`: the same
//!   stdout, stderr's error line and exit status. The API part has already
//!   compared every key's value, so the command only has its printing and
//!   arguments to add; a sample keeps the test's time within bounds.

use super::cases::FIXTURES;
use super::env::Hierad;
use super::oracle::{Job, ROOT, ruby_json, run_hiera, shim_lib, support};
use serde_json::{Value as Json, json};
use std::path::{Path, PathBuf};

#[test]
fn hiera_api_and_command_with_hierad_match_the_yaml_backend_on_fuel() {
    let hierad = Hierad::start();
    let group = Path::new(FIXTURES).join("fuel");
    let scratch = tempfile::tempdir().unwrap();

    // One node per shared Fuel file, under the group's hiera.yaml.
    let extra = scratch.path().join("fuelx");
    let shared = Path::new(ROOT).join("tests/fixtures/fuel");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&shared)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "only {} Fuel files", files.len());
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::copy(group.join("hiera.yaml"), extra.join("hiera.yaml")).unwrap();
    let mut worlds = Vec::new();
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let node = extra.join("nodes").join(&name);
        std::fs::create_dir_all(&node).unwrap();
        std::fs::copy(file, node.join("astute.yaml")).unwrap();
        std::fs::copy(group.join("globals.yaml"), node.join("globals.yaml")).unwrap();
        let scope = json!({"::fqdn": name, "fqdn": name});
        std::fs::write(extra.join(format!("scope-{name}.json")), scope.to_string()).unwrap();
        worlds.push((format!("fuelx/{name}"), extra.clone(), scope, node));
    }
    for entry in std::fs::read_dir(group.join("nodes")).unwrap() {
        let node = entry.unwrap().path();
        let fqdn = node.file_name().unwrap().to_string_lossy().into_owned();
        let scope: Json = serde_json::from_str(
            &std::fs::read_to_string(group.join(format!("scope-{fqdn}.json"))).unwrap(),
        )
        .unwrap();
        worlds.push((format!("fuel/{fqdn}"), group.clone(), scope, node));
    }

    let translated = ruby_json(
        &support("shim_configs.rb"),
        &json!({
            "url": hierad.url(),
            "environment": super::env::ENV,
            "out": scratch.path().join("configs"),
            "groups": [
                {"name": "fuel", "dir": group, "configs": ["hiera.yaml"]},
                {"name": "fuelx", "dir": extra, "configs": ["hiera.yaml"]},
            ],
        }),
        &[],
    );
    let mut skipped = Vec::new();
    for d in translated["datadirs"].as_array().unwrap() {
        let dir = PathBuf::from(d["dir"].as_str().unwrap());
        skipped.extend(hierad.import_dir(&dir, d["level"].as_str().unwrap()));
    }
    assert!(
        skipped.is_empty(),
        "Fuel files hierad cannot import: {skipped:?}"
    );
    assert_eq!(
        translated["datadirs"].as_array().unwrap().len(),
        worlds.len()
    );

    let input: Vec<Json> = worlds
        .iter()
        .map(|(name, dir, scope, node)| {
            let config = if name.starts_with("fuelx/") {
                "fuelx"
            } else {
                "fuel"
            };
            json!({
                "name": name,
                "dir": dir,
                "yaml_config": dir.join("hiera.yaml"),
                "hierad_config": translated["configs"][format!("{config}/hiera.yaml")],
                "scope": scope,
                "keys_from": node,
            })
        })
        .collect();
    let lib = shim_lib();
    let result = ruby_json(
        &support("shim_batch.rb"),
        &json!({ "worlds": input }),
        &[("RUBYLIB", lib.to_str().unwrap())],
    );
    let lookups = result["lookups"].as_u64().unwrap();
    let mismatches = result["mismatches"].as_array().unwrap();
    eprintln!(
        "{lookups} lookups ({} errors compared) over {} nodes; {} mismatches",
        result["errors"],
        worlds.len(),
        mismatches.len()
    );
    for m in mismatches.iter().take(40) {
        eprintln!("MISMATCH {m}");
    }
    assert!(lookups > 5000, "only {lookups} lookups");
    assert!(mismatches.is_empty(), "{} lookups differ", mismatches.len());
    // One request per lookup that reaches the backend (Hiera refuses some
    // dotted keys itself); a Hash scope needs no question about it.
    let backend_lookups = result["backend_lookups"].as_u64().unwrap();
    assert!(
        backend_lookups + 20 > lookups,
        "{backend_lookups} of {lookups}"
    );
    assert_eq!(hierad.requests("POST", "/api/v1/lookup"), backend_lookups);
    assert_eq!(
        hierad.requests("GET", "/api/v1/environments/{env}/scope"),
        0
    );

    // The `hiera` command on a sample of every node's keys, in both formats.
    let mut runs = Vec::new();
    for (name, dir, _, _) in &worlds {
        let fqdn = name.split_once('/').unwrap().1;
        let config = if name.starts_with("fuelx/") {
            "fuelx"
        } else {
            "fuel"
        };
        let hierad_config = translated["configs"][format!("{config}/hiera.yaml")]
            .as_str()
            .unwrap()
            .to_owned();
        let sizes = result["keys"][name].as_object().unwrap();
        for key in sample(sizes) {
            for format in ["ruby", "json"] {
                let job = |config: &str| {
                    let mut args = vec!["-f", format, "-c", config, "-j"];
                    let scope = format!("scope-{fqdn}.json");
                    args.push(&scope);
                    if key.starts_with('-') {
                        args.push("--");
                    }
                    args.push(key);
                    Job {
                        args: args.into_iter().map(str::to_owned).collect(),
                        dir: dir.clone(),
                        columns: Some("80".into()),
                    }
                };
                runs.push((
                    format!("{name} -f {format} {key}"),
                    job("hiera.yaml"),
                    job(&hierad_config),
                ));
            }
        }
    }
    let jobs: Vec<Job> = runs
        .iter()
        .map(|r| r.1.clone())
        .chain(runs.iter().map(|r| r.2.clone()))
        .collect();
    let outcomes = run_hiera(&jobs);
    let (yaml, shim) = outcomes.split_at(runs.len());
    let mut differing = Vec::new();
    let mut found = 0;
    for (((what, _, _), y), h) in runs.iter().zip(yaml).zip(shim) {
        found += usize::from(y.status == 0 && y.stdout != b"nil\n" && y.stdout != b"null\n");
        if y.status != h.status || y.stdout != h.stdout || y.error_line() != h.error_line() {
            differing.push(format!(
                "{what}: yaml exit {} {:?} {:?}; hierad exit {} {:?} {:?}",
                y.status,
                String::from_utf8_lossy(&y.stdout)
                    .chars()
                    .take(300)
                    .collect::<String>(),
                y.error_line(),
                h.status,
                String::from_utf8_lossy(&h.stdout)
                    .chars()
                    .take(300)
                    .collect::<String>(),
                h.error_line(),
            ));
        }
    }
    eprintln!(
        "hiera command: {} runs per backend ({found} found), {} differ",
        runs.len(),
        differing.len()
    );
    for d in differing.iter().take(20) {
        eprintln!("DIFFERS {d}");
    }
    assert!(
        found > runs.len() / 2,
        "the yaml backend found only {found} of {}",
        runs.len()
    );
    assert!(
        differing.is_empty(),
        "{} runs of the hiera command differ",
        differing.len()
    );
}

/// The keys of a node the `hiera` command looks up: the 5 largest answers,
/// every key whose name has a dot or starts with `-` (the command line
/// spells them differently), and every 10th of the rest, in key order.
fn sample(sizes: &serde_json::Map<String, Json>) -> Vec<&str> {
    let mut by_size: Vec<(&str, u64)> = sizes
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_u64().unwrap()))
        .collect();
    by_size.sort_by_key(|&(k, size)| (std::cmp::Reverse(size), k));
    let largest: Vec<&str> = by_size.iter().take(5).map(|&(k, _)| k).collect();
    sizes
        .keys()
        .enumerate()
        .filter(|&(i, k)| {
            largest.contains(&k.as_str())
                || k.contains('.')
                || k.starts_with('-')
                || i % 10 == 0
                || i + 1 == sizes.len()
        })
        .map(|(_, k)| k.as_str())
        .collect()
}
