//! `hierad import` then `hierad export` round trips, judged by the real
//! Hiera 3.10: over the exported tree, `hiera` must answer every top-level
//! key of the original tree exactly as over the original (priority, array
//! and hash lookups, errors included). One Ruby process answers all the
//! lookups of a test (`Hiera.new` once per tree, lookups in-process).

use serde_json::{Value as Json, json};
use std::path::{Path, PathBuf};

use crate::binary::{ROOT, ok};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

fn data(rel: &str) -> PathBuf {
    Path::new(ROOT).join("data").join(rel)
}

/// For each run, every top-level key of `keys_from` (a tree) looked up by
/// the real Hiera with priority, array and hash resolution.
const ORACLE: &str = r#"
require 'hiera'
require 'json'
require 'yaml'
require ARGV[1]
spec = JSON.parse(File.read(ARGV[0]))
keys = []
Dir.glob('**/*.{yaml,json}', base: spec['keys_from']).sort.each do |rel|
  next if rel == 'hiera.yaml'
  path = File.join(spec['keys_from'], rel)
  data = rel.end_with?('.json') ? JSON.parse(File.read(path)) : YAML.load(File.read(path, encoding: 'BOM|UTF-8'))
  keys.concat(data.keys) if data.is_a?(Hash)
end
keys.uniq!
out = { 'keys' => keys.map { |k| Tagged.encode(k) }, 'runs' => {} }
spec['runs'].each do |run|
  config = YAML.load_file(run['config'])
  config[:yaml] = (config[:yaml] || {}).merge(datadir: run['datadir'])
  config[:logger] = 'noop'
  hiera = Hiera.new(config: config)
  out['runs'][run['name']] = keys.map do |key|
    [:priority, :array, :hash].map do |type|
      begin
        ['ok', Tagged.encode(hiera.lookup(key, nil, run['scope'], nil, type))]
      rescue Exception => e
        ['error', e.class.name, e.message.gsub(run['datadir'], 'DATADIR')]
      end
    end
  end
end
puts JSON.generate(out)
"#;

struct Run {
    name: String,
    config: PathBuf,
    datadir: PathBuf,
    fqdn: String,
}

/// Ruby's answers: (the keys, answers per run name).
fn oracle(keys_from: &Path, runs: &[Run]) -> (Vec<Json>, serde_json::Map<String, Json>) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("oracle.rb");
    std::fs::write(&script, ORACLE).unwrap();
    let spec = json!({
        "keys_from": s(keys_from),
        "runs": runs.iter().map(|r| json!({
            "name": r.name,
            "config": s(&r.config),
            "datadir": s(&r.datadir),
            "scope": {"::fqdn": r.fqdn},
        })).collect::<Vec<_>>(),
    });
    let spec_path = dir.path().join("spec.json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let tagged = Path::new(ROOT).join("tests/support/tagged.rb");
    let out = crate::tools::command("ruby")
        .arg(&script)
        .arg(&spec_path)
        .arg(&tagged)
        .output()
        .expect("run ruby");
    assert!(
        out.status.success(),
        "oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut json: Json = serde_json::from_slice(&out.stdout).unwrap();
    let keys = json["keys"].as_array().unwrap().clone();
    let runs = json["runs"].as_object_mut().unwrap().clone();
    (keys, runs)
}

/// The two runs answered the same, key by key; and the original answered
/// enough for the comparison to mean something.
fn assert_same_answers(
    keys: &[Json],
    runs: &serde_json::Map<String, Json>,
    original: &str,
    exported: &str,
) {
    let want = runs[original].as_array().unwrap();
    let got = runs[exported].as_array().unwrap();
    assert_eq!(want.len(), keys.len());
    assert!(keys.len() > 80, "only {} keys", keys.len());
    let mut mismatches = Vec::new();
    for ((key, want), got) in keys.iter().zip(want).zip(got) {
        if want != got {
            mismatches.push(format!("{key}:\n  original {want}\n  exported {got}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{exported}: {} of {} keys differ:\n{}",
        mismatches.len(),
        keys.len(),
        mismatches
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Every key is in some file, so every priority lookup finds it; the
    // other resolutions find values or raise Hiera's type mismatch.
    let found = want
        .iter()
        .filter(|answers| answers[0][0] == "ok" && answers[0][1] != json!(["nil"]))
        .count();
    assert!(
        found * 10 >= keys.len() * 9,
        "{original}: only {found} of {} keys found",
        keys.len()
    );
}

#[test]
fn sample_tree_round_trips_at_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = dir.path().join("export");
    let imported = ok(&["import", "data", "--env", "1", "--db", s(&db)]);
    assert!(
        imported.starts_with("imported 9 file(s) from data into the values of environment 1 at the root: 9 written, 0 unchanged, 0 deleted; defined 9 new resource(s)"),
        "{imported}"
    );
    // Re-importing the same tree writes nothing new.
    let again = ok(&["import", "data", "--env", "1", "--db", s(&db)]);
    assert!(
        again.contains("0 written, 9 unchanged, 0 deleted"),
        "{again}"
    );
    ok(&["export", "--env", "1", s(&out), "--db", s(&db)]);
    let runs: Vec<Run> = ["node-126", "node-127", "node-128"]
        .iter()
        .flat_map(|node| {
            let fqdn = format!("{node}.test.domain.local");
            [
                Run {
                    name: format!("original {node}"),
                    config: data("hiera.yaml"),
                    datadir: data(""),
                    fqdn: fqdn.clone(),
                },
                Run {
                    name: format!("exported {node}"),
                    config: out.join("hiera.yaml"),
                    datadir: out.clone(),
                    fqdn,
                },
            ]
        })
        .collect();
    let (keys, answers) = oracle(&data(""), &runs);
    for node in ["node-126", "node-127", "node-128"] {
        assert_same_answers(
            &keys,
            &answers,
            &format!("original {node}"),
            &format!("exported {node}"),
        );
    }
    // The files are there under their resource names.
    for rel in [
        "hiera.yaml",
        "astute.yaml",
        "globals.yaml",
        "override/plugins.yaml",
        "override/node/node-127.test.domain.local.yaml",
    ] {
        assert!(out.join(rel).is_file(), "{rel}");
    }
}

/// The Fuel layout with levels: a shared root (configuration, globals,
/// plugin and configuration overrides) and, per node, its own astute and
/// node override at `nodes=<fqdn>`. Each node's exported level must answer
/// as that node's own `/etc/hiera` did.
#[test]
fn per_node_trees_round_trip_through_levels() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let common = dir.path().join("common");
    for rel in [
        "hiera.yaml",
        "globals.yaml",
        "override/plugins.yaml",
        "override/configuration/role.yaml",
        "override/configuration/cluster.yaml",
    ] {
        copy(&data(rel), &common.join(rel));
    }
    let created = ok(&[
        "import",
        s(&common),
        "--env",
        "7",
        "--levels",
        "nodes",
        "--db",
        s(&db),
    ]);
    assert!(
        created.contains("environment 7 at the root: 5 written"),
        "{created}"
    );
    let nodes = [
        ("node-126", "primary-controller"),
        ("node-127", "compute"),
        ("node-128", "ceph-osd"),
    ];
    let mut runs = Vec::new();
    for (node, role) in nodes {
        let fqdn = format!("{node}.test.domain.local");
        // What the node itself had: the shared files plus its own.
        let own = dir.path().join(format!("own-{node}"));
        let astute = Path::new(ROOT).join(format!(
            "tests/fixtures/fuel/neut_tun.ceph.murano.sahara.ceil-{role}.yaml"
        ));
        copy(&astute, &own.join("astute.yaml"));
        let node_override = format!("override/node/{fqdn}.yaml");
        copy(&data(&node_override), &own.join(&node_override));
        let level = format!("nodes={fqdn}");
        ok(&[
            "import",
            s(&own),
            "--env",
            "7",
            "--level",
            &level,
            "--db",
            s(&db),
        ]);
        let original = dir.path().join(format!("original-{node}"));
        for tree in [&common, &own] {
            for entry in walk(tree) {
                copy(&entry, &original.join(entry.strip_prefix(tree).unwrap()));
            }
        }
        let exported = dir.path().join(format!("exported-{node}"));
        ok(&[
            "export",
            "--env",
            "7",
            "--level",
            &level,
            s(&exported),
            "--db",
            s(&db),
        ]);
        runs.push(Run {
            name: format!("original {node}"),
            config: original.join("hiera.yaml"),
            datadir: original.clone(),
            fqdn: fqdn.clone(),
        });
        runs.push(Run {
            name: format!("exported {node}"),
            config: exported.join("hiera.yaml"),
            datadir: exported,
            fqdn,
        });
    }
    // Keys: those of every tree (the three astutes share their keys).
    let all = dir.path().join("original-node-126");
    let (keys, answers) = oracle(&all, &runs);
    for (node, _) in nodes {
        assert_same_answers(
            &keys,
            &answers,
            &format!("original {node}"),
            &format!("exported {node}"),
        );
    }
    // A node's own data stays its own: node-127's level has its astute, not
    // node-126's.
    let uid = ok(&[
        "config",
        "get",
        "--env",
        "7",
        "--level",
        "nodes=node-127.test.domain.local",
        "--resource",
        "astute",
        "--key",
        "uid",
        "--format",
        "plain",
        "--db",
        s(&db),
    ]);
    assert_eq!(uid, "127\n");
    let root = ok(&[
        "config",
        "get",
        "--env",
        "7",
        "--resource",
        "astute",
        "--db",
        s(&db),
    ]);
    assert_eq!(root, "{}\n");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
