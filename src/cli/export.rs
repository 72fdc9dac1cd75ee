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
//! empty (or absent) unless `--force`, which overwrites files of the same
//! names and leaves other files alone.

use super::args::{Conn, EnvLevel};
use super::report;
use crate::configdb::model::check_resource_name;
use crate::hiera::{Value, render};
use anyhow::{anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to write the tree (must be empty unless --force)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub at: EnvLevel,
    /// Write into a non-empty DIR, overwriting files of the same names
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub conn: Conn,
}

/// Runs `hierad export`.
///
/// # Errors
///
/// Only failures to write the output; the command's own errors are one
/// line on stderr and exit status 1.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(report(export(&args)))
}

fn export(args: &Args) -> anyhow::Result<String> {
    let level = &args.at.level;
    let dir = &args.dir;
    if !args.force && !is_empty_dir(dir)? {
        bail!(
            "{} is not empty; export into an empty folder, or give --force to overwrite",
            dir.display()
        );
    }
    let db = args.conn.open(false)?;
    let names = db.resource_names(args.at.env)?;
    let bar = progress_bar(names.len());
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let mut skipped = 0;
    for name in &names {
        bar.set_message(name.clone());
        // Names come from the store or a server: never let one climb out
        // of DIR.
        check_resource_name(name)?;
        let doc = db.effective(args.at.env, level, name)?;
        bar.inc(1);
        if doc.is_empty() {
            skipped += 1;
            continue;
        }
        let text = render::yaml::to_yaml(&Value::Hash(doc))
            .map_err(|e| anyhow!("cannot write resource \"{name}\" as YAML: {e}"))?;
        files.push((dir.join(format!("{name}.yaml")), text));
    }
    bar.finish_and_clear();
    for (path, text) in &files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| anyhow!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(path, text).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    }
    Ok(format!(
        "exported {} resource(s) of environment {} at {} to {} ({skipped} empty, not written)",
        files.len(),
        args.at.env,
        args.at.shown_level(),
        dir.display()
    ))
}

/// A directory is empty, or absent.
///
/// # Errors
///
/// It cannot be listed (or is a file).
pub fn is_empty_dir(dir: &Path) -> anyhow::Result<bool> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(anyhow!(
            "cannot use {} as the export folder: {e}",
            dir.display()
        )),
    }
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
