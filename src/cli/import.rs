//! `hierad import DIR --env E`: uploads an `/etc/hiera` tree into one level
//! of an environment, all or nothing.
//!
//! The tree: every `*.yaml` and `*.json` file under DIR, recursively, read
//! as Hiera's backends read them (YAML through Psych's `YAML.load` after a
//! BOM, an empty or `false` document being empty data; JSON through
//! `JSON.parse`, which must give a Hash). Each file is the resource named
//! by its path relative to DIR without the extension, `/`-separated:
//! `override/node/node-1.domain.tld.yaml` is `override/node/node-1.domain.tld`,
//! and a top-level `hiera.yaml` is the resource `hiera`, which the server
//! takes as the environment's Hiera configuration. Entries whose names
//! start with `.` are skipped (`.git`, editor files).
//!
//! Every file is read and checked before anything is written; then one
//! transaction writes them all (`Store::import` locally, `POST …/import`
//! over HTTP). Resources the environment does not define yet are defined
//! in its first component. `--replace` makes the level hold exactly the
//! tree: documents of that kind at that level that the tree lacks get a
//! deletion marker (the other kind, e.g. the user's overrides, stays).
//!
//! A missing environment is created first, with the id `--env`, the
//! hierarchy levels `--levels` (comma-separated, least to most specific;
//! default `nodes`, Fuel's) and the component `--component` (default
//! `hierad`, created empty if missing). For an existing environment,
//! `--levels` must match its levels and `--component` may not be given.

use super::args::{Access, Conn, EnvLevel};
use super::config::KindArg;
use super::report;
use crate::api::ImportSummary;
use crate::configdb::{DocKind, Environment};
use crate::ops::{self, NewEnv, OpsError, TreeImport};
use crate::tree::{Limits, TreeFile};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The levels of an environment `import` creates, unless `--levels`.
pub(crate) const DEFAULT_LEVELS: &str = "nodes";

/// The component of an environment `import` creates, unless `--component`.
pub(crate) const DEFAULT_COMPONENT: &str = "hierad";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The Hiera data tree to upload, e.g. /etc/hiera
    #[arg(value_name = "DIR")]
    pub(crate) dir: PathBuf,
    #[command(flatten)]
    pub(crate) at: EnvLevel,
    /// Make the level hold exactly this tree: other documents of --kind there are deleted
    #[arg(long)]
    pub(crate) replace: bool,
    /// Add each value of --level to its level's register (created if
    /// missing): with a register, the environment refuses level values it
    /// does not list (see `hierad register`)
    #[arg(long)]
    pub(crate) register: bool,
    /// Which document of each resource the files become
    #[arg(long, value_enum, default_value = "values")]
    pub(crate) kind: KindArg,
    /// Hierarchy levels of a NEW environment, least to most specific [default: nodes]
    #[arg(long, value_name = "L1,L2,…", value_delimiter = ',')]
    pub(crate) levels: Option<Vec<String>>,
    /// Component of a NEW environment, created if missing [default: hierad]
    #[arg(long, value_name = "NAME")]
    pub(crate) component: Option<String>,
    /// Largest data file read, in MiB; a larger one stops the import
    #[arg(long, value_name = "MIB", default_value_t = crate::tree::DEFAULT_FILE_MIB)]
    pub(crate) max_file_mib: u64,
    /// Most data the tree's files may hold together, in MiB
    #[arg(long, value_name = "MIB", default_value_t = crate::tree::DEFAULT_TOTAL_MIB)]
    pub(crate) max_total_mib: u64,
    #[command(flatten)]
    pub(crate) dry: super::dry_run::DryRunArg,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

/// [`crate::tree::read_tree_with`], advancing `bar` file by file (the
/// caller clears it).
///
/// # Errors
///
/// As [`crate::tree::read_tree_with`].
pub(crate) fn read_tree(
    root: &Path,
    limits: &Limits,
    bar: &ProgressBar,
) -> anyhow::Result<Vec<TreeFile>> {
    let docs = crate::tree::read_tree_with(root, limits, &mut |read, total| {
        bar.set_length(total as u64);
        bar.set_position(read as u64);
    })?;
    Ok(docs)
}

/// The levels of the environment the import creates if it is missing.
fn new_levels(args: &Args) -> Vec<String> {
    args.levels
        .clone()
        .unwrap_or_else(|| vec![DEFAULT_LEVELS.to_owned()])
}

/// Runs `hierad import`.
///
/// # Errors
///
/// Only failures to write the output; the command's own errors are one
/// line on stderr and exit status 1.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(report(import(&args)))
}

fn import(args: &Args) -> anyhow::Result<String> {
    let kind = DocKind::from(args.kind);
    let bar = progress_bar();
    let limits = Limits::mib(args.max_file_mib, args.max_total_mib);
    let docs = read_tree(&args.dir, &limits, &bar);
    bar.finish_and_clear();
    let docs = docs?;
    let count = docs.len();
    let db = args.conn.open(Access::Create)?;
    if let Some(format) = args.dry.dry_run {
        return dry_run(args, db.as_ref(), docs, format);
    }
    let spinner = spinner(format!("writing {count} documents"));
    let path = match db.environment(args.at.env)? {
        Some(env) => args.at.level.with_level_aliases(&env.hierarchy_levels),
        None => args.at.level.with_level_aliases(&new_levels(args)),
    };
    let levels = [(path, docs)];
    let import = TreeImport {
        env: args.at.env,
        levels: &levels,
        kind,
        replace: args.replace,
        register: args.register,
        new_env: NewEnv {
            hiera: crate::configdb::HieraVersion::Three,
            levels: new_levels(args),
            component: args
                .component
                .clone()
                .unwrap_or_else(|| DEFAULT_COMPONENT.to_owned()),
        },
        define_up_front: false,
    };
    let summary = ops::import_tree(db.as_ref(), &import, &|env| check_existing(args, env));
    spinner.finish_and_clear();
    let summary = summary?;
    let mut text = format!(
        "imported {count} file(s) from {} into the {kind} of environment {} at {}: {} written, {} unchanged, {} deleted",
        args.dir.display(),
        args.at.env,
        args.at.shown_level(),
        summary.written,
        summary.unchanged,
        summary.deleted
    );
    if !summary.defined.is_empty() {
        text.push_str(&format!(
            "; defined {} new resource(s)",
            summary.defined.len()
        ));
    }
    for line in kept_unparsed(&summary) {
        text.push('\n');
        text.push_str(&line);
    }
    Ok(text)
}

/// One line per file an import kept unparsed, its text left out.
pub(super) fn kept_unparsed(summary: &ImportSummary) -> Vec<String> {
    summary
        .unparsed
        .iter()
        .map(|kept| {
            format!(
                "kept unparsed (Hiera cannot read it; lookups that read it fail): {} from {}: {} ({})",
                kept.resource,
                kept.path,
                crate::configdb::unparsed::without_text(&kept.message),
                kept.class
            )
        })
        .collect()
}

/// `import --dry-run`: what the import would change, per node; nothing
/// is written, and no environment or resource is created.
fn dry_run(
    args: &Args,
    db: &dyn ops::ConfigOps,
    docs: Vec<TreeFile>,
    format: super::dry_run::DryRunFormat,
) -> anyhow::Result<String> {
    let env = db.environment(args.at.env)?.ok_or_else(|| {
        OpsError::Refused(format!(
            "environment {} does not exist: a dry-run creates nothing (import without --dry-run creates it)",
            args.at.env
        ))
    })?;
    check_existing(args, &env)?;
    let path = args.at.level.with_level_aliases(&env.hierarchy_levels);
    path.check(&env)?;
    let kind = DocKind::from(args.kind);
    let answer = db.dry_run_import(env.id, &(path, docs), kind, args.replace, args.register)?;
    let text = super::dry_run::render(&answer, format)?;
    Ok(text.trim_end().to_owned())
}

/// An existing environment takes the tree only if the flags that shape a
/// new one say nothing that contradicts it.
fn check_existing(args: &Args, env: &Environment) -> Result<(), OpsError> {
    if args
        .levels
        .as_ref()
        .is_some_and(|levels| *levels != env.hierarchy_levels)
    {
        return Err(OpsError::Refused(format!(
            "environment {} exists with levels [{}]; --levels only shapes a new environment",
            env.id,
            env.hierarchy_levels.join(", ")
        )));
    }
    if args.component.is_some() {
        return Err(OpsError::Refused(format!(
            "environment {} exists; --component only names the component of a new environment",
            env.id
        )));
    }
    Ok(())
}

/// A bar over the files of a large tree, on stderr when it is a terminal.
fn progress_bar() -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template("reading {pos}/{len} files {wide_bar} {msg}") {
        bar.set_style(style);
    }
    bar
}

fn spinner(message: String) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::new_spinner().with_message(message);
    spinner.enable_steady_tick(Duration::from_millis(120));
    spinner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_bar_follows_the_files() {
        let dir = crate::tree::tests::three_files();
        let bar = ProgressBar::hidden();
        let docs = read_tree(dir.path(), &Limits::default(), &bar).unwrap();
        assert_eq!(docs.len(), 3);
        // Advanced by the reading itself, not by finishing the bar.
        assert!(!bar.is_finished());
        assert_eq!((bar.position(), bar.length()), (3, Some(3)));
    }
}
