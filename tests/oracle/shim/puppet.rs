//! Puppet 7 (hiera.yaml version 5) through the shim's Hiera 5 functions
//! against `yaml_data` over the same files: `puppet lookup --render-as
//! json` with first, unique, hash and deep merges, and `puppet apply` of a
//! class whose parameters come from automatic parameter lookup. Also: what
//! happens when the server is down, and how many requests a compile makes.
//!
//! Three Puppet environments share one set of data: `yaml` (yaml_data over
//! the files), `hierad` (hierad::data_hash) and `hieradkey`
//! (hierad::lookup_key), each with two hierarchy entries: tests/fixtures/
//! shim/puppet/data (awkward types, lookup_options, class parameters) and
//! the Fuel node node-126 of the differential suite.

use super::cases::FIXTURES;
use super::env::{ENV, Hierad};
use super::oracle::{Outcome, ROOT, ruby_json, support};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Value as Json, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub(crate) const NODE: &str = "node-126.test.domain.local";
const SHIM_LEVEL: &str = "datadir=puppet~data";
pub(crate) const FUEL_LEVEL: &str = "datadir=fuel~nodes~node-126.test.domain.local";

fn shim_data() -> PathBuf {
    Path::new(ROOT).join("tests/fixtures/shim/puppet/data")
}

pub(crate) fn fuel_node() -> PathBuf {
    Path::new(FIXTURES).join("fuel/nodes").join(NODE)
}

/// The datasources of each hierarchy entry, in order (without `.yaml`).
fn entries() -> [(&'static str, PathBuf, &'static str, Vec<String>); 2] {
    let node = |s: &str| s.replace("{node}", "%{trusted.certname}");
    [
        (
            "shim data",
            shim_data(),
            SHIM_LEVEL,
            ["nodes/{node}", "role/web", "common"].map(node).to_vec(),
        ),
        (
            "fuel node",
            fuel_node(),
            FUEL_LEVEL,
            [
                "override/node/{node}",
                "override/plugins",
                "override/common",
                "override/configuration/{node}",
                "override/configuration/role",
                "override/configuration/cluster",
                "globals",
                "astute",
            ]
            .map(node)
            .to_vec(),
        ),
    ]
}

/// The hiera.yaml of one environment: `yaml_data`, or a hierad function
/// with `options` (url and credentials; environment and level are added).
fn hiera_yaml(backend: &str, options: &Json) -> String {
    let mut out = String::from("---\nversion: 5\nhierarchy:\n");
    for (name, dir, level, sources) in entries() {
        let _ = writeln!(out, "  - name: {name:?}");
        if backend == "yaml" {
            let _ = writeln!(out, "    data_hash: yaml_data\n    datadir: {:?}", dir);
            let paths: Vec<String> = sources.iter().map(|s| format!("{s}.yaml")).collect();
            let _ = writeln!(out, "    paths: {}", json!(paths));
        } else {
            let _ = writeln!(out, "    {backend}");
            let _ = writeln!(out, "    uris: {}", json!(sources));
            let mut options = options.clone();
            options["environment"] = json!(ENV);
            options["level"] = json!(level);
            let _ = writeln!(out, "    options: {options}");
        }
    }
    out
}

/// A Puppet installation in a temporary directory, its environments
/// reading hierad at `url`.
pub(crate) struct PuppetTree {
    pub(crate) dir: tempfile::TempDir,
    /// Each invocation gets its own conf/var/code directories: two Puppets
    /// creating the same fresh vardir at once make one of them fail.
    runs: std::sync::atomic::AtomicUsize,
}

impl PuppetTree {
    pub(crate) fn new(url: &Json) -> PuppetTree {
        PuppetTree::with_options(&json!({ "url": url }))
    }

    /// Environments whose hierad functions get `options` (url, credentials).
    pub(crate) fn with_options(options: &Json) -> PuppetTree {
        let dir = tempfile::tempdir().unwrap();
        let module = Path::new(ROOT).join("tests/fixtures/shim/puppet/modules/shimtest");
        for (env, backend) in [
            ("yaml", "yaml"),
            ("hierad", "data_hash: hierad::data_hash"),
            ("hieradkey", "lookup_key: hierad::lookup_key"),
        ] {
            let root = dir.path().join("envs").join(env);
            std::fs::create_dir_all(root.join("modules")).unwrap();
            std::fs::write(root.join("hiera.yaml"), hiera_yaml(backend, options)).unwrap();
            // Copies, not links into the source tree: nothing a run
            // writes under its modules can land in the checkout.
            copy_tree(&module, &root.join("modules/shimtest"));
            if env != "yaml" {
                let shim = root.join("modules/hierad");
                copy_tree(&Path::new(ROOT).join("hiera/lib"), &shim.join("lib"));
                std::fs::copy(
                    Path::new(ROOT).join("hiera/metadata.json"),
                    shim.join("metadata.json"),
                )
                .unwrap();
            }
        }
        let facts = json!({"fqdn": NODE, "hostname": "node-126", "domain": "test.domain.local", "clientcert": NODE});
        std::fs::write(dir.path().join("facts.json"), facts.to_string()).unwrap();
        PuppetTree {
            dir,
            runs: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn base(&self, command: &str, env: &str) -> Vec<String> {
        let run = self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let d = |sub: &str| {
            let path = match sub {
                "envs" => self.dir.path().join(sub),
                _ => self.dir.path().join(format!("run-{run}")).join(sub),
            };
            path.to_string_lossy().into_owned()
        };
        let mut args: Vec<String> = vec![command.into()];
        for (flag, sub) in [
            ("--confdir", "conf"),
            ("--vardir", "var"),
            ("--codedir", "code"),
            ("--rundir", "run"),
            ("--logdir", "log"),
            ("--environmentpath", "envs"),
        ] {
            args.push(flag.into());
            args.push(d(sub));
        }
        args.extend([
            "--environment".into(),
            env.into(),
            "--color".into(),
            "false".into(),
        ]);
        args
    }

    /// `puppet lookup --render-as json` for NODE with the facts file.
    pub(crate) fn lookup(&self, env: &str, extra: &[&str]) -> Vec<String> {
        let mut args = self.base("lookup", env);
        let facts = self.dir.path().join("facts.json");
        args.extend(["--node".into(), NODE.into(), "--facts".into()]);
        args.push(facts.to_string_lossy().into_owned());
        args.extend(["--render-as".into(), "json".into()]);
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args
    }

    /// `puppet lookup --explain` as text: the only way `puppet lookup`
    /// shows why a lookup failed (it exits 1 silently otherwise; JSON
    /// explanations leave the error out).
    pub(crate) fn explain(&self, env: &str, extra: &[&str]) -> Vec<String> {
        let mut args = self.lookup(env, &[&["--explain"], extra].concat());
        let at = args.iter().position(|a| a == "--render-as").unwrap();
        args.drain(at..at + 2);
        args
    }

    fn apply(&self, env: &str) -> Vec<String> {
        let mut args = self.base("apply", env);
        args.extend([
            "--certname".into(),
            NODE.into(),
            "-e".into(),
            "include shimtest".into(),
        ]);
        args
    }

    /// Runs Puppet commands through tests/support/puppet_oracle.rb.
    pub(crate) fn run(&self, jobs: &[Vec<String>]) -> Vec<Outcome> {
        let input: Vec<Json> = jobs
            .iter()
            .map(|args| json!({"args": args, "dir": self.dir.path()}))
            .collect();
        let out = ruby_json(&support("puppet_oracle.rb"), &Json::Array(input), &[]);
        out.as_array()
            .unwrap()
            .iter()
            .map(|r| Outcome {
                status: r["status"].as_i64().unwrap() as i32,
                stdout: B64.decode(r["stdout"].as_str().unwrap()).unwrap(),
                stderr: B64.decode(r["stderr"].as_str().unwrap()).unwrap(),
            })
            .collect()
    }
}

/// Copies the directory `from` to `to` (files and directories only).
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

pub(crate) fn import(hierad: &Hierad) {
    for (_, dir, level, _) in entries() {
        let skipped = hierad.import_dir(&dir, level);
        assert!(skipped.is_empty(), "{skipped:?}");
    }
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Puppet's stderr without what differs between runs whatever the
/// backend: Facter's complaints about the machine, times, and the name of
/// the function and file a data error came from.
fn stable_lines(stderr: &[u8]) -> String {
    let location = regex::Regex::new(
        r"(data_hash|lookup_key) function '[a-z_]+'(, when using location '[^']*',)?",
    )
    .unwrap();
    let seconds = regex::Regex::new(r"in \d+\.\d+ seconds").unwrap();
    text(stderr)
        .lines()
        .filter(|l| !l.contains("Facter:") && !seconds.is_match(l))
        .map(|l| location.replace_all(l, "$1 function F").into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lookups through the `puppet lookup` command: (merge flags, key).
const LOOKUPS: &[(&[&str], &str)] = &[
    (&["--merge", "first"], "shimtest::message"),
    (&["--merge", "first"], "shimtest::settings"),
    (&["--merge", "first"], "shimtest::nothing"),
    (&["--merge", "unique"], "shimtest::packages"),
    (&["--merge", "unique"], "dns_nameservers"),
    (&["--merge", "hash"], "nova"),
    (&["--merge", "hash"], "deep"),
    (&["--merge", "deep"], "deep"),
    (&["--merge", "deep"], "network_scheme"),
    (&["--merge", "deep", "--knock-out-prefix", "--"], "ko"),
    (&["--merge", "first"], "int_keys"),
    (&["--merge", "first"], "floats"),
    (&["--merge", "first"], "sym"),
    (&["--merge", "deep"], "sym_keys"),
    (
        &["--merge", "first", "--default", "the default"],
        "no_such_key",
    ),
];

#[test]
fn puppet_lookup_and_apply_through_hierad_match_yaml_data() {
    let hierad = Hierad::start();
    import(&hierad);
    let tree = PuppetTree::new(&json!(hierad.url()));
    let envs = ["yaml", "hierad", "hieradkey"];
    let mut jobs = Vec::new();
    for env in envs {
        for (flags, key) in LOOKUPS {
            let mut extra = flags.to_vec();
            extra.push(key);
            jobs.push(tree.lookup(env, &extra));
        }
        jobs.push(tree.apply(env));
    }
    let outcomes = tree.run(&jobs);
    // The fork-per-run shortcut gives what the `puppet` command gives.
    let direct = crate::tools::command("puppet")
        .args(&jobs[0])
        .current_dir(tree.dir.path())
        .output()
        .expect("run puppet");
    assert_eq!(
        (direct.status.code(), text(&direct.stdout)),
        (Some(outcomes[0].status), text(&outcomes[0].stdout)),
        "puppet {} directly and through puppet_oracle.rb",
        jobs[0].join(" ")
    );
    let per_env = LOOKUPS.len() + 1;
    let (yaml, rest) = outcomes.split_at(per_env);
    let mut problems = Vec::new();
    for (env, got) in envs[1..].iter().zip(rest.chunks(per_env)) {
        for (i, (y, h)) in yaml.iter().zip(got).enumerate() {
            let what = if i < LOOKUPS.len() {
                format!("puppet lookup {} {}", LOOKUPS[i].0.join(" "), LOOKUPS[i].1)
            } else {
                "puppet apply -e 'include shimtest'".to_owned()
            };
            let notices = |o: &Outcome| -> Vec<String> {
                text(&o.stdout)
                    .lines()
                    .filter(|l| l.contains("Scope(Class[Shimtest])"))
                    .map(str::to_owned)
                    .collect()
            };
            let same = if i < LOOKUPS.len() {
                y.status == h.status
                    && y.stdout == h.stdout
                    && stable_lines(&y.stderr) == stable_lines(&h.stderr)
            } else {
                y.status == h.status && notices(y) == notices(h) && !notices(y).is_empty()
            };
            if !same {
                problems.push(format!(
                    "{env}: {what}\n  yaml_data: exit {} {:?}\n    {:?}\n  {env}: exit {} {:?}\n    {:?}",
                    y.status,
                    text(&y.stdout).chars().take(1500).collect::<String>(),
                    stable_lines(&y.stderr),
                    h.status,
                    text(&h.stdout).chars().take(1500).collect::<String>(),
                    stable_lines(&h.stderr),
                ));
            }
        }
    }
    for (i, o) in yaml[..LOOKUPS.len()].iter().enumerate() {
        eprintln!(
            "yaml_data: {} {} -> exit {} {}{}",
            LOOKUPS[i].0.join(" "),
            LOOKUPS[i].1,
            o.status,
            text(&o.stdout)
                .chars()
                .take(100)
                .collect::<String>()
                .trim_end(),
            stable_lines(&o.stderr)
                .chars()
                .take(200)
                .collect::<String>()
        );
    }
    // The lookups must have found things, not agreed on failing.
    let found = yaml.iter().filter(|o| o.status == 0).count();
    assert!(
        found >= LOOKUPS.len() - 2,
        "yaml_data answered only {found} lookups: {yaml:?}"
    );
    let apply = text(&yaml[LOOKUPS.len()].stdout);
    assert!(
        apply.contains("param port = 9090 :: Integer") && apply.contains("lookup nova deep = {"),
        "puppet apply with yaml_data: {apply}\n{}",
        text(&yaml[LOOKUPS.len()].stderr)
    );
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The route of whole datasources in hierad's metrics.
const DATA_ROUTE: &str = "/api/v1/data/{env}/{*resource}";

/// One compile fetches each hierarchy location once, whatever the number
/// of keys it looks up: `puppet lookup` of 1 key and of 40 keys (39 of
/// them missing, so each is looked up through every level) make the same
/// number of requests, one per location, through either function.
#[test]
fn a_compile_makes_one_request_per_level_not_per_key() {
    let hierad = Hierad::start();
    import(&hierad);
    let tree = PuppetTree::new(&json!(hierad.url()));
    let levels: usize = entries().iter().map(|e| e.3.len()).sum();
    let mut many: Vec<String> = (0..39).map(|i| format!("missing_key_{i}")).collect();
    many.push("shimtest::port".into());
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let mut counts = Vec::new();
    // hierad::lookup_key too: it answers each key from the datasource it
    // fetched whole on the location's first key.
    let runs =
        ["hierad", "hieradkey"].map(|env| [(env, &["shimtest::port"][..]), (env, &many[..])]);
    for (env, keys) in runs.into_iter().flatten() {
        let before = hierad.requests("GET", DATA_ROUTE);
        let out = tree.run(&[tree.lookup(env, keys)]);
        assert_eq!(
            (out[0].status, text(&out[0].stdout)),
            (0, "9090\n".to_owned()),
            "{}",
            text(&out[0].stderr)
        );
        counts.push(hierad.requests("GET", DATA_ROUTE) - before);
    }
    eprintln!(
        "requests of one compile: {counts:?} for 1 and 40 keys over {levels} levels \
         (data_hash, then lookup_key)"
    );
    assert_eq!(counts, [levels as u64; 4]);
}

/// A Puppet that compiles again and again (a Puppet Server) revalidates
/// each whole datasource with its ETag: the second compile gets a 304 for
/// each one the first got whole, and a value changed on the server in
/// between shows in the third (tests/oracle/shim/compiles.rb: three compiles in
/// one Puppet, after a compile with `yaml_data`).
#[test]
fn data_hash_revalidates_across_compiles_with_etags() {
    let hierad = Hierad::start();
    import(&hierad);
    let tree = PuppetTree::new(&json!(hierad.url()));
    let envs = tree.dir.path().join("envs");
    let facts: Json =
        serde_json::from_str(&std::fs::read_to_string(tree.dir.path().join("facts.json")).unwrap())
            .unwrap();
    let level_path = SHIM_LEVEL.replace('=', "/");
    let lib = super::oracle::shim_lib();
    let out = ruby_json(
        &Path::new(ROOT).join("tests/oracle/shim/compiles.rb"),
        &json!({
            "dir": tree.dir.path().join("compiles"),
            "env_dir": envs.join("hierad"),
            "yaml_env_dir": envs.join("yaml"),
            "node": NODE,
            "facts": facts,
            "keys": [["shimtest::port", "first"], ["shimtest::message", "first"],
                     ["shimtest::settings", "deep"], ["network_scheme", "deep"]],
            "url": hierad.url(),
            "change": {
                "path": format!("/api/v1/config/environments/{ENV}/{level_path}/resources/nodes%2F{NODE}/values/keys/shimtest::port"),
                "value": 9191,
            },
        }),
        &[("RUBYLIB", lib.to_str().unwrap())],
    );
    let runs = out["compiles"].as_array().unwrap();
    for (i, run) in runs.iter().enumerate() {
        eprintln!(
            "compile {}: requests {}, port {}",
            i + 1,
            run["requests"],
            run["values"][0]
        );
    }
    assert!(
        out["yaml"][0].is_u64() && out["yaml"][3].is_object(),
        "yaml_data: {out}"
    );
    let count = |run: usize, status: &str| runs[run]["requests"][status].as_u64().unwrap_or(0);
    let locations: u64 = entries().iter().map(|e| e.3.len() as u64).sum();
    // First compile: each location whole (200) or not defined (404).
    assert_eq!(
        runs[0]["values"], out["yaml"],
        "first compile against yaml_data"
    );
    assert!(count(0, "200") > 5, "{out}");
    assert_eq!(
        (count(0, "200") + count(0, "404"), count(0, "304")),
        (locations, 0)
    );
    // Second: the same requests, revalidated.
    assert_eq!(runs[1]["values"], out["yaml"]);
    assert_eq!(
        (count(1, "304"), count(1, "200"), count(1, "404")),
        (count(0, "200"), 0, count(0, "404")),
        "{out}"
    );
    // Third: the changed datasource arrives whole, and the new value with it.
    let mut changed = out["yaml"].clone();
    changed[0] = json!(9191);
    changed[1] = json!(changed[1].as_str().unwrap().replace("9090", "9191"));
    assert_eq!(runs[2]["values"], changed);
    assert!(count(2, "200") >= 1, "{out}");
    assert_eq!(count(2, "200") + count(2, "304"), count(0, "200"), "{out}");
}

/// With the server stopped, lookups fail with an error naming it; the
/// default is not used. With a second URL that answers, they succeed.
#[test]
fn a_stopped_server_fails_lookups_naming_it() {
    let mut down = Hierad::start();
    import(&down);
    let dead = down.url().to_owned();
    down.server.stop();
    let live = Hierad::start();
    import(&live);

    // The hiera command with the hierad backend.
    let dir = tempfile::tempdir().unwrap();
    let config = |urls: Json| {
        format!(
            "---\n:backends: [hierad]\n:hierarchy: [common]\n:hierad:\n  :url: {urls}\n  :environment: {ENV}\n  :level: {SHIM_LEVEL}\n  :connect_timeout: 2\n"
        )
    };
    std::fs::write(dir.path().join("dead.yaml"), config(json!(dead))).unwrap();
    std::fs::write(
        dir.path().join("failover.yaml"),
        config(json!([dead, live.url()])),
    )
    .unwrap();
    let job = |cfg: &str| super::oracle::Job {
        args: vec![
            "-c".into(),
            cfg.into(),
            "shimtest::port".into(),
            "fallback".into(),
        ],
        dir: dir.path().to_owned(),
        columns: None,
    };
    let out = super::oracle::run_hiera(&[job("dead.yaml"), job("failover.yaml")]);
    let err = text(&out[0].stderr);
    assert!(
        out[0].status == 1 && out[0].stdout.is_empty() && err.contains(&dead),
        "hiera with the server down: {:?}",
        out[0]
    );
    assert!(err.contains("Connection refused"), "{err}");
    assert_eq!(
        (out[1].status, text(&out[1].stdout)),
        (0, "8080\n".into()),
        "failover: {:?}",
        out[1]
    );

    // Puppet through both functions.
    let tree = PuppetTree::new(&json!(dead));
    let failover = PuppetTree::new(&json!([dead, live.url()]));
    let lookup = ["--default", "fallback", "shimtest::port"];
    let out = tree.run(&[
        tree.lookup("hierad", &lookup),
        tree.lookup("hieradkey", &lookup),
        tree.explain("hierad", &lookup),
        tree.apply("hierad"),
        failover.lookup("hierad", &lookup),
        failover.lookup("hieradkey", &lookup),
    ]);
    for (i, o) in out[..2].iter().enumerate() {
        assert!(
            o.status == 1 && !text(&o.stdout).contains("fallback"),
            "puppet lookup #{i} with the server down: {o:?}"
        );
    }
    let explained = text(&out[2].stdout);
    assert!(
        explained.contains(&dead) && explained.contains("Connection refused"),
        "puppet lookup --explain with the server down: {explained}"
    );
    let applied = text(&out[3].stderr);
    assert!(
        out[3].status != 0
            && applied.contains(&dead)
            && !text(&out[3].stdout).contains("param port"),
        "puppet apply with the server down: {:?}",
        out[3]
    );
    for o in &out[4..] {
        assert_eq!(
            (o.status, text(&o.stdout)),
            (0, "9090\n".into()),
            "failover: {o:?}"
        );
    }
}

/// The Hiera 5 functions' `tag` and `generation` options: `puppet
/// lookup` through a tree pinned to a tag (or its generation) answers
/// as `yaml_data` over the files, though hierad's data changed after the
/// tag; the unpinned tree answers the change.
#[test]
fn puppet_lookup_pinned_to_a_tag_answers_as_yaml_data_of_then() {
    let hierad = Hierad::start();
    import(&hierad);
    let tag = hierad.expect("POST", "/api/v1/tags", json!({"name": "deploy-1"}), 201);
    let generation = tag["generation"].as_u64().unwrap();
    let key = format!(
        "/api/v1/config/environments/{ENV}/datadir/puppet~data/resources/common/values/keys/shimtest::packages"
    );
    hierad.expect("PUT", &key, json!(["changed"]), 204);
    let url = json!(hierad.url());
    let trees = [
        PuppetTree::new(&url),
        PuppetTree::with_options(&json!({"url": url, "tag": "deploy-1"})),
        PuppetTree::with_options(&json!({"url": url, "generation": generation})),
    ];
    let answers = |tree: &PuppetTree, env: &str| -> Vec<String> {
        let jobs: Vec<Vec<String>> = LOOKUPS
            .iter()
            .map(|(flags, key)| tree.lookup(env, &[*flags, &[*key]].concat()))
            .collect();
        let outcomes = tree.run(&jobs);
        outcomes
            .iter()
            .map(|o| format!("{} {}", o.status, text(&o.stdout)))
            .collect()
    };
    let yaml = answers(&trees[0], "yaml");
    let packages = LOOKUPS
        .iter()
        .position(|(_, k)| *k == "shimtest::packages")
        .unwrap();
    for env in ["hierad", "hieradkey"] {
        let now = answers(&trees[0], env);
        assert_ne!(
            now[packages], yaml[packages],
            "{env}: the change is seen unpinned"
        );
        assert!(
            now[packages].contains("changed"),
            "{env}: {}",
            now[packages]
        );
        for pinned in &trees[1..] {
            assert_eq!(answers(pinned, env), yaml, "{env} pinned");
        }
    }
    let refused =
        PuppetTree::with_options(&json!({"url": url, "tag": "deploy-1", "generation": 1}));
    let out = refused.run(&[refused.explain("hierad", &["shimtest::message"])]);
    assert!(
        text(&out[0].stdout).contains("give option generation or tag, not both"),
        "{:?}",
        text(&out[0].stdout)
    );
}
