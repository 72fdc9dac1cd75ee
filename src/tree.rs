//! A Hiera data tree on disk (`/etc/hiera`): every `*.yaml` and `*.json`
//! file under a folder, read as Hiera's backends read them, named as
//! ConfigDB resources (relative path without the extension).

use crate::hiera::lookup::data_from_loaded;
use crate::hiera::{Hash, encoding, json, yaml};
use std::path::{Path, PathBuf};

/// A problem with one file of a tree; names the file.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Data { path: PathBuf, message: String },
    #[error("{path} and {other} would both be resource \"{resource}\"")]
    Duplicate {
        path: PathBuf,
        other: PathBuf,
        resource: String,
    },
}

/// One data file of a tree.
#[derive(Debug)]
pub struct TreeFile {
    /// The resource name: `override/node/node-1.domain.tld`.
    pub resource: String,
    pub path: PathBuf,
    pub content: Hash,
}

/// Reads every data file under `root`, sorted by resource name.
///
/// # Errors
///
/// The first file that cannot be read or parsed, or two files (`a.yaml`,
/// `a.json`) that would be the same resource.
pub fn read_tree(root: &Path) -> Result<Vec<TreeFile>, TreeError> {
    let mut paths = Vec::new();
    walk(root, &mut paths)?;
    paths.sort();
    let mut files: Vec<TreeFile> = Vec::with_capacity(paths.len());
    for path in paths {
        let Some(resource) = resource_name(root, &path) else {
            continue;
        };
        if let Some(other) = files.iter().find(|f| f.resource == resource) {
            return Err(TreeError::Duplicate {
                path,
                other: other.path.clone(),
                resource,
            });
        }
        let content = read_file(&path)?;
        files.push(TreeFile {
            resource,
            path,
            content,
        });
    }
    files.sort_by(|a, b| a.resource.cmp(&b.resource));
    Ok(files)
}

/// Reads one data file as the yaml or json backend would.
///
/// # Errors
///
/// Unreadable, unparsable, or not a Hash at the top.
pub fn read_file(path: &Path) -> Result<Hash, TreeError> {
    let bytes = std::fs::read(path).map_err(|source| TreeError::Io {
        path: path.to_owned(),
        source,
    })?;
    let data_error = |message: String| TreeError::Data {
        path: path.to_owned(),
        message,
    };
    let loaded = if path.extension().is_some_and(|e| e == "json") {
        let text = String::from_utf8_lossy(&bytes);
        json::load(text.strip_prefix('\u{feff}').unwrap_or(&text))
    } else {
        encoding::yaml_text(&bytes).and_then(|text| yaml::load(&text))
    }
    .map_err(|e| data_error(e.to_string()))?;
    data_from_loaded(loaded, &path.display().to_string()).map_err(|e| data_error(e.to_string()))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), TreeError> {
    let io = |source| TreeError::Io {
        path: dir.to_owned(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

fn resource_name(root: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(root).ok()?.with_extension("");
    let parts: Vec<&str> = relative
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<_>>()?;
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_tree_as_resources() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("override/node")).unwrap();
        std::fs::write(dir.path().join("astute.yaml"), "a: 1\n").unwrap();
        std::fs::write(dir.path().join("override/node/n1.yaml"), "").unwrap();
        std::fs::write(dir.path().join("globals.json"), "{\"g\": 2.0}").unwrap();
        std::fs::write(dir.path().join("README.md"), "not data").unwrap();
        let files = read_tree(dir.path()).unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.resource.as_str()).collect();
        assert_eq!(names, ["astute", "globals", "override/node/n1"]);
        assert!(files[2].content.is_empty());
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("list.yaml"), "- a\n").unwrap();
        let err = read_tree(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("list.yaml") && err.contains("is Array not Hash"),
            "{err}"
        );
        std::fs::remove_file(dir.path().join("list.yaml")).unwrap();
        std::fs::write(dir.path().join("a.yaml"), "x: 1\n").unwrap();
        std::fs::write(dir.path().join("a.json"), "{}").unwrap();
        let err = read_tree(dir.path()).unwrap_err().to_string();
        assert!(err.contains("resource \"a\""), "{err}");
    }
}
