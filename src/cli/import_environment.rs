//! `hierad import-environment DIR --env N`: a Puppet environment's Hiera
//! 5 data (DIR/hiera.yaml version 5 and its data files) moved into a new
//! Hiera 5 environment in one transaction, then the hiera.yaml a Puppet
//! master needs to read the same data through `hierad::data_hash`
//! printed on stdout (docs/hiera5.md). A version 3 hiera.yaml (Fuel's
//! /etc/hiera) makes a Hiera 3 environment of DIR instead.
//!
//! Each location of the hierarchy becomes a resource, and the variable
//! it interpolates a level whose values are the files' names
//! (`nodes/%{trusted.certname}.yaml`: resource `nodes` at
//! `trusted.certname=web1`); see `hiera5::Layout`. The whole directory is
//! read and checked before anything is written; a hierarchy hierad cannot
//! express is refused naming the entry, and nothing changes.

use super::args::{Access, Conn, Target};
use crate::api::ImportSummary;
use crate::configdb::{DocKind, Environment, HieraVersion, LevelPath};
use crate::hiera::{Hash, Value};
use crate::hiera5::{Form, Source};
use crate::ops::{self, NewEnv, OpsError, TreeImport};
use crate::tree5;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The Puppet environment's directory: its hiera.yaml (version 5) and
    /// data, e.g. /etc/puppetlabs/code/environments/production
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The id of the new environment
    #[arg(long, value_name = "ID")]
    env: i64,
    /// The URL the printed hiera.yaml gives Puppet [default: --server's,
    /// else http://localhost:8750]
    #[arg(long, value_name = "URL")]
    puppet_url: Option<String>,
    #[command(flatten)]
    conn: Conn,
}

/// The URL the printed hiera.yaml names when neither `--puppet-url` nor
/// a server is given: `hierad serve`'s default port.
const DEFAULT_URL: &str = "http://localhost:8750";

/// Runs `hierad import-environment`: the hiera.yaml on stdout, what was
/// imported on stderr.
///
/// # Errors
/// Only failures to write the output; the command's own errors are one
/// line on stderr and exit status 1.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(super::report(import(&args)))
}

fn import(args: &Args) -> anyhow::Result<String> {
    let config = crate::tree::read_file(&args.dir.join("hiera.yaml"))?;
    let version = config.get(&Value::str("version"));
    if version.is_none() && config.contains_key(&Value::Symbol("hierarchy".into())) {
        return import_hiera3(args, &config);
    }
    let read = tree5::read(&args.dir)?;
    let summary = create(args, &read.docs, read.levels.clone(), HieraVersion::Five)?;
    let mut stderr = std::io::stderr().lock();
    writeln!(
        stderr,
        "imported {} data file(s) from {} into the new Hiera 5 environment {}, levels [{}]",
        read.files,
        args.dir.display(),
        args.env,
        read.levels.join(", ")
    )?;
    for (level, values) in tree5::level_values(&read.docs) {
        writeln!(
            stderr,
            "registered {} value(s) of level {level}",
            values.len()
        )?;
    }
    if !read.modules.is_empty() {
        writeln!(
            stderr,
            "imported the module layer of {}",
            read.modules.join(", ")
        )?;
    }
    for (module, why) in &read.modules_left_out {
        writeln!(stderr, "left out module {module}: {why}")?;
    }
    for rel in &read.unread {
        writeln!(
            stderr,
            "left out {rel}: no location of the hierarchy reads it"
        )?;
    }
    for source in read.layout.sources() {
        if source.form == Form::Mapped {
            writeln!(
                stderr,
                "the printed hiera.yaml leaves out hierarchy entry \"{}\": the shim reads no mapped_paths (docs/hiera5.md)",
                source.entry
            )?;
        }
    }
    for line in super::import::kept_unparsed(&summary) {
        writeln!(stderr, "{line}")?;
    }
    Ok(puppet_config(
        &read.layout.sources(),
        &read.globbed,
        &url(args),
        args.env,
    ))
}

/// The URL the printed hiera.yaml names.
fn url(args: &Args) -> String {
    match (args.puppet_url.clone(), args.conn.target()) {
        (Some(url), _) | (None, Target::Server(url)) => url,
        (None, Target::Db(_)) => DEFAULT_URL.to_owned(),
    }
}

/// A version 3 hiera.yaml (Fuel's /etc/hiera): a Hiera 3 environment
/// holding DIR as `hierad import` reads it (each file the resource its
/// path names, at the root: Hiera 3 lookups name their datasources by
/// the interpolated path), and the hiera.yaml of the shim's Hiera 3
/// backend.
fn import_hiera3(args: &Args, config: &Hash) -> anyhow::Result<String> {
    let docs = crate::tree::read_tree(&args.dir)?;
    let count = docs.len();
    let summary = create(
        args,
        &[(LevelPath::root(), docs)],
        Vec::new(),
        HieraVersion::Three,
    )?;
    let mut stderr = std::io::stderr().lock();
    writeln!(
        stderr,
        "imported {count} file(s) from {} into the new Hiera 3 environment {}",
        args.dir.display(),
        args.env
    )?;
    for line in super::import::kept_unparsed(&summary) {
        writeln!(stderr, "{line}")?;
    }
    let mut out = Hash::default();
    out.insert(sym("backends"), Value::Array(vec![Value::str("hierad")]));
    for key in ["hierarchy", "merge_behavior", "deep_merge_options"] {
        if let Some(v) = config.get(&sym(key)) {
            out.insert(sym(key), v.clone());
        }
    }
    let mut hierad = Hash::default();
    hierad.insert(sym("url"), Value::str(url(args)));
    hierad.insert(sym("environment"), Value::Int(args.env));
    out.insert(sym("hierad"), Value::Hash(hierad));
    let text = crate::hiera::render::yaml::to_yaml(&Value::Hash(out))
        .map_err(|e| anyhow::anyhow!(e.message))?;
    Ok(text.trim_end().to_owned())
}

/// Creates environment `args.env` (of `hiera`, with `levels`, its own
/// component `hieraN-ID`) holding `docs` in one import, registering
/// their level values; an existing environment is refused.
fn create(
    args: &Args,
    docs: &[(LevelPath, Vec<crate::tree::TreeFile>)],
    levels: Vec<String>,
    hiera: HieraVersion,
) -> anyhow::Result<ImportSummary> {
    let db = args.conn.open(Access::Create)?;
    let import = TreeImport {
        env: args.env,
        levels: docs,
        kind: DocKind::Values,
        replace: false,
        register: !levels.is_empty(),
        new_env: NewEnv {
            levels,
            component: format!("hiera{}-{}", hiera.number(), args.env),
            hiera,
        },
        define_up_front: false,
    };
    Ok(ops::import_tree(db.as_ref(), &import, &exists)?)
}

fn sym(name: &str) -> Value {
    Value::Symbol(name.to_owned())
}

/// An existing environment is never imported into.
fn exists(env: &Environment) -> Result<(), OpsError> {
    Err(OpsError::Refused(format!(
        "environment {} exists: import-environment creates a new environment (give another --env)",
        env.id
    )))
}

/// The version 5 hiera.yaml that reads the environment through the shim
/// (hiera/README.md, `hierad::data_hash`): one entry per hierarchy
/// location, in order, each naming its resource and level; a glob's
/// files (`globbed`, by its pattern) as the `uris` of one entry. A
/// mapped path has no form there (the shim is given the file's path,
/// not a resource), nor has a glob that named no file.
pub(crate) fn puppet_config(
    sources: &[Source],
    globbed: &BTreeMap<String, Vec<String>>,
    url: &str,
    env: i64,
) -> String {
    let q = |s: &str| serde_json::to_string(s).expect("a string is JSON");
    let mut out = String::from("---\nversion: 5\nhierarchy:\n");
    for (i, source) in sources.iter().enumerate() {
        let uris = match source.form {
            Form::Path => format!("uri: {}", q(&source.resource)),
            Form::Glob => match globbed.get(&source.resource) {
                Some(found) => format!("uris: {}", serde_json::json!(found)),
                None => continue,
            },
            Form::Mapped => continue,
        };
        let named = |s: &Source| s.entry == source.entry;
        let name = if sources.iter().filter(|s| named(s)).count() > 1 {
            let n = sources[..=i].iter().filter(|s| named(s)).count();
            format!("{} ({n})", source.entry)
        } else {
            source.entry.clone()
        };
        let _ = write!(
            out,
            "  - name: {}\n    data_hash: hierad::data_hash\n    {uris}\n    options:\n      url: {}\n      environment: {env}\n",
            q(&name),
            q(url)
        );
        if let Some((level, token)) = &source.level {
            let _ = writeln!(out, "      level: {}", q(&format!("{level}={token}")));
        }
    }
    out.trim_end().to_owned()
}
