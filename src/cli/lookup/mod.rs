//! `hierad lookup`: the `hiera` command, answer for answer. Steps run in
//! bin/hiera's order (options, scopes, positional arguments, configuration,
//! lookup, output) so errors surface exactly where Hiera's do.
//!
//! With `--server URL --env ID [--level L]` (or `--env` and
//! `$HIERAD_SERVER`), the lookup is one `POST /api/v1/lookup` instead: the
//! server applies the environment's own Hiera configuration over its
//! effective documents at that level, and the answer prints through the
//! same renderers.

mod explain;
mod options;

use crate::api::{LookupRequest, WireValue};
use crate::cli::args::SERVER_ENV;
use crate::configdb::LevelPath;
use crate::datafiles::{DataFiles, io_error};
use crate::hiera::budget::{Budget, Limit, Meter};
use crate::hiera::config::{Config, LoggerKind};
use crate::hiera::lookup::{Hiera, Log, Resolution};
use crate::hiera::render;
use crate::hiera::{Hash, HieraError, Value, encoding, json, yaml};
use crate::ops::Remote;
use crate::ops::remote::Timeouts;
use options::{Format, Kind, Options, Parsed, Positional, ScopeSource};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// The `hiera` command's arguments, taken raw: they follow Ruby
/// OptionParser's rules (see `options`), not clap's.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// hiera [options] key [default value] [variable='text'...]; see `hierad lookup --help`
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub(crate) args: Vec<String>,
}

/// Where Debian's Hiera looks for its configuration without `-c`.
const DEFAULT_CONFIG: &str = "/etc/puppet/hiera.yaml";

/// Runs `hierad lookup`.
///
/// # Errors
///
/// Only failures to write the output; Hiera's own failures become its
/// messages and exit status.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    let options = match options::parse(&args.args) {
        Parsed::Run(options) => options,
        Parsed::Exit {
            stdout: out,
            stderr: err,
            code,
        } => {
            stdout.write_all(out.as_bytes())?;
            stderr.write_all(err.as_bytes())?;
            return Ok(ExitCode::from(code));
        }
    };
    let mut scope = Hash::default();
    for source in &options.scopes {
        match load_scope(source) {
            Ok(loaded) => scope = loaded,
            Err((name, class, message)) => {
                writeln!(stderr, "Could not load {name} scope: {class}: {message}")?;
                return Ok(ExitCode::from(1));
            }
        }
    }
    let Some(positional) = options::positional(&options.positional) else {
        writeln!(stderr, "Please supply a data item to look up")?;
        return Ok(ExitCode::from(1));
    };
    for (name, value) in &positional.assignments {
        scope.insert(Value::str(name), Value::str(value));
    }
    for arg in &positional.unparsed {
        writeln!(stderr, "Don't know how to parse scope argument: {arg}")?;
    }
    if options.server.is_some()
        || options.env.is_some()
        || options.level.is_some()
        || options.node.is_some()
    {
        return remote(&options, positional, scope, &mut stdout, &mut stderr);
    }
    let config_path = options.config.as_deref().unwrap_or(DEFAULT_CONFIG);
    let config = match load_config(config_path) {
        Ok((config, warnings)) => {
            for warning in warnings {
                Console.warn(&warning);
            }
            config
        }
        Err(err) if options.debug => return fail(&mut stderr, &err),
        Err(err) => {
            writeln!(
                stderr,
                "Failed to start Hiera: {}: {}",
                err.class.ruby_name(),
                err.message
            )?;
            return Ok(ExitCode::from(1));
        }
    };
    // bin/hiera silences the logger after start-up unless -d is given.
    let log: &dyn Log = if options.debug && config.logger == LoggerKind::Console {
        &Console
    } else {
        &crate::hiera::lookup::NoLog
    };
    let data = DataFiles::new();
    let budget = Budget {
        steps: options.budget_steps.unwrap_or(Budget::DEFAULT.steps),
        bytes: options.budget_bytes.unwrap_or(Budget::DEFAULT.bytes),
    };
    let mut hiera = Hiera::new(&config, &data, log).budget(Meter::new(budget));
    if options.explain {
        hiera = hiera.explain();
    }
    let resolution = match options.kind {
        Kind::Priority => Resolution::Priority,
        Kind::Array => Resolution::Array,
        Kind::Hash => Resolution::Hash,
    };
    let default = positional.default.map(Value::String);
    let result = hiera.lookup(&positional.key, default.as_ref(), &scope, None, &resolution);
    stdout.write_all(hiera.merge_debug_output().as_bytes())?;
    if options.explain {
        stdout.write_all(
            explain::render(&positional.key, &resolution, hiera.steps(), result.as_ref())
                .as_bytes(),
        )?;
    }
    let answer = match result {
        Ok(answer) => answer.into_value(),
        Err(err) => {
            let code = fail(&mut stderr, &err)?;
            if let Some(limit) = Limit::of(&err) {
                let flag = match limit {
                    Limit::Steps => "--budget-steps",
                    Limit::Bytes => "--budget-bytes",
                };
                writeln!(
                    stderr,
                    "hierad: the lookup was refused, not answered: look for interpolation fan-out in the data, or raise the budget with {flag} N"
                )?;
            }
            return Ok(code);
        }
    };
    let text = match options.format {
        Format::Ruby => render::ruby::cli_output(&answer, pp_width(&stdout)),
        Format::Json => render::json::cli_output(&answer),
        Format::Yaml => match render::yaml::cli_output(&answer) {
            Ok(text) => text,
            Err(err) => return fail(&mut stderr, &err),
        },
    };
    stdout.write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The lookup through a server: one request, the answer printed as the
/// local path prints it; every failure is `hierad: MESSAGE` and exit 1 (a
/// Hiera error reads `MESSAGE (CLASS)`, as locally).
fn remote(
    options: &Options,
    positional: Positional,
    scope: Hash,
    stdout: &mut impl Write,
    stderr: &mut impl Write,
) -> anyhow::Result<ExitCode> {
    let request = match remote_request(options, &positional, scope) {
        Ok(request) => request,
        Err(message) => {
            writeln!(stderr, "hierad: {message}")?;
            return Ok(ExitCode::from(1));
        }
    };
    let (server, mut body) = request;
    let auth = super::args::ClientFlags::from_env().auth()?;
    let answer = match Remote::connect(&server, Timeouts::reads(), auth).and_then(|remote| {
        // The ConfigDB specification's `node=…` for the level `nodes`
        // (docs/spec/configdb-api.md, LevelPath::with_level_aliases).
        if let Some(level) = &body.level {
            if let (Ok(path), Some(env)) = (
                LevelPath::parse_cli(level),
                remote.environment(body.environment)?,
            ) {
                body.level = Some(path.with_level_aliases(&env.hierarchy_levels).to_string());
            }
        }
        remote.lookup(&body)
    }) {
        Ok(answer) => answer,
        Err(err) => {
            writeln!(stderr, "hierad: {err}")?;
            return Ok(ExitCode::from(1));
        }
    };
    let resolution = match options.kind {
        Kind::Priority => Resolution::Priority,
        Kind::Array => Resolution::Array,
        Kind::Hash => Resolution::Hash,
    };
    if options.explain {
        let text = explain::render_remote(&positional.key, &resolution, &answer);
        stdout.write_all(text.as_bytes())?;
    }
    let value = answer.value.map_or(Value::Nil, |v| v.0);
    let text = match options.format {
        Format::Ruby => render::ruby::cli_output(&value, remote_width()),
        Format::Json => render::json::cli_output(&value),
        Format::Yaml => match render::yaml::cli_output(&value) {
            Ok(text) => text,
            Err(err) => return fail(stderr, &err),
        },
    };
    stdout.write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The server URL and the JSON of a server lookup, or what is missing.
fn remote_request(
    options: &Options,
    positional: &Positional,
    scope: Hash,
) -> Result<(String, LookupRequest), String> {
    if options.budget_steps.is_some() || options.budget_bytes.is_some() {
        return Err(
            "--budget-steps and --budget-bytes set a local lookup's budget; a server lookup runs on the server's (hierad serve --budget-steps, --budget-bytes)"
                .into(),
        );
    }
    if options.config.is_some() {
        return Err(
            "-c names a local Hiera configuration; a server lookup uses the environment's own (drop -c or --server)"
                .into(),
        );
    }
    let server = options.server.clone().or_else(|| {
        std::env::var(SERVER_ENV)
            .ok()
            .filter(|s| !s.trim().is_empty())
    });
    let Some(server) = server else {
        return Err(format!(
            "a server lookup needs --server URL (or {SERVER_ENV})"
        ));
    };
    let Some(env) = &options.env else {
        return Err("--server needs --env ID: the environment to look up in".into());
    };
    let env: i64 = env
        .parse()
        .map_err(|_| format!("--env takes an environment id (an integer), not \"{env}\""))?;
    let level = match &options.level {
        Some(level) => Some(
            LevelPath::parse_cli(level)
                .map_err(|e| e.to_string())?
                .to_string(),
        ),
        None => None,
    };
    let body = LookupRequest {
        environment: env,
        keys: crate::api::Keys::one(positional.key.clone()),
        resolution: Some(
            match options.kind {
                Kind::Priority => "priority",
                Kind::Array => "array",
                Kind::Hash => "hash",
            }
            .to_owned(),
        ),
        level,
        hierarchy: None,
        hierarchy_id: None,
        scope: (!scope.is_empty()).then(|| WireValue(Value::Hash(scope))),
        default: positional.default.clone().map(|d| WireValue(Value::str(d))),
        explain: options.explain,
        node: options.node.clone(),
        merge: None,
    };
    Ok((server, body))
}

/// `PP.width_for($stdout)` for the server path (same rule as locally).
fn remote_width() -> usize {
    pp_width(&std::io::stdout().lock())
}

/// An uncaught Hiera exception: Ruby prints `… message (Class)` and exits 1.
fn fail(stderr: &mut impl Write, err: &HieraError) -> anyhow::Result<ExitCode> {
    writeln!(stderr, "hierad: {err}")?;
    Ok(ExitCode::from(1))
}

/// `PP.width_for($stdout)`: the terminal's width minus one on a terminal,
/// else what `$COLUMNS` says (see [`render::ruby::pp_width`]).
fn pp_width(stdout: &std::io::StdoutLock<'_>) -> usize {
    if stdout.is_terminal() {
        if let Some((width, _)) = terminal_size::terminal_size() {
            return usize::from(width.0).saturating_sub(1);
        }
    }
    render::ruby::pp_width(std::env::var("COLUMNS").ok().as_deref())
}

/// `Hiera::Config.load(path)`: `YAML.load_file`, then the config rules.
fn load_config(path: &str) -> Result<(Config, Vec<String>), HieraError> {
    if !std::path::Path::new(path).exists() {
        return Err(HieraError::new(
            crate::hiera::ErrorClass::RuntimeError,
            format!("Config file {path} not found"),
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| io_error(path, &e))?;
    // `load_file` names the file in syntax errors where `load` says <unknown>.
    let loaded = encoding::yaml_text(&bytes)
        .and_then(|text| yaml::load(&text))
        .map_err(|mut e| {
            e.message = e.message.replacen("(<unknown>)", &format!("({path})"), 1);
            e
        })?;
    Config::load(loaded)
}

/// bin/hiera's `load_scope`: (scope name, error class, message) on failure.
fn load_scope(source: &ScopeSource) -> Result<Hash, (&'static str, String, String)> {
    let runtime = |name, message: String| Err((name, "RuntimeError".to_owned(), message));
    let (name, kind, path) = match source {
        ScopeSource::Json(p) => ("JSON", "json", p),
        ScopeSource::Yaml(p) => ("YAML", "yaml", p),
        ScopeSource::Mcollective(_) => {
            return runtime(
                "Mcollective",
                "Don't know how to load data type mcollective".into(),
            );
        }
        ScopeSource::InventoryService(_) => {
            // What bin/hiera does without Puppet installed: its own message,
            // then the SystemExit of its `exit 1` caught by the outer rescue.
            return Err((
                "Puppet inventory service",
                "SystemExit".to_owned(),
                "exit".to_owned(),
            ))
            .inspect_err(|_| {
                eprintln!(
                    "Puppet inventory service lookup failed: LoadError: cannot load such file -- puppet/util/run_mode"
                )
            });
        }
    };
    if !std::path::Path::new(path).exists() {
        return runtime(name, format!("Cannot find scope {kind} file {path}"));
    }
    let as_error = |e: HieraError| (name, e.class.ruby_name().to_owned(), e.message);
    let bytes = std::fs::read(path).map_err(|e| as_error(io_error(path, &e)))?;
    let loaded = match kind {
        "json" => json::load_scope(&String::from_utf8_lossy(&bytes)),
        _ => encoding::yaml_text(&bytes).and_then(|text| yaml::load(&text)),
    }
    .map_err(as_error)?;
    match loaded {
        Value::Hash(h) => Ok(h),
        _ => runtime(
            name,
            format!("Scope from {kind} file {path} should be a Hash"),
        ),
    }
}

/// Hiera's console logger: `DEBUG: <Time.now>: msg` on stderr.
struct Console;

impl Console {
    fn print(level: &str, message: &str) {
        let now = jiff::Zoned::now().strftime("%Y-%m-%d %H:%M:%S %z");
        eprintln!("{level}: {now}: {message}");
    }
}

impl Log for Console {
    fn debug(&self, message: &str) {
        Console::print("DEBUG", message);
    }
    fn warn(&self, message: &str) {
        Console::print("WARN", message);
    }
}
