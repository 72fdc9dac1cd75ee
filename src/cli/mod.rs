//! The command line: one module per subcommand. The only place that parses
//! flags; everything below it sees typed values.

pub(crate) mod args;
pub(crate) mod auth;
pub(crate) mod backup;
pub(crate) mod bench;
pub(crate) mod config;
pub(crate) mod diff;
pub(crate) mod doctor;
pub(crate) mod dry_run;
pub(crate) mod export;
pub(crate) mod health;
pub(crate) mod history;
pub(crate) mod import;
pub(crate) mod import_environment;
pub(crate) mod logging;
pub(crate) mod lookup;
pub(crate) mod migrate;
pub(crate) mod nodes;
pub(crate) mod puppet_lookup;
pub(crate) mod register;

pub(crate) mod schema;
pub(crate) mod scope;
pub(crate) mod secrets;
pub(crate) mod serve;
pub(crate) mod show_lookup;
pub(crate) mod tag;

pub use serve::serve_in_process;

use crate::configdb::LevelPathError;
use clap::{Parser, Subcommand};
use std::error::Error as _;
use std::io::Write as _;
use std::process::ExitCode;

/// hierad: a Hiera-compatible data lookup server and command-line tool.
#[derive(Debug, Parser)]
#[command(name = "hierad", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Look a key up in Hiera 3 data files: a drop-in for the `hiera`
    /// command, with the same arguments and output (plus `--explain`).
    #[command(disable_help_flag = true)]
    Lookup(lookup::Args),
    /// Look keys up in a Puppet tree of Hiera 5 data (hiera.yaml version
    /// 5 at the global, environment and module layers): a drop-in for the
    /// data side of `puppet lookup`, with its flags and output.
    PuppetLookup(puppet_lookup::Args),
    /// Read and write ConfigDB documents: get, set, override (the ConfigDB
    /// specification's `fuel config`), on a server (--server, HIERAD_SERVER)
    /// or a local database (--db)
    Config(config::Args),
    /// Upload a Hiera data tree (/etc/hiera) into one level of an
    /// environment (created if missing), all or nothing
    Import(import::Args),
    /// Move a Puppet environment's Hiera 5 data (DIR/hiera.yaml version 5
    /// and its data files) into a new Hiera 5 environment, levels from
    /// the hierarchy's variables; prints the hiera.yaml Puppet reads it by
    ImportEnvironment(import_environment::Args),
    /// Write an environment's effective documents at one level as a Hiera
    /// data tree
    Export(export::Args),
    /// The values a level of an environment takes (its nodes): with a
    /// register, other values are refused (404)
    Register(register::Args),
    /// The facts and scope variables stored for a node, which a lookup
    /// naming the node gets
    Scope(scope::Args),
    /// Serve the ConfigDB REST API and Hiera lookups over HTTP.
    Serve(serve::Args),
    /// List the stored versions that cannot be read, history included;
    /// --repair restores the newest readable version of each document
    /// whose latest cannot be read, or deletes it
    Doctor(doctor::Args),
    /// Load-test a server with realistic lookups; generate and load bench
    /// environments.
    Bench(Box<bench::Args>),
    /// Manage the users and tokens of the auth file `hierad serve --auth`
    /// reads
    Auth(auth::Args),
    /// Copy a whole ConfigDB, history included, into an empty database;
    /// prints the counts and a checksum of both sides
    Migrate(migrate::Args),
    /// Copy a database (SQLite or PostgreSQL) into a new SQLite file only
    /// its owner can read (0600), while servers use it
    Backup(backup::Args),
    /// Whether the server on this machine is up and healthy (GET /healthz,
    /// over TLS if it speaks it): for a container's HEALTHCHECK
    Health(health::Args),
    /// hiera-eyaml's ENC[PKCS7,…] values: encrypt and decrypt
    Secrets(secrets::Args),
    /// Names for generations, so a deployment reads one view
    Tag(tag::Args),
    /// Which registered nodes changed since a generation or a tag
    Nodes(nodes::Args),
}

/// Runs a parsed command line.
///
/// # Errors
///
/// Failures that are not a command's own exit status.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Lookup(args) => lookup::run(args),
        Command::PuppetLookup(args) => puppet_lookup::run(args),
        Command::Config(args) => config::run(args),
        Command::Import(args) => import::run(args),
        Command::ImportEnvironment(args) => import_environment::run(args),
        Command::Export(args) => export::run(args),
        Command::Register(args) => register::run(args),
        Command::Scope(args) => scope::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Bench(args) => bench::run(*args),
        Command::Auth(args) => auth::run(args),
        Command::Migrate(args) => migrate::run(args),
        Command::Backup(args) => backup::run(args),
        Command::Health(args) => Ok(report(health::run(&args))),
        Command::Secrets(args) => Ok(report(secrets::run(args))),
        Command::Tag(args) => tag::run(args),
        Command::Nodes(args) => nodes::run(args),
    }
}

/// Parses the command line. A bad `--level` is the command's own error
/// (`hierad: …`, exit status 1, as every ConfigDB command reports), not a
/// usage error; clap reports the rest and exits.
///
/// # Errors
///
/// The exit code of a bad `--level`.
pub fn parse() -> Result<Cli, ExitCode> {
    Cli::try_parse().map_err(|err| match level_error(&err) {
        Some(message) => fail(&anyhow::anyhow!(message)),
        None => err.exit(),
    })
}

/// The level path error inside a clap error, if that is what it is.
fn level_error(err: &clap::Error) -> Option<String> {
    err.source()?
        .downcast_ref::<LevelPathError>()
        .map(ToString::to_string)
}

/// A command's report on stdout and exit 0, or its error as [`fail`].
pub(crate) fn report(outcome: anyhow::Result<String>) -> ExitCode {
    match outcome {
        Ok(text) => {
            let written = writeln!(std::io::stdout().lock(), "{text}");
            match written {
                Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
                    fail(&anyhow::Error::from(err).context("cannot write to stdout"))
                }
                _ => ExitCode::SUCCESS,
            }
        }
        Err(err) => fail(&err),
    }
}

/// Whether a failure is the reader of stdout going away (`hierad … |
/// head -1`): for a command-line tool that is a normal end, exit 0 with
/// nothing on stderr. Rust ignores SIGPIPE, so the write fails with EPIPE.
pub fn closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Prints `hierad: message` (causes joined on one line) and gives exit 1.
pub fn fail(err: &anyhow::Error) -> ExitCode {
    eprintln!("hierad: {}", one_line(&format!("{err:#}")));
    ExitCode::from(1)
}

fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_fit_on_one_line() {
        assert_eq!(super::one_line("a\nb  \nc"), "a b c");
    }

    #[test]
    fn a_closed_pipe_is_told_apart_from_other_failures() {
        use std::io::{Error, ErrorKind};
        let pipe = anyhow::Error::from(Error::from(ErrorKind::BrokenPipe));
        assert!(super::closed_pipe(&pipe));
        assert!(super::closed_pipe(&pipe.context("writing the answer")));
        let full = anyhow::Error::from(Error::from(ErrorKind::StorageFull));
        assert!(!super::closed_pipe(&full));
        assert!(!super::closed_pipe(&anyhow::anyhow!("Broken pipe")));
    }
}
