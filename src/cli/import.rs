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

use super::client::{Client, ImportRequest, ImportSummary};
use super::config::{Conn, Db, KindArg, level_path, report};
use crate::configdb::{
    ComponentRef, ConfigError, Conflict, DocKind, Environment, LevelPath, NewComponent,
    NewEnvironment, NotFound,
};

use crate::store::{ImportBatch, ImportDoc, SqliteStore, Store, StoreError};
use anyhow::bail;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The levels of an environment `import` creates, unless `--levels`.
pub const DEFAULT_LEVELS: &str = "nodes";

/// The component of an environment `import` creates, unless `--component`.
pub const DEFAULT_COMPONENT: &str = "hierad";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Hiera data tree to upload, e.g. /etc/hiera
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The environment id (created if missing)
    #[arg(long, value_name = "ID")]
    pub env: i64,
    /// The level to upload into, level=value[,level=value…] (default: the root)
    #[arg(
        long,
        value_name = "LEVEL=VALUE",
        default_value = "",
        hide_default_value = true
    )]
    pub level: String,
    /// Make the level hold exactly this tree: other documents of --kind there are deleted
    #[arg(long)]
    pub replace: bool,
    /// Which document of each resource the files become
    #[arg(long, value_enum, default_value = "values")]
    pub kind: KindArg,
    /// Hierarchy levels of a NEW environment, least to most specific [default: nodes]
    #[arg(long, value_name = "L1,L2,…", value_delimiter = ',')]
    pub levels: Option<Vec<String>>,
    /// Component of a NEW environment, created if missing [default: hierad]
    #[arg(long, value_name = "NAME")]
    pub component: Option<String>,
    #[command(flatten)]
    pub conn: Conn,
}

/// One data file of a tree.
pub type TreeDoc = crate::tree::TreeFile;

/// [`crate::tree::read_tree`], with the progress shown on `bar`.
///
/// # Errors
///
/// As [`crate::tree::read_tree`].
pub fn read_tree(root: &Path, bar: &ProgressBar) -> anyhow::Result<Vec<TreeDoc>> {
    let docs = crate::tree::read_tree(root)?;
    bar.set_length(docs.len() as u64);
    bar.finish_and_clear();
    Ok(docs)
}

/// Runs `hierad import`.
///
/// # Errors
///
/// Only failures to write the output; the command's own errors are one
/// line on stderr and exit status 1.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(report(import(&args)))
}

fn import(args: &Args) -> anyhow::Result<String> {
    let level = level_path(&args.level)?;
    let kind = DocKind::from(args.kind);
    let docs = read_tree(&args.dir, &progress_bar())?;
    let db = Db::open(&args.conn, true)?;
    let spinner = spinner(format!("writing {} documents", docs.len()));
    let summary = match &db {
        Db::Local(store) => import_local(store, args, &level, kind, &docs),
        Db::Remote(client) => import_remote(client, args, &level, kind, &docs),
    };
    spinner.finish_and_clear();
    let summary = summary?;
    let at = if level.is_root() {
        "the root".to_owned()
    } else {
        level.to_string()
    };
    let mut text = format!(
        "imported {} file(s) from {} into the {kind} of environment {} at {at}: {} written, {} unchanged, {} deleted",
        docs.len(),
        args.dir.display(),
        args.env,
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
    Ok(text)
}

/// The levels a new environment gets, and a check that an existing one
/// agrees with what the flags say.
fn check_existing(args: &Args, env: &Environment) -> anyhow::Result<()> {
    if args
        .levels
        .as_ref()
        .is_some_and(|levels| *levels != env.hierarchy_levels)
    {
        bail!(
            "environment {} exists with levels [{}]; --levels only shapes a new environment",
            env.id,
            env.hierarchy_levels.join(", ")
        );
    }
    if args.component.is_some() {
        bail!(
            "environment {} exists; --component only names the component of a new environment",
            env.id
        );
    }
    Ok(())
}

fn new_levels(args: &Args) -> Vec<String> {
    args.levels
        .clone()
        .unwrap_or_else(|| vec![DEFAULT_LEVELS.to_owned()])
}

fn component_name(args: &Args) -> &str {
    args.component.as_deref().unwrap_or(DEFAULT_COMPONENT)
}

fn import_local(
    store: &SqliteStore,
    args: &Args,
    level: &LevelPath,
    kind: DocKind,
    docs: &[TreeDoc],
) -> anyhow::Result<ImportSummary> {
    let env = match store.environment(args.env) {
        Ok(env) => {
            check_existing(args, &env)?;
            level.check(&env)?;
            env
        }
        Err(StoreError::Config(ConfigError::NotFound(NotFound::Environment(_)))) => {
            let levels = new_levels(args);
            // The level must fit before anything is created.
            let planned = Environment {
                id: args.env,
                components: Vec::new(),
                hierarchy_levels: levels.clone(),
            };
            level.check(&planned)?;
            let name = component_name(args);
            let created = store.create_component(&NewComponent {
                id: None,
                name: name.to_owned(),
                resource_definitions: Vec::new(),
            });
            match created {
                Ok(_)
                | Err(StoreError::Config(ConfigError::Conflict(Conflict::ComponentName {
                    ..
                }))) => {}
                Err(e) => return Err(e.into()),
            }
            store.create_environment(&NewEnvironment {
                id: Some(args.env),
                components: vec![ComponentRef::Name(name.to_owned())],
                hierarchy_levels: levels,
            })?
        }
        Err(e) => return Err(e.into()),
    };
    let Some(first) = env.components.first() else {
        bail!(
            "environment {} uses no component, so the resources of the tree cannot be defined; create it with a component",
            env.id
        );
    };
    let batch = ImportBatch {
        env: env.id,
        documents: docs
            .iter()
            .map(|d| ImportDoc {
                path: level.clone(),
                resource: d.resource.clone(),
                kind,
                content: d.content.clone(),
            })
            .collect(),
        replace: if args.replace {
            vec![(level.clone(), kind)]
        } else {
            Vec::new()
        },
        define_missing_in: Some(ComponentRef::Id(*first)),
    };
    let report = store.import(&batch)?;
    Ok(ImportSummary {
        written: report.written.len(),
        unchanged: report.unchanged.len(),
        deleted: report.deleted.len(),
        defined: report.defined,
    })
}

fn import_remote(
    client: &Client,
    args: &Args,
    level: &LevelPath,
    kind: DocKind,
    docs: &[TreeDoc],
) -> anyhow::Result<ImportSummary> {
    match client.environment(args.env)? {
        Some(remote) => {
            let env = remote.to_environment();
            check_existing(args, &env)?;
            level.check(&env)?;
        }
        None => {
            let levels = new_levels(args);
            let planned = Environment {
                id: args.env,
                components: Vec::new(),
                hierarchy_levels: levels.clone(),
            };
            level.check(&planned)?;
            let name = component_name(args);
            client.ensure_component(name)?;
            client.create_environment(args.env, name, &levels)?;
        }
    }
    let request = ImportRequest {
        level,
        replace: args.replace,
        kind,
        documents: docs
            .iter()
            .map(|d| (d.resource.as_str(), &d.content))
            .collect(),
    };
    Ok(client.import(args.env, &request)?)
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
