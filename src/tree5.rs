//! A Puppet environment's directory (`hiera.yaml` version 5 and its
//! `data/`) read as the documents of a Hiera 5 environment, for
//! `hierad import-environment`: every data file its hierarchy can read,
//! placed by [`Layout`] (a resource at the root or at one level value),
//! and the hiera.yaml itself, as resource `hiera` at the root. Everything
//! is read and checked here, before anything is written.

use crate::configdb::model::check_resource_name;
use crate::configdb::unparsed::Content;
use crate::configdb::{LevelPath, LevelValue};
use crate::hiera::Value;
use crate::hiera5::{CONFIG_RESOURCE, Config, Layout, ORIGIN_RESOURCE};
use crate::tree::{TreeError, TreeFile, read_file, read_tree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Documents at one level path (what `ops::import_tree` writes).
pub(crate) type LevelDocs = (LevelPath, Vec<TreeFile>);

/// Why a directory cannot be imported; nothing was written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("{}: {reason}", path.display())]
    Config { path: PathBuf, reason: String },
    /// What Puppet itself refuses in the hiera.yaml (the message names it).
    #[error("{0}")]
    Puppet(String),
    #[error("{}: {error}", path.display())]
    Unexpressible {
        error: crate::hiera5::Unexpressible,
        path: PathBuf,
    },
    #[error("{0}")]
    Tree(#[from] TreeError),
    #[error("{}: {reason}", path.display())]
    File { path: PathBuf, reason: String },
}

/// A directory read whole: what the import writes.
#[derive(Debug)]
pub(crate) struct Environment5 {
    /// The new environment's levels, least specific first.
    pub(crate) levels: Vec<String>,
    /// The documents by level path (the root first), each level value
    /// registered by the import.
    pub(crate) docs: Vec<LevelDocs>,
    /// Data files the hierarchy never reads (left out), relative to the
    /// directory.
    pub(crate) unread: Vec<String>,
    /// How many data files were placed.
    pub(crate) files: usize,
    /// Where the hierarchy's files are kept.
    pub(crate) layout: Layout,
}

/// Reads `dir`: its hiera.yaml (version 5) and every data file under the
/// hierarchy's datadirs.
///
/// # Errors
/// A missing or unreadable hiera.yaml, one that is not version 5 or that
/// has no form in hierad (naming the entry), and any data file that
/// cannot be read or kept (naming it).
pub(crate) fn read(dir: &Path) -> Result<Environment5, Refusal> {
    let config_path = dir.join("hiera.yaml");
    let loaded = Value::Hash(read_file(&config_path)?);
    let refuse = |reason: String| Refusal::Config {
        path: config_path.clone(),
        reason,
    };
    let version = loaded
        .as_hash()
        .and_then(|h| h.get(&Value::str("version")))
        .cloned();
    if version != Some(Value::Int(5)) {
        return Err(refuse(
            "import-environment reads a version 5 hiera.yaml (`version: 5`)".into(),
        ));
    }
    let config = Config::from_value(&config_path.to_string_lossy(), &loaded)
        .map_err(|e| Refusal::Puppet(e.to_string()))?;
    let layout = Layout::of(&config).map_err(|error| Refusal::Unexpressible {
        error,
        path: config_path.clone(),
    })?;
    let mut by_level: BTreeMap<Option<LevelValue>, Vec<TreeFile>> = BTreeMap::new();
    let mut unread = Vec::new();
    let mut files = 0;
    for datadir in config.datadirs() {
        let root = dir.join(&datadir);
        if !root.is_dir() {
            continue;
        }
        // A data file that does not parse comes back kept unparsed
        // (`Content::File`) and is stored as such: Hiera fails only the
        // lookups that read it.
        for file in read_tree(&root)? {
            let rel = relative(dir, &file.path);
            let places = layout.places(&rel);
            if places.is_empty() {
                unread.push(rel);
                continue;
            }
            files += 1;
            for place in places {
                check_resource_name(&place.resource).map_err(|e| Refusal::File {
                    path: file.path.clone(),
                    reason: format!("hierarchy entry \"{}\": {e}", place.entry),
                })?;
                let slot = match place.level {
                    None => None,
                    Some((level, value)) => {
                        Some(LevelValue::new(level, value).map_err(|e| Refusal::File {
                            path: file.path.clone(),
                            reason: format!("its name cannot be a level value: {e}"),
                        })?)
                    }
                };
                by_level.entry(slot).or_default().push(TreeFile {
                    resource: place.resource,
                    path: file.path.clone(),
                    content: file.content.clone(),
                });
            }
        }
    }
    let Value::Hash(config_doc) = loaded.clone() else {
        unreachable!("read_file gives a Hash");
    };
    by_level.entry(None).or_default().push(TreeFile {
        resource: CONFIG_RESOURCE.into(),
        path: config_path,
        content: Content::Data(config_doc),
    });
    by_level.entry(None).or_default().push(origin(dir));
    let docs = by_level
        .into_iter()
        .map(|(slot, docs)| (LevelPath::new(slot.into_iter().collect()), docs))
        .collect();
    Ok(Environment5 {
        levels: layout.levels(),
        docs,
        unread,
        files,
        layout,
    })
}

/// Where the environment came from: `dir` made absolute, as Puppet
/// expands its environmentpath (not resolving links).
fn origin(dir: &Path) -> TreeFile {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut doc = crate::hiera::Hash::default();
    doc.insert(
        Value::str("directory"),
        Value::str(absolute.to_string_lossy().trim_end_matches('/')),
    );
    TreeFile {
        resource: ORIGIN_RESOURCE.into(),
        path: absolute,
        content: Content::Data(doc),
    }
}

/// `path` under `dir`, `/`-separated.
fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The level values the documents are at, by level (what the import
/// registers).
pub(crate) fn level_values(docs: &[LevelDocs]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, _) in docs {
        for pair in path.pairs() {
            out.entry(pair.level.clone())
                .or_default()
                .insert(pair.value.clone());
        }
    }
    out
}
