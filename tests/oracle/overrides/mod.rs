//! `override_resources` (puppet/lib/puppet/type/override_resources.rb,
//! docs/spec/override-resources.md) under the real Puppet 7: `puppet
//! apply` of manifests with safe resources (`file` under a temporary folder,
//! `notify`, `exec` of `true`), the node's `configuration`,
//! `configuration_options` and `defaults` served by a running hierad
//! through `hierad::data_hash`. Each test checks what Puppet did: file
//! contents and modes, notices, and the resources of the run's report.
//!
//! Every case gets its own hierad environment and Puppet environment, so
//! one batch of `puppet apply` runs (one Ruby with Puppet loaded, a fork
//! per run) covers a whole rule.

use crate::shim::env::Hierad;
use crate::shim::oracle::{Outcome, ROOT, ruby_json, support};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Value as Json, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

mod operator;
mod per_type;
mod readme;
mod rules;

/// The datasources of the Puppet environments' hierarchy, most specific
/// first, all at one hierad level.
pub(crate) const NODE_DATA: &str = "override/configuration/node";
pub(crate) const CLUSTER_DATA: &str = "override/configuration/cluster";
pub(crate) const LEVEL: &str = "datadir=override";

/// One `puppet apply`: the manifest, and the documents hierad serves
/// (`@D` in either stands for the case's own temporary folder).
pub(crate) struct Case {
    pub(crate) name: &'static str,
    pub(crate) manifest: String,
    pub(crate) node: Json,
    pub(crate) cluster: Json,
    /// `puppet apply --noop`: for resources that must not be applied
    /// (packages), seen in the report's events instead.
    pub(crate) noop: bool,
}

impl Case {
    /// A case whose data is all at the node's level.
    pub(crate) fn new(name: &'static str, manifest: impl Into<String>, node: Json) -> Case {
        Case {
            name,
            manifest: manifest.into(),
            node,
            cluster: json!({}),
            noop: false,
        }
    }
}

/// What one `puppet apply` did.
pub(crate) struct Applied {
    pub(crate) name: &'static str,
    pub(crate) dir: PathBuf,
    pub(crate) outcome: Outcome,
    /// The resources of the run's report (`File[/tmp/x]`), or none when
    /// the run wrote no report (it failed before applying).
    pub(crate) report: BTreeSet<String>,
}

impl Applied {
    pub(crate) fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.outcome.stdout).into_owned()
    }

    /// Puppet's stderr without Facter's complaints about the machine.
    pub(crate) fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.outcome.stderr)
            .lines()
            .filter(|l| !l.contains("Facter:"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The path of `name` in the case's folder.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.join("out").join(name)
    }

    /// `(content, mode)` of a file in the case's folder, None if absent.
    pub(crate) fn file(&self, name: &str) -> Option<(String, u32)> {
        use std::os::unix::fs::PermissionsExt as _;
        let path = self.path(name);
        let content = std::fs::read_to_string(&path).ok()?;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        Some((content, mode))
    }

    /// Whether the report lists the resource `File[out/a]` (paths of
    /// files are given relative to the case's folder).
    pub(crate) fn reported(&self, resource: &str) -> bool {
        self.report.contains(&self.resolve(resource))
    }

    fn resolve(&self, text: &str) -> String {
        text.replace("@D", &self.dir.to_string_lossy())
    }

    /// The notices of `notify` resources (`Notice: <message>`).
    pub(crate) fn notices(&self) -> Vec<String> {
        self.stdout()
            .lines()
            .filter_map(|l| l.strip_prefix("Notice: "))
            .filter(|l| {
                !l.starts_with('/') && !l.starts_with("Compiled ") && !l.starts_with("Applied ")
            })
            .map(str::to_owned)
            .collect()
    }

    /// A description for assertion messages.
    pub(crate) fn show(&self) -> String {
        format!(
            "{}: exit {}\nstdout:\n{}\nstderr:\n{}\nreport: {:?}",
            self.name,
            self.outcome.status,
            self.stdout(),
            self.stderr(),
            self.report
        )
    }
}

/// Runs every case through `puppet apply` against one hierad.
pub(crate) fn apply(cases: Vec<Case>) -> Vec<Applied> {
    apply_on(&Hierad::start(), cases, &|_, _, _| {})
}

/// Runs every case through `puppet apply` against `hierad`; `then` runs
/// after each case's documents are imported (hierad environment, the
/// case's folder), before Puppet runs.
pub(crate) fn apply_on(
    hierad: &Hierad,
    cases: Vec<Case>,
    then: &dyn Fn(&Hierad, i64, &Path),
) -> Vec<Applied> {
    let root = tempfile::tempdir().unwrap();
    let mut jobs = Vec::new();
    let mut dirs = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let env = 100 + i as i64;
        let dir = root.path().join(format!("case-{i}"));
        std::fs::create_dir_all(dir.join("out")).unwrap();
        let at = |text: &str| text.replace("@D", &dir.to_string_lossy());
        hierad.expect(
            "POST",
            "/api/v1/config/environments",
            json!({"id": env, "components": ["shim"], "hierarchy_levels": ["datadir"]}),
            201,
        );
        let documents = json!({NODE_DATA: &case.node, CLUSTER_DATA: &case.cluster});
        let documents: Json = serde_json::from_str(&at(&documents.to_string())).unwrap();
        hierad.expect(
            "POST",
            &format!("/api/v1/config/environments/{env}/import"),
            json!({"level": LEVEL, "replace": true, "documents": documents}),
            200,
        );
        let puppet_env = dir.join("envs/production");
        std::fs::create_dir_all(puppet_env.join("modules")).unwrap();
        install_modules(&puppet_env.join("modules"));
        std::fs::write(puppet_env.join("hiera.yaml"), hiera_yaml(hierad.url(), env)).unwrap();
        std::fs::write(dir.join("site.pp"), at(&case.manifest)).unwrap();
        then(hierad, env, &dir);
        jobs.push(json!({"args": args(&dir, case.noop), "dir": dir}));
        dirs.push(dir);
    }
    let out = ruby_json(&support("puppet_oracle.rb"), &Json::Array(jobs), &[]);
    let applied: Vec<Applied> = out
        .as_array()
        .unwrap()
        .iter()
        .zip(cases)
        .zip(dirs)
        .map(|((r, case), dir)| Applied {
            name: case.name,
            report: report(&dir),
            outcome: Outcome {
                status: r["status"].as_i64().unwrap() as i32,
                stdout: B64.decode(r["stdout"].as_str().unwrap()).unwrap(),
                stderr: B64.decode(r["stderr"].as_str().unwrap()).unwrap(),
            },
            dir,
        })
        .collect();
    // The folders must outlive the checks: keep them with the results.
    std::mem::forget(root);
    applied
}

/// The modules as an operator installs them: hiera/ as `modules/hierad`,
/// puppet/ as `modules/hierad_resources`.
fn install_modules(modules: &Path) {
    for (from, name, parts) in [
        ("hiera", "hierad", &["lib"][..]),
        ("puppet", "hierad_resources", &["lib", "manifests"][..]),
    ] {
        let (from, to) = (Path::new(ROOT).join(from), modules.join(name));
        for part in parts {
            copy_tree(&from.join(part), &to.join(part));
        }
        std::fs::copy(from.join("metadata.json"), to.join("metadata.json")).unwrap();
    }
}

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

fn hiera_yaml(url: &str, env: i64) -> String {
    let options = json!({"url": url, "environment": env, "level": LEVEL});
    format!(
        "---\nversion: 5\nhierarchy:\n  - name: hierad\n    data_hash: hierad::data_hash\n    \
         uris: {}\n    options: {options}\n",
        json!([NODE_DATA, CLUSTER_DATA])
    )
}

fn args(dir: &Path, noop: bool) -> Vec<String> {
    let d = |sub: &str| dir.join(sub).to_string_lossy().into_owned();
    let mut args = vec!["apply".to_owned()];
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
    args.extend(
        [
            "--environment",
            "production",
            "--color",
            "false",
            "--certname",
            "node-1",
        ]
        .map(str::to_owned),
    );
    if noop {
        args.push("--noop".into());
    }
    args.push(d("site.pp"));
    args
}

/// The resources of the run's report (`var/state/last_run_report.yaml`):
/// the keys of its `resource_statuses`.
fn report(dir: &Path) -> BTreeSet<String> {
    let Ok(text) = std::fs::read_to_string(dir.join("var/state/last_run_report.yaml")) else {
        return BTreeSet::new();
    };
    let key = regex::Regex::new(r#"^  "?([A-Z][A-Za-z0-9_:]*\[.*\])"?:$"#).unwrap();
    text.lines()
        .skip_while(|l| *l != "resource_statuses:")
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .filter_map(|l| key.captures(l).map(|c| c[1].to_owned()))
        .collect()
}
