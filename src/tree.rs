//! A Hiera data tree on disk (`/etc/hiera`): every `*.yaml` and `*.json`
//! file under a folder, read exactly as Hiera's backends read them, named
//! as ConfigDB resources (relative path without the extension; a top-level
//! `hiera.yaml` becomes the resource `hiera`). Used by `hierad import`, the
//! server's sample loader and the bench generator.

use crate::configdb::model::check_resource_name;
use crate::hiera::{Hash, Value, encoding, json, yaml};
use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A tree that cannot be read as Hiera data; the message names the file
/// and the problem.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TreeError(pub String);

macro_rules! tree_error {
    ($($arg:tt)*) => { TreeError(format!($($arg)*)) };
}

/// One data file of a tree.
#[derive(Clone, Debug, PartialEq)]
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
/// The first file that cannot be read or is not Hiera data (the error
/// names it), a file name that is not a valid resource name, or two files
/// (`a.yaml`, `a.json`) that would be the same resource.
pub fn read_tree(root: &Path) -> Result<Vec<TreeFile>, TreeError> {
    read_tree_with(root, &mut |_, _| {})
}

/// [`read_tree`], calling `on_file(read, total)` after each file is read
/// (a progress bar's hook).
///
/// # Errors
///
/// As [`read_tree`].
pub fn read_tree_with(
    root: &Path,
    on_file: &mut dyn FnMut(usize, usize),
) -> Result<Vec<TreeFile>, TreeError> {
    if !root.is_dir() {
        return Err(tree_error!("{} is not a directory", root.display()));
    }
    let mut files = Vec::new();
    let mut seen_dirs = HashSet::new();
    walk(root, &mut files, &mut seen_dirs)?;
    files.sort();
    let total = files.len();
    let mut docs: Vec<TreeFile> = Vec::with_capacity(total);
    for path in files {
        let resource = resource_name(root, &path)?;
        if let Some(other) = docs.iter().find(|d| d.resource == resource) {
            return Err(tree_error!(
                "{} and {} would both be resource \"{resource}\"; keep one of them",
                other.path.display(),
                path.display()
            ));
        }
        let content = read_file(&path)?;
        docs.push(TreeFile {
            resource,
            path,
            content,
        });
        on_file(docs.len(), total);
    }
    docs.sort_by(|a, b| a.resource.cmp(&b.resource));
    Ok(docs)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, seen: &mut HashSet<PathBuf>) -> Result<(), TreeError> {
    let io = |e: std::io::Error| tree_error!("cannot read {}: {e}", dir.display());
    // A symlinked folder is followed once: a link loop ends here.
    if !seen.insert(std::fs::canonicalize(dir).map_err(io)?) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out, seen)?;
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

/// `override/node/n1` for `ROOT/override/node/n1.yaml`.
fn resource_name(root: &Path, path: &Path) -> Result<String, TreeError> {
    let relative = path
        .strip_prefix(root)
        .map_err(|_| tree_error!("{} is outside {}", path.display(), root.display()))?
        .with_extension("");
    let parts: Option<Vec<&str>> = relative
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect();
    let Some(parts) = parts else {
        return Err(tree_error!(
            "{}: the file name is not UTF-8",
            path.display()
        ));
    };
    let name = parts.join("/");
    check_resource_name(&name).map_err(|e| tree_error!("{}: {e}", path.display()))?;
    Ok(name)
}

/// Reads one data file as the yaml or json backend would.
///
/// # Errors
///
/// Unreadable, not UTF-8, unparsable, or not a Hash at the top; the
/// message names the file.
pub fn read_file(path: &Path) -> Result<Hash, TreeError> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| tree_error!("cannot read {shown}: {e}"))?;
    let is_json = path.extension().is_some_and(|e| e == "json");
    let text = if is_json {
        // Ruby's JSON parser would take such bytes apart unpredictably;
        // refuse them rather than store mangled text.
        std::str::from_utf8(&bytes)
            .map(Cow::Borrowed)
            .map_err(|e| {
                tree_error!(
                    "{shown}: not UTF-8 text (bad byte at offset {})",
                    e.valid_up_to()
                )
            })?
    } else {
        // libyaml's reader refuses them, in its own words.
        encoding::yaml_text(&bytes).map_err(|e| tree_error!("{shown}: {e}"))?
    };
    parse_data(&text, is_json).map_err(|message| tree_error!("{shown}: {message}"))
}

/// The data of a file's text: what Hiera's backend makes of it, or why it
/// cannot.
fn parse_data(text: &str, is_json: bool) -> Result<Hash, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let loaded = if is_json {
        json::load(text)
    } else {
        yaml::load(text)
    }
    .map_err(|e| e.to_string())?;
    match loaded {
        Value::Hash(h) => Ok(h),
        // The yaml backend's `YAML.load(data) || {}`; the json backend has no
        // such fallback.
        Value::Nil | Value::Bool(false) if !is_json => Ok(Hash::default()),
        other => Err(format!(
            "the top level is {} {}, not a Hash: Hiera data must be a mapping of keys to values",
            article(other.class_name()),
            other.class_name()
        )),
    }
}

fn article(class: &str) -> &'static str {
    if class.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rhash;

    /// A tree of three small data files.
    pub(crate) fn three_files() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [("a.yaml", "x: 1\n"), ("b.yaml", "y: 2\n"), ("c.json", "{}")] {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn progress_is_reported_file_by_file() {
        let dir = three_files();
        let mut seen = Vec::new();
        let docs = read_tree_with(dir.path(), &mut |read, total| seen.push((read, total))).unwrap();
        assert_eq!(docs.len(), 3);
        assert_eq!(seen, [(1, 3), (2, 3), (3, 3)]);
    }

    #[test]
    fn data_as_the_backends_read_it() {
        let one = Hash::from_iter([(Value::str("a"), Value::Int(1))]);
        let cases: &[(&str, bool, Result<Hash, &str>)] = &[
            ("a: 1\n", false, Ok(one.clone())),
            ("\u{feff}a: 1\n", false, Ok(one.clone())),
            ("", false, Ok(Hash::default())),
            ("# only a comment\n", false, Ok(Hash::default())),
            ("---\n", false, Ok(Hash::default())),
            ("false\n", false, Ok(Hash::default())),
            ("- a\n", false, Err("the top level is an Array, not a Hash")),
            (
                "just text\n",
                false,
                Err("the top level is a String, not a Hash"),
            ),
            ("a: [\n", false, Err("(Psych::SyntaxError)")),
            ("{\"a\": 1}", true, Ok(one)),
            ("", true, Err("(JSON::ParserError)")),
            ("null", true, Err("the top level is a NilClass, not a Hash")),
            ("[1]", true, Err("the top level is an Array, not a Hash")),
        ];
        for (text, is_json, want) in cases {
            let got = parse_data(text, *is_json);
            match (got, want) {
                (Ok(got), Ok(want)) => assert_eq!(&got, want, "{text:?}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{text:?}: {got}"),
                (got, want) => panic!("{text:?}: {got:?} vs {want:?}"),
            }
        }
    }

    #[test]
    fn trees_become_resources() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("override/node")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("hiera.yaml"), ":backends:\n  - yaml\n").unwrap();
        std::fs::write(root.join("astute.yaml"), "deployment_id: 15\n").unwrap();
        std::fs::write(root.join("globals.json"), "{\"g\": 2.0}").unwrap();
        std::fs::write(root.join("override/node/node-1.domain.tld.yaml"), "").unwrap();
        std::fs::write(root.join("README.md"), "not data").unwrap();
        std::fs::write(root.join(".git/x.yaml"), "- not read").unwrap();
        let docs = read_tree(root).unwrap();
        let names: Vec<&str> = docs.iter().map(|d| d.resource.as_str()).collect();
        assert_eq!(
            names,
            [
                "astute",
                "globals",
                "hiera",
                "override/node/node-1.domain.tld"
            ]
        );
        assert_eq!(docs[0].content, rhash! {"deployment_id" => Value::Int(15)});
        assert_eq!(docs[1].content, rhash! {"g" => Value::Float(2.0)});
        assert_eq!(
            docs[2].content.keys().next(),
            Some(&Value::Symbol("backends".into()))
        );
        assert!(docs[3].content.is_empty());
    }

    #[test]
    fn tree_errors_name_the_file() {
        type Files = &'static [(&'static str, &'static [u8])];
        let cases: &[(Files, &str)] = &[
            (
                &[("ok.yaml", b"a: 1\n"), ("bad.yaml", b"a: [\n")],
                "bad.yaml: ",
            ),
            (
                &[("list.yaml", b"- a\n")],
                "list.yaml: the top level is an Array",
            ),
            (
                &[("a.yaml", b"x: 1\n"), ("a.json", b"{}")],
                "would both be resource \"a\"",
            ),
            (
                &[("latin.yaml", b"a: caf\xe9\n")],
                "latin.yaml: (<unknown>): incomplete UTF-8 octet sequence",
            ),
            (
                &[("latin.json", b"{\"a\": \"caf\xe9\"}")],
                "latin.json: not UTF-8 text",
            ),
        ];
        for (files, want) in cases {
            let dir = tempfile::tempdir().unwrap();
            for (name, content) in *files {
                std::fs::write(dir.path().join(name), content).unwrap();
            }
            let err = read_tree(dir.path()).unwrap_err().to_string();
            assert!(err.contains(want), "{err}\nwant {want}");
        }
        let err = read_tree(Path::new("/no/such/tree")).unwrap_err();
        assert_eq!(err.to_string(), "/no/such/tree is not a directory");
    }
}
