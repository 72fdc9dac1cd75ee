//! Fuel data through Hiera's API: every key of every node, with priority,
//! array and hash resolution, Hash resolution types, dotted keys and order
//! overrides, through the hierad backend and the yaml backend in one Ruby
//! process (tests/support/shim_batch.rb). The nodes: the differential
//! suite's three Fuel nodes (with their override layers), and one node per
//! file of `tests/fixtures/fuel/` (each file as the node's astute.yaml).

use super::cases::FIXTURES;
use super::env::Hierad;
use super::oracle::{ROOT, ruby_json, shim_lib, support};
use serde_json::{Value as Json, json};
use std::path::{Path, PathBuf};

#[test]
fn hiera_api_with_hierad_matches_the_yaml_backend_on_fuel() {
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
        worlds.push((
            format!("fuelx/{name}"),
            extra.clone(),
            json!({"::fqdn": name, "fqdn": name}),
            node,
        ));
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
}
