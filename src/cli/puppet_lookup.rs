//! `hierad puppet-lookup`: `puppet lookup`'s data side over files, with
//! its flags, output and exit statuses (puppet/application/lookup.rb),
//! answered by the Hiera 5 core ([`crate::hiera5`]).

mod files;
mod server;

use crate::hiera::render::{json, ruby, yaml};
use crate::hiera::{Hash, Value};
use crate::hiera5::{Error, Lookup, Scope, Strategy, Tree};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `puppet lookup`'s flags that concern data, spelled as Puppet spells them.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The keys: the value of the first one found is printed.
    keys: Vec<String>,
    /// The directory of environments (Puppet's `environmentpath`; default
    /// CODEDIR/environments).
    #[arg(long, value_name = "DIR")]
    environmentpath: Option<PathBuf>,
    /// The environment whose hiera.yaml and modules are read.
    #[arg(long, default_value = "production")]
    environment: String,
    /// The global layer's hiera.yaml (default CONFDIR/hiera.yaml).
    #[arg(long = "hiera_config", alias = "hiera-config", value_name = "FILE")]
    hiera_config: Option<PathBuf>,
    /// Puppet's confdir, where the global hiera.yaml is by default.
    #[arg(long, value_name = "DIR")]
    confdir: Option<PathBuf>,
    /// Puppet's codedir, where the environments are by default.
    #[arg(long, value_name = "DIR")]
    codedir: Option<PathBuf>,
    /// The node looked up for (its facts come from --facts).
    #[arg(long)]
    node: Option<String>,
    /// The node's facts: a YAML or JSON file of a Hash.
    #[arg(long, value_name = "FILE")]
    facts: Option<PathBuf>,
    /// first, unique, hash or deep: overrides the keys' lookup_options.
    #[arg(long)]
    merge: Option<String>,
    /// With --merge deep: the prefix marking values to remove.
    #[arg(
        long = "knock-out-prefix",
        value_name = "PREFIX",
        allow_hyphen_values = true
    )]
    knock_out_prefix: Option<String>,
    /// With --merge deep: sort merged arrays.
    #[arg(long)]
    sort_merged_arrays: bool,
    /// With --merge deep: merge hashes within arrays by position.
    #[arg(long)]
    merge_hash_arrays: bool,
    /// The value printed when no key is found.
    #[arg(long, value_name = "VALUE")]
    default: Option<String>,
    /// Explain the lookup: every layer, hierarchy entry, file and merge
    /// searched, as `puppet lookup --explain` prints them.
    #[arg(long)]
    explain: bool,
    /// s, json or yaml (the default).
    #[arg(long = "render-as", value_name = "FORMAT")]
    render_as: Option<String>,
    /// Accepted for command lines shared with `puppet lookup`; unused.
    #[arg(long, hide = true)]
    vardir: Option<PathBuf>,
    #[arg(long, hide = true)]
    rundir: Option<PathBuf>,
    #[arg(long, hide = true)]
    logdir: Option<PathBuf>,
    #[arg(long, hide = true)]
    color: Option<String>,
    /// Look up in a Hiera 5 environment of this hierad server instead of
    /// files (with --env)
    #[arg(long, value_name = "URL", requires = "env")]
    server: Option<String>,
    /// The hierad environment id, with --server
    #[arg(long, value_name = "ID", requires = "server")]
    env: Option<i64>,
}

const RUN_HELP: &str = "Run 'puppet lookup --help' for more details";

/// Runs `hierad puppet-lookup`: exit 0 with the value, 1 when no key is
/// found or the lookup fails (silently, as `puppet lookup` does), 1 with
/// `Error: Could not run: …` for bad flags or facts, 1 with `hierad: …`
/// for what Puppet reads and hierad does not.
///
/// # Errors
/// Only failures to write the output.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut warnings = Vec::new();
    let answer = answer(&args, &mut warnings);
    // Puppet logs its warnings as they happen, before any error.
    let mut stderr = std::io::stderr().lock();
    for w in &warnings {
        writeln!(stderr, "Warning: {w}")?;
    }
    match answer {
        Ok(out) => match out {
            Some(text) => {
                std::io::stdout().lock().write_all(text.as_bytes())?;
                Ok(ExitCode::SUCCESS)
            }
            None => Ok(ExitCode::from(1)),
        },
        Err(Refused::Puppet(message)) => {
            writeln!(stderr, "Error: Could not run: {message}")?;
            Ok(ExitCode::from(1))
        }
        Err(Refused::Hierad(message)) => {
            writeln!(stderr, "hierad: {message}")?;
            Ok(ExitCode::from(1))
        }
        Err(Refused::Failed) => Ok(ExitCode::from(1)),
    }
}

/// Why nothing was looked up or printed.
enum Refused {
    /// Puppet refuses it too, with this message (exit 1).
    Puppet(String),
    /// Puppet would answer but hierad does not read this (exit 1, one
    /// `hierad: …` line).
    Hierad(String),
    /// The lookup failed as a `LookupError`: exit 1, nothing printed.
    Failed,
}

impl From<String> for Refused {
    fn from(message: String) -> Refused {
        Refused::Puppet(message)
    }
}

/// The text printed (`None`: nothing, exit 1), or why nothing was looked
/// up; Puppet's warnings go to `warnings` either way.
fn answer(args: &Args, warnings: &mut Vec<String>) -> Result<Option<String>, Refused> {
    let deep_flags =
        args.sort_merged_arrays || args.merge_hash_arrays || args.knock_out_prefix.is_some();
    if deep_flags && args.merge.as_deref() != Some("deep") {
        return Err(Refused::Puppet(format!(
            "The options --knock-out-prefix, --sort-merged-arrays, and --merge-hash-arrays are only available with '--merge deep'\n{RUN_HELP}"
        )));
    }
    let merge_value = match args.merge.as_deref() {
        None => None,
        Some(name @ ("first" | "hash" | "unique" | "deep")) => Some(Strategy::flags_value(
            name,
            args.knock_out_prefix.as_deref(),
            args.sort_merged_arrays,
            args.merge_hash_arrays,
        )),
        Some(_) => {
            return Err(Refused::Puppet(format!(
                "The --merge option only accepts 'first', 'hash', 'unique', or 'deep'\n{RUN_HELP}"
            )));
        }
    };
    let merge = merge_value
        .as_ref()
        .map(Strategy::from_value)
        .transpose()
        .map_err(|e| Refused::Puppet(e.to_string()))?;
    if args.keys.is_empty() {
        return Err(Refused::Puppet("No keys were given to lookup.".into()));
    }
    // An explanation is text by default (`format = … (explain ? :s : :yaml)`).
    let format = args
        .render_as
        .as_deref()
        .unwrap_or(if args.explain { "s" } else { "yaml" });
    if args.explain && format == "yaml" {
        // Puppet's YAML of the tree aliases shared values (&1, *1).
        return Err(Refused::Hierad(
            "puppet-lookup explains as text (--render-as s) or json, not yaml".into(),
        ));
    }
    match format {
        "s" | "json" | "yaml" => {}
        "binary" | "msgpack" | "pson" => {
            return Err(Refused::Hierad(format!(
                "puppet-lookup renders as s, json or yaml, not {format}"
            )));
        }
        other => {
            return Err(Refused::Puppet(format!(
                "Unknown rendering format '{other}'"
            )));
        }
    }
    if let (Some(server), Some(env)) = (&args.server, args.env) {
        // The node's stored scope stands for facts not given.
        let facts = match (&args.facts, &args.node) {
            (None, Some(_)) => None,
            _ => Some(facts(args)?),
        };
        let asked = server::Asked {
            server,
            env,
            facts: facts.clone(),
            node: if facts.is_none() {
                args.node.as_deref()
            } else {
                None
            },
            merge: merge_value,
        };
        if args.explain {
            let e = server::explain(&asked, &args.keys, args.default.as_deref())?;
            return Ok(Some(explanation_output(args, e.text, &e.tree.0)));
        }
        let found = server::lookup(&asked, &args.keys)?;
        return printed(found, args, format);
    }
    let facts = facts(args)?;
    let tree = tree(args);
    let env_dir = tree.environment_dir.clone().unwrap_or_default();
    if !std::path::Path::new(&env_dir).is_dir() {
        // Puppet dies of an uncaught EnvironmentNotFound here.
        return Err(Refused::Hierad(format!(
            "Could not find a directory environment named '{}' anywhere in the path: {}. Does the directory exist?",
            args.environment,
            Path::new(&env_dir)
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        )));
    }
    let files = files::Disk;
    let mut lookup = Lookup::new(tree, &files, Scope::for_node(facts, &args.environment));
    if args.explain {
        lookup = lookup.explaining();
    }
    let result = lookup.lookup(&args.keys, merge.as_ref());
    *warnings = lookup.warnings();
    if args.explain {
        return explained(args, &lookup, result).map(Some);
    }
    let found = match result {
        Ok(found) => found,
        Err(e) if e.printed_by_puppet() => return Err(Refused::Puppet(e.to_string())),
        Err(e @ Error::Unsupported(_)) => return Err(Refused::Hierad(e.to_string())),
        // Puppet answers a failed lookup (a LookupError) as one that found
        // nothing: exit 1, nothing printed (whatever --default says).
        Err(_) => return Err(Refused::Failed),
    };
    printed(found, args, format)
}

/// The output for what was found (`None`: nothing, or `--default`).
fn printed(found: Option<Value>, args: &Args, format: &str) -> Result<Option<String>, Refused> {
    let found = found.or_else(|| args.default.clone().map(Value::String));
    let out = match found {
        None => None,
        Some(v) => Some(render(&v, format).map_err(Refused::Hierad)?),
    };
    Ok(out)
}

/// With `--explain`, the explanation is the output whatever was found:
/// a failure or a key not found is its last line.
fn explained(
    args: &Args,
    lookup: &Lookup<'_, files::Disk>,
    result: crate::hiera5::Result<Option<Value>>,
) -> Result<String, Refused> {
    match &result {
        Err(e) if e.printed_by_puppet() => return Err(Refused::Puppet(e.to_string())),
        Err(e @ Error::Unsupported(_)) => return Err(Refused::Hierad(e.to_string())),
        _ => {}
    }
    let explanation = lookup
        .explained(&args.keys, &result, args.default.is_some())
        .ok_or_else(|| Refused::Hierad("the lookup was not explained".into()))?;
    Ok(explanation_output(
        args,
        explanation.text,
        &explanation.tree,
    ))
}

/// What `--explain` prints: the text, or with `--render-as json` the
/// tree (`renderer.render(explainer.to_hash)`: the root's texts are not
/// in it).
fn explanation_output(args: &Args, text: String, tree: &Value) -> String {
    if args.render_as.as_deref() != Some("json") {
        return text;
    }
    let mut out = json::dump(tree);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn tree(args: &Args) -> Tree {
    let home = std::env::var("HOME").unwrap_or_default();
    let root = rustix::process::geteuid().is_root();
    let confdir = args.confdir.clone().unwrap_or_else(|| {
        PathBuf::from(if root {
            "/etc/puppetlabs/puppet".into()
        } else {
            format!("{home}/.puppetlabs/etc/puppet")
        })
    });
    let codedir = args.codedir.clone().unwrap_or_else(|| {
        PathBuf::from(if root {
            "/etc/puppetlabs/code".into()
        } else {
            format!("{home}/.puppetlabs/etc/code")
        })
    });
    let environmentpath = args
        .environmentpath
        .clone()
        .unwrap_or_else(|| codedir.join("environments"));
    let global = args
        .hiera_config
        .clone()
        .unwrap_or_else(|| confdir.join("hiera.yaml"));
    let abs = |p: PathBuf| {
        std::path::absolute(&p)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    Tree {
        global_config: abs(global),
        environment_dir: Some(abs(environmentpath.join(&args.environment))),
    }
}

/// The facts file (`retrieve_node_facts` with `--facts`): `.json` as JSON,
/// `.yaml`/`.yml` as YAML, anything else as whichever parses.
fn facts(args: &Args) -> Result<Hash, String> {
    let Some(path) = &args.facts else {
        return Err(format!(
            "No facts available for target node: {} (hierad does not run Facter: give --facts FILE)",
            args.node.as_deref().unwrap_or("")
        ));
    };
    let name = path.to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path).map_err(|e| format!("Could not read {name}: {e}"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let parsed = if name.ends_with(".json") {
        crate::hiera::json::load(text).ok()
    } else if name.ends_with(".yml") || name.ends_with(".yaml") {
        crate::hiera::yaml::load(text).ok()
    } else {
        crate::hiera::json::load(text)
            .ok()
            .or_else(|| crate::hiera::yaml::load(text).ok())
    };
    let Some(Value::Hash(facts)) = parsed else {
        return Err(format!(
            "Incorrectly formatted data in {name} given via the --facts flag (only accepts yaml and json files)"
        ));
    };
    const TRUSTED: [&str; 4] = ["hostname", "domain", "fqdn", "clientcert"];
    let given = TRUSTED
        .iter()
        .filter(|k| facts.contains_key(&Value::str(**k)))
        .count();
    if given != 0 && given != TRUSTED.len() {
        return Err(format!(
            "When overriding any of the {} facts with {name} given via the --facts flag, they must all be overridden.",
            TRUSTED.join(",")
        ));
    }
    Ok(facts)
}

/// `puts renderer.render(result)`.
fn render(v: &Value, format: &str) -> Result<String, String> {
    let mut text = match format {
        "json" => json::dump(v),
        "s" => ruby::to_s(v),
        _ => yaml::to_yaml(v).map_err(|e| e.message)?,
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}
