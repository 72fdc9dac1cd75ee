//! Loads a generated environment (`root/`, `nodes/<fqdn>/`) into hierad:
//! through a running server's import API (one all-or-nothing import per
//! level, as `hierad import --level` sends them), or straight into a
//! database file in one transaction. Either way it is timed: the import
//! rate is one of the benchmark's figures.

use super::BenchError;
use super::client::Target;
use crate::configdb::{DocKind, LevelPath};
use crate::ops::remote::{ClientAuth, Timeouts};
use crate::ops::{self, ConfigOps, LevelDocs, Local, NewEnv, Remote, TreeImport};
use crate::tree::{TreeFile, read_tree};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Instant;

/// The component generated resources are defined in.
pub(crate) const COMPONENT: &str = "fuel";

/// What a load did, and how fast.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Loaded {
    pub(crate) levels: usize,
    pub(crate) documents: usize,
    /// Size of the documents as wire JSON.
    pub(crate) bytes: u64,
    pub(crate) seconds: f64,
    pub(crate) documents_per_s: f64,
    pub(crate) levels_per_s: f64,
    pub(crate) mb_per_s: f64,
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

    pub(crate) fn text(&self) -> String {
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

/// Loads through a running server's API, as environment `env`: one
/// all-or-nothing import per level, authenticating with `auth`.
///
/// # Errors
///
/// A file cannot be read, or the server refuses.
pub(crate) fn via_server(
    target: &Target,
    auth: ClientAuth,
    dir: &Path,
    env: i64,
) -> Result<Loaded, BenchError> {
    let started = Instant::now();
    let trees = read_levels(dir)?;
    let remote =
        Remote::connect(&target.url(), Timeouts::default(), auth).map_err(ops::OpsError::from)?;
    load(&remote, trees, env, started)
}

/// Loads straight into the database `db` (created if missing), in one
/// transaction, as environment `env`.
///
/// # Errors
///
/// A file cannot be read, or the store refuses.
pub(crate) fn into_db(db: &Path, dir: &Path, env: i64) -> Result<Loaded, BenchError> {
    let started = Instant::now();
    let trees = read_levels(dir)?;
    let local = Local::new(crate::store::open_writable(db)?);
    load(&local, trees, env, started)
}

fn read_levels(dir: &Path) -> Result<Vec<LevelDocs>, BenchError> {
    levels(dir)?
        .into_iter()
        .map(|(path, folder)| Ok((path, read(&folder)?)))
        .collect()
}

/// Every level replaced by its tree. The component defines every
/// resource up front, as Fuel's does: a node's import then defines
/// nothing (which would rebuild a server's whole snapshot).
fn load(
    ops: &dyn ConfigOps,
    trees: Vec<LevelDocs>,
    env: i64,
    started: Instant,
) -> Result<Loaded, BenchError> {
    let mut loaded = Loaded::default();
    for (_, files) in &trees {
        for f in files {
            loaded.bytes += f.content.to_stored().len() as u64;
            loaded.documents += 1;
        }
        loaded.levels += 1;
    }
    let import = TreeImport {
        env,
        levels: &trees,
        kind: DocKind::Values,
        replace: true,
        register: false,
        new_env: NewEnv {
            hiera: crate::configdb::HieraVersion::Three,
            levels: vec!["nodes".to_owned()],
            component: COMPONENT.to_owned(),
        },
        define_up_front: true,
    };
    ops::import_tree(ops, &import, &|_| Ok(()))?;
    Ok(loaded.finish(started))
}
