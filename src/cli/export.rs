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
//! first file is written, so a failure leaves DIR as it was. DIR must be
//! empty (or absent) unless `--force`, which replaces files of the same
//! names and leaves other files alone.
//!
//! Nothing outside DIR is ever written. A link inside DIR where a file or
//! folder would go is refused before the first file is written; folders
//! and files are then opened relative to their parent's descriptor with
//! `O_NOFOLLOW`, so a link put there meanwhile is caught too. Each file is
//! written to a temporary name and renamed over the old one: a reader sees
//! the old file or the new one whole, a hard link to the old file keeps
//! the old content, and a replaced file keeps its permissions.

use super::args::{Access, Conn, EnvLevel};
use super::report;
use crate::configdb::model::{check_resource_path, is_hidden};
use crate::hiera::{Value, render};
use anyhow::{anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::io::{IsTerminal, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
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
    let mut files: Vec<(String, String)> = Vec::new();
    let mut skipped = 0;
    for name in &names {
        bar.set_message(name.clone());
        // Names come from the store or a server: never let one climb out
        // of DIR.
        check_resource_path(name)?;
        let doc = db.effective(args.at.env, level, name)?;
        bar.inc(1);
        if doc.is_empty() {
            skipped += 1;
            continue;
        }
        let text = render::yaml::to_yaml(&Value::Hash(doc))
            .map_err(|e| anyhow!("cannot write resource \"{name}\" as YAML: {e}"))?;
        files.push((format!("{name}.yaml"), text));
    }
    bar.finish_and_clear();
    for (rel, _) in &files {
        check_target(dir, rel)?;
    }
    let root = open_export_dir(dir)?;
    for (rel, text) in &files {
        write_file(root.as_fd(), dir, rel, text)?;
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
        .filter_map(|(rel, _)| rel.strip_suffix(".yaml"))
        .filter(|name| is_hidden(name))
        .collect();
    if !hidden.is_empty() {
        done.push_str(&format!(
            "\nwarning: {} resource(s) written as hidden files, which an import of this folder skips (and `import --replace` deletes from the environment): {}; rename them",
            hidden.len(),
            hidden.join(", ")
        ));
    }
    Ok(done)
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

/// DIR itself (created if missing). It is the user's choice, so a link
/// naming it is followed; nothing under it is.
fn open_export_dir(dir: &Path) -> anyhow::Result<OwnedFd> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow!("cannot create {}: {e}", dir.display()))?;
    rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| anyhow!("cannot use {} as the export folder: {e}", dir.display()))
}

/// Writes `rel` (`a/b.yaml`) under the folder `root` (shown as `dir`):
/// folders created or opened without following links, the text written
/// to a temporary name beside the file and renamed over it.
fn write_file(root: BorrowedFd<'_>, dir: &Path, rel: &str, text: &str) -> anyhow::Result<()> {
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((file, folders)) = parts.split_last() else {
        bail!("cannot write an unnamed file in {}", dir.display());
    };
    let mut shown = dir.to_path_buf();
    let mut parent: Option<OwnedFd> = None;
    for folder in folders {
        shown.push(folder);
        let at = parent.as_ref().map_or(root, AsFd::as_fd);
        match rustix::fs::mkdirat(at, *folder, Mode::from_raw_mode(0o777)) {
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
    let at = parent.as_ref().map_or(root, AsFd::as_fd);
    shown.push(file);
    // A replaced file keeps its permissions: it may hold passwords.
    let kept = match rustix::fs::statat(at, *file, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => Some(Mode::from_raw_mode(stat.st_mode & 0o777)),
            FileType::Symlink => return Err(link_error(&shown)),
            _ => bail!(
                "{} is in the way of the exported file: it is not a regular file",
                shown.display()
            ),
        },
        Err(Errno::NOENT) => None,
        Err(e) => bail!("cannot use {}: {e}", shown.display()),
    };
    // Hidden, so an import of DIR skips one a crash left behind.
    let temp = format!(".{file}.hierad-{}.tmp", std::process::id());
    let _ = rustix::fs::unlinkat(at, temp.as_str(), AtFlags::empty());
    let written = write_new(at, &temp, kept, text).and_then(|()| {
        rustix::fs::renameat(at, temp.as_str(), at, *file).map_err(std::io::Error::from)
    });
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(at, temp.as_str(), AtFlags::empty());
        bail!("cannot write {}: {e}", shown.display());
    }
    Ok(())
}

/// A new file `name` in `at` holding `text`, with the mode `kept` if given.
fn write_new(
    at: BorrowedFd<'_>,
    name: &str,
    kept: Option<Mode>,
    text: &str,
) -> std::io::Result<()> {
    let fd = rustix::fs::openat(
        at,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        kept.unwrap_or(Mode::from_raw_mode(0o666)),
    )?;
    if let Some(mode) = kept {
        // Exactly the old bits, whatever the umask.
        rustix::fs::fchmod(&fd, mode)?;
    }
    let mut file = std::fs::File::from(fd);
    file.write_all(text.as_bytes())
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
