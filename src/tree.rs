//! A Hiera data tree on disk (`/etc/hiera`): every `*.yaml` and `*.json`
//! file under a folder, read exactly as Hiera's backends read them (one
//! they cannot read is kept as it is: `configdb::unparsed`), named
//! as ConfigDB resources (relative path without the extension; a top-level
//! `hiera.yaml` becomes the resource `hiera`). Used by `hierad import`, the
//! server's sample loader and the bench generator. Only regular files and
//! folders inside the tree are read, within size limits: never a link, a
//! FIFO or a device.

use crate::configdb::model::check_resource_name;
use crate::configdb::unparsed::{Content, Unparsed};
use crate::hiera::Hash;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A tree that cannot be read as Hiera data; the message names the file
/// and the problem.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TreeError(pub(crate) String);

macro_rules! tree_error {
    ($($arg:tt)*) => { TreeError(format!($($arg)*)) };
}

/// The largest data file `hierad import` reads unless `--max-file-mib`:
/// the server's default body limit, and far above a Fuel `astute.yaml`.
pub(crate) const DEFAULT_FILE_MIB: u64 = 16;

/// The most data a tree may hold unless `--max-total-mib`. Reading and
/// storing YAML takes 20 to 40 times its size in memory (measured), so
/// this keeps an import's peak near 2 GiB at worst.
pub(crate) const DEFAULT_TOTAL_MIB: u64 = 64;

const MIB: u64 = 1024 * 1024;

/// Folders nest at most this deep under the root: recursion stays bounded.
const MAX_DEPTH: usize = 64;

/// How much of a tree is read: a data file over `file_bytes`, or data
/// files over `total_bytes` together, are refused. Both are checked
/// against the sizes the file system reports before anything is read, and
/// again while reading (at most one byte past a limit is ever read), so
/// memory stays bounded whatever the tree holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) file_bytes: u64,
    pub(crate) total_bytes: u64,
}

impl Limits {
    /// Limits given in MiB, as the flags give them.
    pub(crate) fn mib(file: u64, total: u64) -> Limits {
        Limits {
            file_bytes: file.saturating_mul(MIB),
            total_bytes: total.saturating_mul(MIB),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::mib(DEFAULT_FILE_MIB, DEFAULT_TOTAL_MIB)
    }
}

/// One data file of a tree.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TreeFile {
    /// The resource name: `override/node/node-1.domain.tld`.
    pub(crate) resource: String,
    pub(crate) path: PathBuf,
    /// Its data, or the file kept unparsed when Hiera cannot read it.
    pub(crate) content: Content,
}

/// [`read_tree_with`] the default [`Limits`].
///
/// # Errors
///
/// As [`read_tree_with`].
pub(crate) fn read_tree(root: &Path) -> Result<Vec<TreeFile>, TreeError> {
    read_tree_with(root, &Limits::default(), &mut |_, _| {})
}

/// [`read_tree`], and hiera-eyaml's `*.eyaml` files too, each the
/// resource its path names with the extension kept (`common.eyaml`,
/// beside `common` for `common.yaml`): a Puppet environment's datadir,
/// where Hiera 5's eyaml_lookup_key reads them.
///
/// # Errors
///
/// As [`read_tree_with`].
pub(crate) fn read_puppet_tree(root: &Path) -> Result<Vec<TreeFile>, TreeError> {
    read_files(root, &Limits::default(), true, &mut |_, _| {})
}

/// Reads every data file under `root`, sorted by resource name.
///
/// Only regular files and folders inside the tree are read; links are
/// never followed (a link to `/etc/shadow` named `x.yaml` must not be
/// uploaded), and a FIFO, socket or device named like data is refused
/// rather than opened (a FIFO would block, `/dev/zero` never ends). Every
/// folder and file is opened relative to its parent's descriptor with
/// `O_NOFOLLOW`, and each opened file's own metadata is checked, so an
/// entry swapped for a link or FIFO after it was listed is caught too.
/// `on_file(read, total)` is called after each file is read (a progress
/// bar's hook).
///
/// # Errors
///
/// The first file that cannot be read, is not a regular file, is over a
/// limit, or is not Hiera data (the error names it); a file name that is
/// not a valid resource name; or two files (`a.yaml`, `a.json`) that
/// would be the same resource.
pub(crate) fn read_tree_with(
    root: &Path,
    limits: &Limits,
    on_file: &mut dyn FnMut(usize, usize),
) -> Result<Vec<TreeFile>, TreeError> {
    read_files(root, limits, false, on_file)
}

/// [`read_tree_with`], `*.eyaml` files included when `eyaml`.
fn read_files(
    root: &Path,
    limits: &Limits,
    eyaml: bool,
    on_file: &mut dyn FnMut(usize, usize),
) -> Result<Vec<TreeFile>, TreeError> {
    let root_fd = rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::NOENT => tree_error!("{} does not exist", root.display()),
        Errno::NOTDIR => tree_error!("{} is not a directory", root.display()),
        e => tree_error!("cannot read {}: {e}", root.display()),
    })?;
    let mut found = Vec::new();
    let listing = Listing { limits, eyaml };
    walk(
        root_fd.as_fd(),
        root,
        Path::new(""),
        0,
        &listing,
        &mut found,
    )?;
    found.sort_by(|a, b| a.rel.cmp(&b.rel));
    let mut resources: HashMap<String, &Path> = HashMap::with_capacity(found.len());
    let mut named = Vec::with_capacity(found.len());
    for file in &found {
        let resource = resource_name(root, &file.rel)?;
        if let Some(other) = resources.insert(resource.clone(), &file.rel) {
            return Err(tree_error!(
                "{} and {} would both be resource \"{resource}\"; keep one of them",
                root.join(other).display(),
                root.join(&file.rel).display()
            ));
        }
        named.push(resource);
    }
    let listed: u64 = found.iter().map(|f| f.size).sum();
    if listed > limits.total_bytes {
        return Err(total_error(root, listed, limits));
    }
    let mut read = 0u64;
    let total = found.len();
    let mut docs: Vec<TreeFile> = Vec::with_capacity(total);
    for (file, resource) in found.iter().zip(named) {
        let path = root.join(&file.rel);
        // Never more than what is left of the total: a file that grew
        // since it was listed cannot take memory past the limits.
        let left = limits.total_bytes.saturating_sub(read);
        let cap = limits.file_bytes.min(left);
        let fd = open_in(root_fd.as_fd(), &file.rel, &path)?;
        let bytes = read_open(fd, &path, cap)?;
        let len = bytes.len() as u64;
        if len > cap {
            return Err(if cap == limits.file_bytes {
                file_error(&path, len, limits, true)
            } else {
                total_error(root, read + len, limits)
            });
        }
        read += len;
        let content = parse_file(&path, &bytes)?;
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

/// A data file found by [`walk`]: its path under the root and the size
/// the file system gave for it.
struct Found {
    rel: PathBuf,
    size: u64,
}

/// What a [`walk`] lists: files within `limits`, `*.eyaml` ones too
/// when `eyaml`.
struct Listing<'l> {
    limits: &'l Limits,
    eyaml: bool,
}

/// Lists the data files under the folder `dir` (shown as `shown`, `rel`
/// under the root) into `out`, names sorted so errors come in the same
/// order on every run. Reads no file.
fn walk(
    dir: BorrowedFd<'_>,
    shown: &Path,
    rel: &Path,
    depth: usize,
    listing: &Listing<'_>,
    out: &mut Vec<Found>,
) -> Result<(), TreeError> {
    let limits = listing.limits;
    let io = |e: Errno| tree_error!("cannot read {}: {e}", shown.display());
    let mut names: Vec<OsString> = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        // `.`, `..`, `.git`, editor files.
        if !name.as_bytes().starts_with(b".") {
            names.push(name.to_owned());
        }
    }
    names.sort();
    for name in names {
        let path = shown.join(&name);
        let io = |e: Errno| tree_error!("cannot read {}: {e}", path.display());
        let stat =
            rustix::fs::statat(dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(io)?;
        let is_data = is_data_name(&name, listing.eyaml);
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory => {
                if depth >= MAX_DEPTH {
                    return Err(tree_error!(
                        "{}: folders nest more than {MAX_DEPTH} deep in the tree",
                        path.display()
                    ));
                }
                let sub = open_dir_at(dir, &name, &path)?;
                walk(
                    sub.as_fd(),
                    &path,
                    &rel.join(&name),
                    depth + 1,
                    listing,
                    out,
                )?;
            }
            FileType::RegularFile if is_data => {
                let size = u64::try_from(stat.st_size).unwrap_or(0);
                if size > limits.file_bytes {
                    return Err(file_error(&path, size, limits, false));
                }
                out.push(Found {
                    rel: rel.join(&name),
                    size,
                });
            }
            FileType::Symlink => {
                // Only what would have been read is refused: a link named
                // like data, or one to a folder. A `README` link is not data.
                let to_dir = !is_data
                    && rustix::fs::statat(dir, name.as_os_str(), AtFlags::empty())
                        .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Directory);
                if is_data || to_dir {
                    return Err(link_error(dir, &name, &path, to_dir));
                }
            }
            FileType::RegularFile => {}
            other if is_data => return Err(special_error(&path, other)),
            _ => {}
        }
    }
    Ok(())
}

fn is_data_name(name: &OsStr, eyaml: bool) -> bool {
    Path::new(name)
        .extension()
        .is_some_and(|e| e == "yaml" || e == "json" || (eyaml && e == "eyaml"))
}

/// A folder inside a folder, never through a link.
fn open_dir_at(dir: BorrowedFd<'_>, name: &OsStr, shown: &Path) -> Result<OwnedFd, TreeError> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| changed_or_unreadable(shown, e))
}

/// Opens the data file `rel` under the root, each folder on the way and
/// the file itself without following links. `O_NONBLOCK`: a FIFO put
/// there since the listing opens at once (and is then refused) instead of
/// waiting for a writer.
fn open_in(root: BorrowedFd<'_>, rel: &Path, shown: &Path) -> Result<OwnedFd, TreeError> {
    let parts: Vec<&OsStr> = rel.iter().collect();
    let Some((file, folders)) = parts.split_last() else {
        return Err(tree_error!("{} is not a file", shown.display()));
    };
    let mut parent: Option<OwnedFd> = None;
    for folder in folders {
        let at = parent.as_ref().map_or(root, AsFd::as_fd);
        parent = Some(open_dir_at(at, folder, shown)?);
    }
    let at = parent.as_ref().map_or(root, AsFd::as_fd);
    rustix::fs::openat(at, *file, file_flags(), Mode::empty())
        .map_err(|e| changed_or_unreadable(shown, e))
}

fn file_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC
}

fn changed_or_unreadable(shown: &Path, e: Errno) -> TreeError {
    match e {
        // What O_NOFOLLOW answers for a link, O_DIRECTORY for a non-folder.
        Errno::LOOP | Errno::NOTDIR | Errno::NOENT => tree_error!(
            "{} changed while the tree was read (now: {e}); import reads regular files inside the tree only and never follows links; run it again once the tree is still",
            shown.display()
        ),
        e => tree_error!("cannot read {}: {e}", shown.display()),
    }
}

/// Reads an opened file, at most `cap + 1` bytes: more means over the
/// limit, which the caller reports. The handle's own metadata decides
/// whether it is a regular file, not the listing's.
fn read_open(fd: OwnedFd, shown: &Path, cap: u64) -> Result<Vec<u8>, TreeError> {
    let stat =
        rustix::fs::fstat(&fd).map_err(|e| tree_error!("cannot read {}: {e}", shown.display()))?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if kind != FileType::RegularFile {
        return Err(special_error(shown, kind));
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    let want = cap.saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(want)).unwrap_or(0));
    std::fs::File::from(fd)
        .take(want)
        .read_to_end(&mut bytes)
        .map_err(|e| tree_error!("cannot read {}: {e}", shown.display()))?;
    Ok(bytes)
}

fn link_error(dir: BorrowedFd<'_>, name: &OsStr, shown: &Path, to_dir: bool) -> TreeError {
    let target = rustix::fs::readlinkat(dir, name, Vec::new())
        .map(|t| {
            OsStr::from_bytes(t.as_bytes())
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_else(|_| "?".to_owned());
    let shown = shown.display();
    if to_dir {
        tree_error!(
            "{shown} is a symbolic link to the folder {target}; import never follows links: import that folder on its own (hierad import {target} …), or put a copy of it there instead of the link"
        )
    } else {
        tree_error!(
            "{shown} is a symbolic link to {target}; import reads regular files inside the tree only and never follows links: put a copy of the file there instead of the link"
        )
    }
}

fn special_error(shown: &Path, kind: FileType) -> TreeError {
    tree_error!(
        "{} is {}, not a regular file; import reads regular files only: move it out of the tree",
        shown.display(),
        crate::config_file::kind_name(kind)
    )
}

/// `12.0 MiB (12582912 bytes)`, or `12 bytes` under one MiB.
fn size_text(bytes: u64) -> String {
    if bytes >= MIB {
        #[allow(clippy::cast_precision_loss)] // shown with one decimal
        let mib = bytes as f64 / MIB as f64;
        format!("{mib:.1} MiB ({bytes} bytes)")
    } else {
        format!("{bytes} bytes")
    }
}

/// A limit as given: `16 MiB`.
fn limit_text(bytes: u64) -> String {
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

fn file_error(shown: &Path, size: u64, limits: &Limits, while_reading: bool) -> TreeError {
    let more = if while_reading { "more than " } else { "" };
    tree_error!(
        "{} is {more}{}, over the per-file limit of {}; nothing was imported: give --max-file-mib to raise the limit",
        shown.display(),
        size_text(size),
        limit_text(limits.file_bytes)
    )
}

fn total_error(root: &Path, total: u64, limits: &Limits) -> TreeError {
    tree_error!(
        "the data files under {} come to at least {}, over the total limit of {}; nothing was imported: import the tree in parts (a folder at a time) or give --max-total-mib to raise the limit",
        root.display(),
        size_text(total),
        limit_text(limits.total_bytes)
    )
}

/// `override/node/n1` for `override/node/n1.yaml` under the root;
/// `common.eyaml` for `common.eyaml`.
fn resource_name(root: &Path, rel: &Path) -> Result<String, TreeError> {
    let path = root.join(rel);
    let relative = if rel.extension().is_some_and(|e| e == "eyaml") {
        rel.to_path_buf()
    } else {
        rel.with_extension("")
    };
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

/// Reads one data file as the yaml or json backend would, within the
/// default per-file limit. The path is the caller's choice, so a link
/// naming it is followed (as for a tree's root); what it reaches must be a
/// regular file: a FIFO or device is refused without blocking on it.
///
/// # Errors
///
/// Unreadable, not a regular file, over the limit, not UTF-8, unparsable,
/// or not a Hash at the top (Hiera's error); the message names the file.
pub fn read_file(path: &Path) -> Result<Hash, TreeError> {
    match read_file_kept(path)? {
        Content::Data(doc) => Ok(doc),
        Content::File(file) => Err(tree_error!(
            "{}: {}",
            path.display(),
            file.parse()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        )),
    }
}

/// [`read_file`], keeping a file Hiera fails to read as it is.
///
/// # Errors
///
/// Unreadable, not a regular file, over the limit, JSON that is not UTF-8.
fn read_file_kept(path: &Path) -> Result<Content, TreeError> {
    let flags = file_flags() & !OFlags::NOFOLLOW;
    let fd = rustix::fs::open(path, flags, Mode::empty())
        .map_err(|e| tree_error!("cannot read {}: {e}", path.display()))?;
    let limits = Limits::default();
    let bytes = read_open(fd, path, limits.file_bytes)?;
    if bytes.len() as u64 > limits.file_bytes {
        return Err(file_error(path, bytes.len() as u64, &limits, true));
    }
    parse_file(path, &bytes)
}

/// Data files given as (path under the tree, text) read as [`read_tree`]
/// reads files on disk: the same resource names, the same parsing, sorted
/// by resource name. `root` only names the tree in messages. For trees
/// built into the binary (the sample).
///
/// # Errors
///
/// As [`read_tree`]: a bad resource name, two files of one resource,
/// text that is not Hiera data.
pub(crate) fn read_texts(root: &Path, files: &[(&str, &str)]) -> Result<Vec<TreeFile>, TreeError> {
    let mut docs: Vec<TreeFile> = Vec::with_capacity(files.len());
    for (rel, text) in files {
        let rel = Path::new(rel);
        let resource = resource_name(root, rel)?;
        if docs.iter().any(|d| d.resource == resource) {
            return Err(tree_error!(
                "{}: a second file of resource \"{resource}\"",
                root.join(rel).display()
            ));
        }
        let path = root.join(rel);
        let content = parse_file(&path, text.as_bytes())?;
        docs.push(TreeFile {
            resource,
            path,
            content,
        });
    }
    docs.sort_by(|a, b| a.resource.cmp(&b.resource));
    Ok(docs)
}

/// A data file's bytes as the yaml or json backend would read them: its
/// data, or (a file Hiera fails to read) the file kept unparsed, named by
/// `path` as given, which is the path Hiera names it by
/// ([`crate::configdb::unparsed`]).
fn parse_file(path: &Path, bytes: &[u8]) -> Result<Content, TreeError> {
    if path.extension().is_some_and(|e| e == "json") {
        // Ruby's JSON parser would take such bytes apart unpredictably;
        // refuse them rather than store mangled text.
        if let Err(e) = std::str::from_utf8(bytes) {
            return Err(tree_error!(
                "{}: not UTF-8 text (bad byte at offset {})",
                path.display(),
                e.valid_up_to()
            ));
        }
    }
    Ok(Content::of_file(Unparsed {
        path: path.to_string_lossy().into_owned(),
        bytes: bytes.to_vec(),
    }))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::hiera::Value;
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
        let docs = read_tree_with(dir.path(), &Limits::default(), &mut |read, total| {
            seen.push((read, total))
        })
        .unwrap();
        assert_eq!(docs.len(), 3);
        assert_eq!(seen, [(1, 3), (2, 3), (3, 3)]);
    }

    #[test]
    fn eyaml_files_are_read_only_for_a_puppet_environment_and_keep_their_extension() {
        let dir = three_files();
        std::fs::write(dir.path().join("a.eyaml"), "s: ENC[PKCS7,x]\n").unwrap();
        let names = |docs: Vec<TreeFile>| docs.into_iter().map(|d| d.resource).collect::<Vec<_>>();
        assert_eq!(names(read_tree(dir.path()).unwrap()), ["a", "b", "c"]);
        assert_eq!(
            names(read_puppet_tree(dir.path()).unwrap()),
            ["a", "a.eyaml", "b", "c"]
        );
        // A link named like eyaml data is refused there, as any data link.
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("p.eyaml")).unwrap();
        assert!(read_tree(dir.path()).is_ok());
        let err = read_puppet_tree(dir.path()).unwrap_err().to_string();
        assert!(err.contains("p.eyaml"), "{err}");
    }

    #[test]
    fn data_as_the_backends_read_it() {
        let one = Hash::from_iter([(Value::str("a"), Value::Int(1))]);
        let cases: &[(&str, &str, Option<Hash>)] = &[
            ("a: 1\n", "x.yaml", Some(one.clone())),
            ("\u{feff}a: 1\n", "x.yaml", Some(one.clone())),
            ("", "x.yaml", Some(Hash::default())),
            ("# only a comment\n", "x.yaml", Some(Hash::default())),
            ("---\n", "x.yaml", Some(Hash::default())),
            ("false\n", "x.yaml", Some(Hash::default())),
            ("- a\n", "x.yaml", None),
            ("just text\n", "x.yaml", None),
            ("a: [\n", "x.yaml", None),
            ("{\"a\": 1}", "x.json", Some(one)),
            ("", "x.json", None),
            ("null", "x.json", None),
            ("[1]", "x.json", None),
        ];
        for (text, name, want) in cases {
            let got = parse_file(Path::new(name), text.as_bytes()).unwrap();
            match (got, want) {
                (Content::Data(got), Some(want)) => assert_eq!(&got, want, "{text:?}"),
                (Content::File(file), None) => {
                    assert_eq!(
                        (file.path.as_str(), file.bytes.as_slice()),
                        (*name, text.as_bytes())
                    );
                }
                (got, want) => panic!("{text:?}: {got:?} vs {want:?}"),
            }
        }
    }

    #[test]
    fn files_hiera_cannot_read_are_kept_under_the_path_given() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ok.yaml"), "a: 1\n").unwrap();
        std::fs::write(dir.path().join("bad.yaml"), "a: [\n").unwrap();
        std::fs::write(dir.path().join("latin.yaml"), b"a: caf\xe9\n").unwrap();
        let docs = read_tree(dir.path()).unwrap();
        let kept: Vec<(&str, String)> = docs
            .iter()
            .filter_map(|d| match &d.content {
                Content::File(f) => Some((d.resource.as_str(), f.path.clone())),
                Content::Data(_) => None,
            })
            .collect();
        let under = |name: &str| dir.path().join(name).display().to_string();
        assert_eq!(
            kept,
            [("bad", under("bad.yaml")), ("latin", under("latin.yaml"))]
        );
        let err = read_file(&dir.path().join("latin.yaml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("latin.yaml: (<unknown>): incomplete UTF-8 octet sequence at line 1 column 1 (Psych::SyntaxError)"),
            "{err}"
        );
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
        let data = |i: usize| match &docs[i].content {
            Content::Data(doc) => doc,
            Content::File(f) => panic!("{f:?}"),
        };
        assert_eq!(data(0), &rhash! {"deployment_id" => Value::Int(15)});
        assert_eq!(data(1), &rhash! {"g" => Value::Float(2.0)});
        assert_eq!(
            data(2).keys().next(),
            Some(&Value::Symbol("backends".into()))
        );
        assert!(data(3).is_empty());
    }

    #[test]
    fn tree_errors_name_the_file() {
        type Files = &'static [(&'static str, &'static [u8])];
        let cases: &[(Files, &str)] = &[
            (
                &[("a.yaml", b"x: 1\n"), ("a.json", b"{}")],
                "would both be resource \"a\"",
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
        assert_eq!(err.to_string(), "/no/such/tree does not exist");
        let file = dir_with_file();
        let err = read_tree(&file.path().join("f")).unwrap_err().to_string();
        assert!(err.ends_with("/f is not a directory"), "{err}");
    }

    fn dir_with_file() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "a: 1\n").unwrap();
        dir
    }

    /// The second line of defence: an entry listed as a regular file and
    /// swapped for a link or a FIFO before it is opened is refused by the
    /// opened handle's own type, without blocking and without reading
    /// through the link.
    #[test]
    fn swapped_entries_are_caught_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::fs::write(root.join("outside/creds.yaml"), "password: x\n").unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("sub/fifo.yaml"))
            .status()
            .unwrap();
        assert!(made.success());
        std::os::unix::fs::symlink(root.join("outside/creds.yaml"), root.join("sub/link.yaml"))
            .unwrap();
        std::os::unix::fs::symlink(root.join("outside"), root.join("folder")).unwrap();
        let fd = rustix::fs::open(root, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        let read = |rel: &str| -> Result<Vec<u8>, TreeError> {
            let shown = root.join(rel);
            let opened = open_in(fd.as_fd(), Path::new(rel), &shown)?;
            read_open(opened, &shown, 1000)
        };
        let cases = [
            (
                "sub/fifo.yaml",
                "fifo.yaml is a FIFO (named pipe), not a regular file",
            ),
            ("sub/link.yaml", "link.yaml changed while the tree was read"),
            (
                "folder/creds.yaml",
                "folder/creds.yaml changed while the tree was read",
            ),
        ];
        for (rel, want) in cases {
            let err = read(rel).unwrap_err().to_string();
            assert!(err.contains(want), "{rel}: {err}");
        }
        // read_file, given a path, follows it, but reads regular files only.
        assert_eq!(read_file(&root.join("sub/link.yaml")).unwrap().len(), 1);
        let err = read_file(&root.join("sub/fifo.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("is a FIFO"), "{err}");
    }

    #[test]
    fn reads_stop_one_byte_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), "a: 12345678\n").unwrap();
        let fd = rustix::fs::open(
            dir.path(),
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .unwrap();
        let shown = dir.path().join("a.yaml");
        let opened = open_in(fd.as_fd(), Path::new("a.yaml"), &shown).unwrap();
        assert_eq!(read_open(opened, &shown, 4).unwrap(), b"a: 12");
        let small = Limits {
            file_bytes: 5,
            total_bytes: 100,
        };
        let err = read_tree_with(dir.path(), &small, &mut |_, _| {})
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a.yaml is 12 bytes, over the per-file limit of 5 bytes"),
            "{err}"
        );
    }
}
