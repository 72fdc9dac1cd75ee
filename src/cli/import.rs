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
use super::config::{Conn, Db, KindArg, fail, level_path};
use crate::configdb::model::check_resource_name;
use crate::configdb::{
    ComponentRef, ConfigError, Conflict, DocKind, Environment, LevelPath, NewComponent,
    NewEnvironment, NotFound,
};
use crate::hiera::{Hash, Value, encoding, json, yaml};
use crate::store::{ImportBatch, ImportDoc, SqliteStore, Store, StoreError};
use anyhow::{anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use std::borrow::Cow;
use std::collections::HashSet;
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
    #[arg(long, value_name = "LEVEL=VALUE", default_value = "")]
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
#[derive(Clone, Debug, PartialEq)]
pub struct TreeDoc {
    pub resource: String,
    pub path: PathBuf,
    pub content: Hash,
}

/// Runs `hierad import`.
///
/// # Errors
///
/// Only failures to write the output; the command's own errors are one
/// line on stderr and exit status 1.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match import(&args) {
        Ok(text) => {
            println!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => Ok(fail(&err)),
    }
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

/// Reads every data file under `root`, sorted by resource name.
///
/// # Errors
///
/// The first file that cannot be read or is not Hiera data (the error
/// names it), a file name that is not a valid resource name, or two files
/// (`a.yaml`, `a.json`) that would be the same resource.
pub fn read_tree(root: &Path, bar: &ProgressBar) -> anyhow::Result<Vec<TreeDoc>> {
    if !root.is_dir() {
        bail!("{} is not a directory", root.display());
    }
    let mut files = Vec::new();
    let mut seen_dirs = HashSet::new();
    walk(root, &mut files, &mut seen_dirs)?;
    files.sort();
    bar.set_length(files.len() as u64);
    let mut docs: Vec<TreeDoc> = Vec::with_capacity(files.len());
    for path in files {
        let resource = resource_name(root, &path)?;
        if let Some(other) = docs.iter().find(|d| d.resource == resource) {
            bail!(
                "{} and {} would both be resource \"{resource}\"; keep one of them",
                other.path.display(),
                path.display()
            );
        }
        bar.set_message(resource.clone());
        let content = read_data_file(&path)?;
        docs.push(TreeDoc {
            resource,
            path,
            content,
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    docs.sort_by(|a, b| a.resource.cmp(&b.resource));
    Ok(docs)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, seen: &mut HashSet<PathBuf>) -> anyhow::Result<()> {
    let io = |e: std::io::Error| anyhow!("cannot read {}: {e}", dir.display());
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
fn resource_name(root: &Path, path: &Path) -> anyhow::Result<String> {
    let relative = path
        .strip_prefix(root)
        .map_err(|_| anyhow!("{} is outside {}", path.display(), root.display()))?
        .with_extension("");
    let parts: Option<Vec<&str>> = relative
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect();
    let Some(parts) = parts else {
        bail!("{}: the file name is not UTF-8", path.display());
    };
    let name = parts.join("/");
    check_resource_name(&name).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    Ok(name)
}

/// Reads one data file as the yaml or json backend would.
///
/// # Errors
///
/// Unreadable, not UTF-8, unparsable, or not a Hash at the top; the
/// message names the file.
pub fn read_data_file(path: &Path) -> anyhow::Result<Hash> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| anyhow!("cannot read {shown}: {e}"))?;
    let is_json = path.extension().is_some_and(|e| e == "json");
    let text = if is_json {
        // Ruby's JSON parser would take such bytes apart unpredictably;
        // refuse them rather than store mangled text.
        std::str::from_utf8(&bytes)
            .map(Cow::Borrowed)
            .map_err(|e| {
                anyhow!(
                    "{shown}: not UTF-8 text (bad byte at offset {})",
                    e.valid_up_to()
                )
            })?
    } else {
        // libyaml's reader refuses them, in its own words.
        encoding::yaml_text(&bytes).map_err(|e| anyhow!("{shown}: {e}"))?
    };
    parse_data(&text, is_json).map_err(|message| anyhow!("{shown}: {message}"))
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
        Value::Nil | Value::Bool(false) if !is_json => Ok(Hash::new()),
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
mod tests {
    use super::*;
    use crate::rhash;

    #[test]
    fn data_as_the_backends_read_it() {
        let one = Hash::from_iter([(Value::str("a"), Value::Int(1))]);
        let cases: &[(&str, bool, Result<Hash, &str>)] = &[
            ("a: 1\n", false, Ok(one.clone())),
            ("\u{feff}a: 1\n", false, Ok(one.clone())),
            ("", false, Ok(Hash::new())),
            ("# only a comment\n", false, Ok(Hash::new())),
            ("---\n", false, Ok(Hash::new())),
            ("false\n", false, Ok(Hash::new())),
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
        let docs = read_tree(root, &ProgressBar::hidden()).unwrap();
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
            let err = read_tree(dir.path(), &ProgressBar::hidden())
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{err}\nwant {want}");
        }
        let err = read_tree(Path::new("/no/such/tree"), &ProgressBar::hidden()).unwrap_err();
        assert_eq!(err.to_string(), "/no/such/tree is not a directory");
    }
}
