//! A running hierad with the fixtures' data imported: one environment whose
//! only hierarchy level is `datadir`, each data directory at its own level
//! value (see tests/support/shim_configs.rb for the naming).

use super::server::{TestServer, call};
use serde_json::{Map, Value as Json, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment every test imports into.
pub(crate) const ENV: i64 = 1;

pub(crate) struct Hierad {
    pub(crate) server: TestServer,
}

/// A file the import left out, and why (a directory named `x.yaml`, a
/// file named `.yaml`): Hiera fails only the lookups that reach it.
#[derive(Debug)]
pub(crate) struct Skipped {
    pub(crate) path: PathBuf,
    pub(crate) reason: String,
}

impl Hierad {
    /// An empty server with environment [`ENV`] (levels: `datadir`).
    pub(crate) fn start() -> Hierad {
        let server = TestServer::empty();
        let hierad = Hierad { server };
        hierad.expect(
            "POST",
            "/api/v1/config/components",
            json!({"name": "shim", "resource_definitions": []}),
            201,
        );
        hierad.expect(
            "POST",
            "/api/v1/config/environments",
            json!({"id": ENV, "components": ["shim"], "hierarchy_levels": ["datadir"]}),
            201,
        );
        hierad
    }

    pub(crate) fn url(&self) -> &str {
        &self.server.url
    }

    /// Sends a request and insists on the status; returns the body.
    pub(crate) fn expect(&self, method: &str, path: &str, body: Json, status: u16) -> Json {
        let reply = call(
            method,
            &format!("{}{path}", self.server.url),
            Some(&body.to_string()),
            &[("content-type", "application/json")],
        );
        assert_eq!(
            reply.status, status,
            "{method} {path}: {} {}",
            reply.status, reply.body
        );
        if reply.body.is_empty() {
            Json::Null
        } else {
            reply.json()
        }
    }

    /// Imports the data directory `dir` at `level` with `hierad import DIR
    /// --replace` ([`Hierad::import_named`] with `dir` as it is).
    pub(crate) fn import_dir(&self, dir: &Path, level: &str) -> Vec<Skipped> {
        self.import_named(Path::new("/"), dir, level)
    }

    /// Imports the data directory `rel` (named relative to `base`, where
    /// Hiera runs, as Hiera names it: a file kept unparsed keeps that
    /// name, which Hiera's errors show) at `level` with `hierad import REL
    /// --replace` run in `base`. Where the command refuses the tree (a
    /// directory named *.yaml), the files are imported one by one through
    /// the import API instead, those Hiera cannot read sent as
    /// `unparsed`, and the ones left out returned.
    pub(crate) fn import_named(&self, base: &Path, rel: &Path, level: &str) -> Vec<Skipped> {
        let out = Command::new(env!("CARGO_BIN_EXE_hierad"))
            .current_dir(base)
            .arg("import")
            .arg(rel)
            .args(["--env", &ENV.to_string(), "--level", level, "--replace"])
            .args(["--server", self.url()])
            .output()
            .expect("run hierad import");
        if out.status.success() {
            return Vec::new();
        }
        let refusal = String::from_utf8_lossy(&out.stderr).into_owned();
        let dir = base.join(rel);
        let mut files = Vec::new();
        yaml_files(&dir, &mut files);
        files.sort();
        let mut documents = Map::new();
        let mut unparsed = Map::new();
        let mut skipped = Vec::new();
        for path in files {
            let relative = path.strip_prefix(&dir).unwrap().to_string_lossy();
            let resource = relative
                .strip_suffix(".yaml")
                .unwrap_or(&relative)
                .to_owned();
            if path.is_dir() {
                skipped.push(Skipped {
                    path,
                    reason: "a directory named *.yaml".into(),
                });
                continue;
            }
            if resource.is_empty() || resource.ends_with('/') {
                skipped.push(Skipped {
                    path,
                    reason: "no resource name (a file named .yaml)".into(),
                });
                continue;
            }
            match hierad::tree::read_file(&path) {
                Ok(doc) => {
                    documents.insert(
                        resource,
                        hierad::wire::to_json(&hierad::hiera::Value::Hash(doc)),
                    );
                }
                Err(_) => {
                    let named = rel.join(path.strip_prefix(&dir).unwrap());
                    let bytes = std::fs::read(&path).unwrap();
                    let file = match String::from_utf8(bytes) {
                        Ok(text) => json!({"path": named, "text": text}),
                        Err(e) => {
                            use base64::Engine as _;
                            let b64 =
                                base64::engine::general_purpose::STANDARD.encode(e.as_bytes());
                            json!({"path": named, "base64": b64})
                        }
                    };
                    unparsed.insert(resource, file);
                }
            }
        }
        assert!(
            !skipped.is_empty(),
            "hierad import refused {} but every file imports: {refusal}",
            dir.display()
        );
        if !documents.is_empty() || !unparsed.is_empty() {
            self.expect(
                "POST",
                &format!("/api/v1/config/environments/{ENV}/import"),
                json!({"level": level, "replace": true, "documents": documents, "unparsed": unparsed}),
                200,
            );
        }
        skipped
    }

    /// The number of requests the server answered on one route so far.
    pub(crate) fn requests(&self, method: &str, route: &str) -> u64 {
        let metrics = call("GET", &format!("{}/metrics", self.server.url), None, &[]).body;
        let prefix = format!("hierad_http_requests_total{{method=\"{method}\",route=\"{route}\",");
        metrics
            .lines()
            .filter(|l| l.starts_with(&prefix))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    }
}

/// `*.yaml` paths under `dir`, following links; a directory whose name
/// ends in `.yaml` is listed too (the yaml backend would try to read it).
fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let is_yaml = path.extension().is_some_and(|e| e == "yaml")
            || path.file_name().is_some_and(|n| n == ".yaml");
        if is_yaml {
            out.push(path.clone());
        }
        if path.is_dir() && !is_yaml {
            yaml_files(&path, out);
        }
    }
}
