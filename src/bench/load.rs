//! Loads a generated environment (`root/`, `nodes/<fqdn>/`) into hierad:
//! through a running server's import API (one all-or-nothing import per
//! level, as `hierad import --level` sends them), or straight into a
//! database file in one transaction. Either way it is timed: the import
//! rate is one of the benchmark's figures.

use super::BenchError;
use super::client::{self, Target};
use crate::configdb::{ComponentRef, DocKind, LevelPath, NewComponent, NewEnvironment};
use crate::store::{ImportBatch, ImportDoc, SqliteStore, Store};
use crate::tree::{TreeFile, read_tree};
use hyper::Method;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// The component generated resources are defined in.
pub const COMPONENT: &str = "fuel";

/// What a load did, and how fast.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Loaded {
    pub levels: usize,
    pub documents: usize,
    /// Size of the documents as wire JSON.
    pub bytes: u64,
    pub seconds: f64,
    pub documents_per_s: f64,
    pub levels_per_s: f64,
    pub mb_per_s: f64,
}

impl Loaded {
    fn finish(mut self, started: Instant) -> Loaded {
        self.seconds = started.elapsed().as_secs_f64();
        let per_s = |n: f64| {
            if self.seconds > 0.0 {
                (n / self.seconds * 10.0).round() / 10.0
            } else {
                0.0
            }
        };
        self.documents_per_s = per_s(self.documents as f64);
        self.levels_per_s = per_s(self.levels as f64);
        self.mb_per_s = per_s(self.bytes as f64 / 1e6);
        self.seconds = (self.seconds * 1000.0).round() / 1000.0;
        self
    }

    pub fn text(&self) -> String {
        format!(
            "imported {} documents at {} levels ({:.1} MB) in {:.2} s: {:.0} documents/s, {:.1} levels/s, {:.1} MB/s\n",
            self.documents,
            self.levels,
            self.bytes as f64 / 1e6,
            self.seconds,
            self.documents_per_s,
            self.levels_per_s,
            self.mb_per_s
        )
    }
}

/// The levels of a generated environment: the root, then every node
/// (`nodes/<fqdn>/`), sorted.
fn levels(dir: &Path) -> Result<Vec<(LevelPath, std::path::PathBuf)>, BenchError> {
    let root = dir.join("root");
    if !root.is_dir() {
        return Err(BenchError::Invalid(format!(
            "{} has no root/ folder: not made by `hierad bench generate`",
            dir.display()
        )));
    }
    let mut out = vec![(LevelPath::root(), root)];
    let nodes = dir.join("nodes");
    if nodes.is_dir() {
        let mut names: Vec<String> = std::fs::read_dir(&nodes)
            .map_err(BenchError::io(format!("cannot read {}", nodes.display())))?
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        for name in names {
            let path = LevelPath::parse_cli(&format!("nodes={name}"))
                .map_err(|e| BenchError::Invalid(format!("node folder {name}: {e}")))?;
            out.push((path, nodes.join(&name)));
        }
    }
    Ok(out)
}

fn read(path: &Path) -> Result<Vec<TreeFile>, BenchError> {
    Ok(read_tree(path)?)
}

/// Loads through a running server's API, as environment `env`.
///
/// # Errors
///
/// A file cannot be read, or the server refuses.
pub async fn via_server(target: &Target, dir: &Path, env: i64) -> Result<Loaded, BenchError> {
    let started = Instant::now();
    let mut trees = Vec::new();
    for (path, folder) in levels(dir)? {
        trees.push((path, read(&folder)?));
    }
    // The component defines every resource up front, as Fuel's does: a
    // node's import then defines nothing (which would rebuild the server's
    // whole snapshot).
    let mut names: Vec<&str> = trees
        .iter()
        .flat_map(|(_, files)| files.iter().map(|f| f.resource.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let definitions: Vec<serde_json::Value> = names
        .iter()
        .map(|n| serde_json::json!({"name": n}))
        .collect();
    let post = |path: String, body: serde_json::Value| async move {
        client::send(target, Method::POST, &path, body.to_string().into_bytes())
            .await
            .map_err(BenchError::io(format!("cannot reach {}", target.url())))
    };
    let (status, body) = post(
        "/api/v1/config/components".to_owned(),
        serde_json::json!({"name": COMPONENT, "resource_definitions": definitions}),
    )
    .await?;
    if !(status.is_success() || status.as_u16() == 409) {
        return Err(BenchError::refused("creating the component", status, &body));
    }
    let (status, body) = post(
        "/api/v1/config/environments".to_owned(),
        serde_json::json!({"id": env, "components": [COMPONENT], "hierarchy_levels": ["nodes"]}),
    )
    .await?;
    if !(status.is_success() || status.as_u16() == 409) {
        return Err(BenchError::refused(
            format!("creating environment {env}"),
            status,
            &body,
        ));
    }
    let mut loaded = Loaded::default();
    for (path, files) in trees {
        let mut documents = serde_json::Map::new();
        for f in files {
            let json = crate::wire::to_json(&crate::hiera::Value::Hash(f.content));
            loaded.bytes += json.to_string().len() as u64;
            loaded.documents += 1;
            documents.insert(f.resource, json);
        }
        let mut body = serde_json::json!({"replace": true, "documents": documents});
        if !path.is_root() {
            body["level"] = path.to_string().into();
        }
        let (status, reply) =
            post(format!("/api/v1/config/environments/{env}/import"), body).await?;
        if !status.is_success() {
            return Err(BenchError::refused(
                format!("importing {path}"),
                status,
                &reply,
            ));
        }
        loaded.levels += 1;
    }
    Ok(loaded.finish(started))
}

/// Loads straight into the database `db` (created if missing), in one
/// transaction, as environment `env`.
///
/// # Errors
///
/// A file cannot be read, or the store refuses.
pub fn into_db(db: &Path, dir: &Path, env: i64) -> Result<Loaded, BenchError> {
    let levels = levels(dir)?;
    let started = Instant::now();
    let store = SqliteStore::open(db)?;
    let component = match store.component(&ComponentRef::Name(COMPONENT.to_owned())) {
        Ok(c) => c,
        Err(_) => store.create_component(&NewComponent {
            id: None,
            name: COMPONENT.to_owned(),
            resource_definitions: Vec::new(),
        })?,
    };
    if store.environment(env).is_err() {
        store.create_environment(&NewEnvironment {
            id: Some(env),
            components: vec![ComponentRef::Id(component.id)],
            hierarchy_levels: vec!["nodes".to_owned()],
        })?;
    }
    let mut loaded = Loaded::default();
    let mut batch = ImportBatch {
        env,
        documents: Vec::new(),
        replace: Vec::new(),
        define_missing_in: Some(ComponentRef::Id(component.id)),
    };
    for (path, folder) in levels {
        for f in read(&folder)? {
            loaded.bytes +=
                crate::wire::to_string(&crate::hiera::Value::Hash(f.content.clone())).len() as u64;
            loaded.documents += 1;
            batch.documents.push(ImportDoc {
                path: path.clone(),
                resource: f.resource,
                kind: DocKind::Values,
                content: f.content,
            });
        }
        batch.replace.push((path, DocKind::Values));
        loaded.levels += 1;
    }
    store.import(&batch)?;
    Ok(loaded.finish(started))
}
