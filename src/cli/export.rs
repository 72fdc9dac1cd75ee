//! `hierad export --env E DIR`: writes every resource's EFFECTIVE document
//! at one level as `DIR/<resource>.yaml`, so that `hiera` over the written
//! tree gives the answers the server gives over the stored data.
//!
//! Files are written by Ruby's `to_yaml` rules ([`render::yaml::to_yaml`]),
//! which `YAML.load` (Hiera's reader) reads back to the same values, types
//! included. The resource `hiera` becomes `DIR/hiera.yaml`, the Hiera
//! configuration an import took from the tree. A resource whose effective
//! document is empty is not written: Hiera answers the same for an empty
//! data file and a missing one. Every document is rendered before the
//! first file is written, and the tree is written whole in a staging
//! folder before anything appears in DIR, so a failure (a full disk, a
//! name the file system refuses) leaves DIR as it was: DIR absent or
//! empty, the staging folder beside it is renamed to DIR; with `--force`
//! into a non-empty DIR, the staging folder is a hidden one inside DIR
//! and each file is renamed from it over its namesake, leaving other
//! files alone.
//!
//! Exported files hold passwords: they are written 0600 and new folders
//! 0700, whatever the umask (as the database and the auth file); a
//! replaced file keeps its permissions, and an existing DIR its own.
//!
//! Nothing outside DIR is ever written. A link inside DIR where a file or
//! folder would go is refused before the first file is written; folders
//! and files are then opened relative to their parent's descriptor with
//! `O_NOFOLLOW`, so a link put there meanwhile is caught too. Each file
//! appears by a rename: a reader sees the old file or the new one whole,
//! and a hard link to the old file keeps the old content.

use super::args::{Access, Conn, EnvLevel};
use super::report;
use crate::configdb::model::{check_resource_path, is_hidden};
use crate::configdb::unparsed::Unparsed;
use crate::configdb::{DocAddress, DocKind, LevelPath};
use crate::hiera::{Value, render};
use crate::ops;
use anyhow::{anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::io::{IsTerminal, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Where to write the tree (must be empty unless --force)
    #[arg(value_name = "DIR")]
    pub(crate) dir: PathBuf,
    #[command(flatten)]
    pub(crate) at: EnvLevel,
    /// Write into a non-empty DIR, overwriting files of the same names
    #[arg(long)]
    pub(crate) force: bool,
    /// Write eyaml ENC[…] values decrypted: only with --server, for a
    /// principal the server lets decrypt (others get them as stored)
    #[arg(long)]
    pub(crate) decrypt: bool,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

/// Runs `hierad export`.
///
/// # Errors
///
/// Only failures to write the output; the command's own errors are one
/// line on stderr and exit status 1.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(report(export(&args)))
}

fn export(args: &Args) -> anyhow::Result<String> {
    let dir = &args.dir;
    if !args.force && !is_empty_dir(dir)? {
        bail!(
            "{} is not empty; export into an empty folder, or give --force to overwrite",
            dir.display()
        );
    }
    let db = args.conn.open(Access::Read)?;
    let level = &args.at.path_in(db.as_ref())?;
    let names = db.resource_names(args.at.env)?;
    let bar = progress_bar(names.len());
    // (`override/node/n1.yaml`, its text)
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut skipped = 0;
    let mut kept = Vec::new();
    for name in &names {
        bar.set_message(name.clone());
        // Names come from the store or a server: never let one climb out
        // of DIR.
        check_resource_path(name)?;
        let read = if args.decrypt {
            db.effective_decrypted(args.at.env, level, name)
        } else {
            db.effective(args.at.env, level, name)
        };
        bar.inc(1);
        let doc = match read {
            Ok(doc) => doc,
            // Hiera fails over the file as the server fails: the file as
            // it was imported.
            Err(e) if e.is_unparsed() => {
                let file = kept_on_path(db.as_ref(), args.at.env, level, name)?.ok_or(e)?;
                let ext = if file.path.ends_with(".json") {
                    "json"
                } else {
                    "yaml"
                };
                files.push((format!("{name}.{ext}"), file.bytes));
                kept.push(file.path);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        if doc.is_empty() {
            skipped += 1;
            continue;
        }
        let text = render::yaml::to_yaml(&Value::Hash(doc))
            .map_err(|e| anyhow!("cannot write resource \"{name}\" as YAML: {e}"))?;
        files.push((format!("{name}.yaml"), text.into_bytes()));
    }
    bar.finish_and_clear();
    if is_empty_dir(dir)? {
        write_fresh(dir, &files)?;
    } else {
        for (rel, _) in &files {
            check_target(dir, rel)?;
        }
        write_over(dir, &files)?;
    }
    let mut done = format!(
        "exported {} resource(s) of environment {} at {} to {} ({skipped} empty, not written)",
        files.len(),
        args.at.env,
        args.at.shown_level(),
        dir.display()
    );
    // Names from before hidden ones were refused: written, but an import
    // of the tree skips them, and `import --replace` deletes them.
    let hidden: Vec<&str> = files
        .iter()
        .filter_map(|(rel, _)| {
            rel.strip_suffix(".yaml")
                .or_else(|| rel.strip_suffix(".json"))
        })
        .filter(|name| is_hidden(name))
        .collect();
    if !kept.is_empty() {
        done.push_str(&format!(
            "\n{} file(s) kept unparsed written back as imported (Hiera fails the lookups that read them): {}",
            kept.len(),
            kept.join(", ")
        ));
    }
    if !hidden.is_empty() {
        done.push_str(&format!(
            "\nwarning: {} resource(s) written as hidden files, which an import of this folder skips (and `import --replace` deletes from the environment): {}; rename them",
            hidden.len(),
            hidden.join(", ")
        ));
    }
    Ok(done)
}

/// The data file kept unparsed that the effective document of `resource`
/// at `level` reads: the most specific first, overrides before values.
fn kept_on_path(
    db: &dyn ops::ConfigOps,
    env: i64,
    level: &LevelPath,
    resource: &str,
) -> anyhow::Result<Option<Unparsed>> {
    let pairs = level.pairs();
    for n in (0..=pairs.len()).rev() {
        let path = LevelPath::new(pairs[..n].to_vec());
        for kind in [DocKind::Overrides, DocKind::Values] {
            let at = DocAddress::new(env, path.clone(), resource, kind);
            if let Some(file) = db.kept_file(&at)? {
                return Ok(Some(file));
            }
        }
    }
    Ok(None)
}

/// A directory is empty, or absent.
///
/// # Errors
///
/// It cannot be listed (or is a file).
pub(crate) fn is_empty_dir(dir: &Path) -> anyhow::Result<bool> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(anyhow!(
            "cannot use {} as the export folder: {e}",
            dir.display()
        )),
    }
}

/// What is on the way to `DIR/rel` now allows writing it: no link, no
/// folder where a file goes or the other way round. Read-only: run for
/// every file before the first is written.
fn check_target(dir: &Path, rel: &str) -> anyhow::Result<()> {
    let mut path = dir.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        let is_file = i + 1 == parts.len();
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            // The rest of the way is created.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => bail!("cannot use {}: {e}", path.display()),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            return Err(link_error(&path));
        }
        if is_file && !kind.is_file() {
            bail!(
                "{} is in the way of the exported file: it is not a regular file; move it away, or export into an empty folder",
                path.display()
            );
        }
        if !is_file && !kind.is_dir() {
            bail!(
                "{} is in the way of an exported folder: it is not a folder; move it away, or export into an empty folder",
                path.display()
            );
        }
    }
    Ok(())
}

fn link_error(path: &Path) -> anyhow::Error {
    anyhow!(
        "{} is a symbolic link; export writes only inside the folder and never through links: remove the link, or export into an empty folder",
        path.display()
    )
}

/// Mode of exported files and of the folders export creates.
const FILE_MODE: u32 = 0o600;
const FOLDER_MODE: u32 = 0o700;

/// Writes `files` into an absent or empty `dir`: whole into a staging
/// folder beside it, which is then renamed to `dir`. A failure removes
/// the staging folder and leaves `dir` as it was.
fn write_fresh(dir: &Path, files: &[(String, Vec<u8>)]) -> anyhow::Result<()> {
    // DIR is the user's choice: a link naming it is followed.
    let target = match std::fs::canonicalize(dir) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => dir.to_path_buf(),
        Err(e) => bail!("cannot use {} as the export folder: {e}", dir.display()),
    };
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    std::fs::create_dir_all(&parent)
        .map_err(|e| anyhow!("cannot create {}: {e}", parent.display()))?;
    // Hidden, so an import of the parent skips one a crash left behind.
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}.hierad-export-"))
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(FOLDER_MODE))
        .tempdir_in(&parent)
        .map_err(|e| {
            anyhow!(
                "cannot create a staging folder in {}: {e}",
                parent.display()
            )
        })?;
    let root = open_dir(staging.path())?;
    for (rel, text) in files {
        write_file(root.as_fd(), dir, rel, text)?;
    }
    // An existing (empty) DIR keeps its permissions; a new one is 0700.
    let mode = std::fs::metadata(&target).map_or(FOLDER_MODE, |m| m.permissions().mode() & 0o7777);
    rustix::fs::fchmod(&root, Mode::from_raw_mode(mode))
        .map_err(|e| anyhow!("cannot set the mode of {}: {e}", dir.display()))?;
    // Replaces an empty folder in one step; refused if one appeared
    // meanwhile with something in it.
    std::fs::rename(staging.path(), &target)
        .map_err(|e| anyhow!("cannot put the export in place at {}: {e}", dir.display()))?;
    let _ = staging.keep();
    Ok(())
}

/// Writes `files` into the non-empty `dir` (`--force`): whole into a
/// hidden staging folder inside it, then each renamed over its namesake
/// (a replaced file keeps its permissions). A failure while staging
/// leaves `dir` as it was.
fn write_over(dir: &Path, files: &[(String, Vec<u8>)]) -> anyhow::Result<()> {
    let staging = tempfile::Builder::new()
        .prefix(".hierad-export-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(FOLDER_MODE))
        .tempdir_in(dir)
        .map_err(|e| anyhow!("cannot create a staging folder in {}: {e}", dir.display()))?;
    let staged = open_dir(staging.path())?;
    for (rel, text) in files {
        write_file(staged.as_fd(), dir, rel, text)?;
    }
    let root = open_dir(dir)?;
    for (rel, _) in files {
        put_in_place(root.as_fd(), staged.as_fd(), dir, rel)?;
    }
    Ok(())
}

/// A folder opened for `*at` calls.
fn open_dir(dir: &Path) -> anyhow::Result<OwnedFd> {
    rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| anyhow!("cannot use {} as the export folder: {e}", dir.display()))
}

/// The folder `folders` under `root` (shown as `dir`), each created 0700
/// if missing and opened without following links; `None` for `root`.
fn open_folders(
    root: BorrowedFd<'_>,
    dir: &Path,
    folders: &[&str],
) -> anyhow::Result<(Option<OwnedFd>, PathBuf)> {
    let mut shown = dir.to_path_buf();
    let mut parent: Option<OwnedFd> = None;
    for folder in folders {
        shown.push(folder);
        let at = parent.as_ref().map_or(root, AsFd::as_fd);
        match rustix::fs::mkdirat(at, *folder, Mode::from_raw_mode(FOLDER_MODE)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => bail!("cannot create {}: {e}", shown.display()),
        }
        let opened = rustix::fs::openat(
            at,
            *folder,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        );
        parent = Some(opened.map_err(|e| match e {
            Errno::LOOP | Errno::NOTDIR => link_error(&shown),
            e => anyhow!("cannot open {}: {e}", shown.display()),
        })?);
    }
    Ok((parent, shown))
}

/// Writes `rel` (`a/b.yaml`) under the staging folder `root`, a new
/// file 0600 (folders 0700) whatever the umask; `dir` names the export
/// in messages.
fn write_file(root: BorrowedFd<'_>, dir: &Path, rel: &str, text: &[u8]) -> anyhow::Result<()> {
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((file, folders)) = parts.split_last() else {
        bail!("cannot write an unnamed file in {}", dir.display());
    };
    let (parent, mut shown) = open_folders(root, dir, folders)?;
    let at = parent.as_ref().map_or(root, AsFd::as_fd);
    shown.push(file);
    write_new(at, file, text).map_err(|e| anyhow!("cannot write {}: {e}", shown.display()))
}

/// A new file `name` in `at` holding `text`, mode 0600.
fn write_new(at: BorrowedFd<'_>, name: &str, text: &[u8]) -> std::io::Result<()> {
    let fd = rustix::fs::openat(
        at,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(FILE_MODE),
    )?;
    // Exactly these bits, whatever the umask.
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(FILE_MODE))?;
    let mut file = std::fs::File::from(fd);
    file.write_all(text)
}

/// Moves the staged `rel` from `staged` to its place under `root`
/// (shown as `dir`), over a file of the same name, whose permissions it
/// takes: a replaced file may hold passwords, and its owner chose who
/// reads it.
fn put_in_place(
    root: BorrowedFd<'_>,
    staged: BorrowedFd<'_>,
    dir: &Path,
    rel: &str,
) -> anyhow::Result<()> {
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((file, folders)) = parts.split_last() else {
        bail!("cannot write an unnamed file in {}", dir.display());
    };
    let (from, _) = open_folders(staged, dir, folders)?;
    let from = from.as_ref().map_or(staged, AsFd::as_fd);
    let (parent, mut shown) = open_folders(root, dir, folders)?;
    let at = parent.as_ref().map_or(root, AsFd::as_fd);
    shown.push(file);
    match rustix::fs::statat(at, *file, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => {
                rustix::fs::chmodat(
                    from,
                    *file,
                    Mode::from_raw_mode(stat.st_mode & 0o777),
                    AtFlags::empty(),
                )
                .map_err(|e| anyhow!("cannot write {}: {e}", shown.display()))?;
            }
            FileType::Symlink => return Err(link_error(&shown)),
            _ => bail!(
                "{} is in the way of the exported file: it is not a regular file",
                shown.display()
            ),
        },
        Err(Errno::NOENT) => {}
        Err(e) => bail!("cannot use {}: {e}", shown.display()),
    }
    rustix::fs::renameat(from, *file, at, *file)
        .map_err(|e| anyhow!("cannot write {}: {e}", shown.display()))
}

fn progress_bar(len: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len as u64);
    if let Ok(style) = ProgressStyle::with_template("exporting {pos}/{len} {wide_bar} {msg}") {
        bar.set_style(style);
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_folders() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let cases: Vec<(PathBuf, Result<bool, &str>)> = vec![
            (dir.path().join("absent"), Ok(true)),
            (dir.path().to_owned(), Ok(false)),
            (file.clone(), Err("cannot use")),
        ];
        let empty = tempfile::tempdir().unwrap();
        let mut cases = cases;
        cases.push((empty.path().to_owned(), Ok(true)));
        for (path, want) in cases {
            match (is_empty_dir(&path), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{}", path.display()),
                (Err(e), Err(msg)) => assert!(e.to_string().contains(msg), "{e}"),
                (got, want) => panic!("{}: {got:?} vs {want:?}", path.display()),
            }
        }
    }
}
