//! The command line: one module per subcommand. The only place that parses
//! flags; everything below it sees typed values.

pub mod bench;
pub mod client;
pub mod config;
pub mod export;
pub mod import;
pub mod lookup;
pub mod serve;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// hierad: a Hiera-compatible data lookup server and command-line tool.
#[derive(Debug, Parser)]
#[command(name = "hierad", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Look a key up in Hiera 3 data files: a drop-in for the `hiera`
    /// command, with the same arguments and output (plus `--explain`).
    #[command(disable_help_flag = true)]
    Lookup(lookup::Args),
    /// Read and write ConfigDB documents: get, set, override (seeds/004's
    /// `fuel config`), on a server (--server, HIERAD_SERVER) or a local
    /// database (--db)
    Config(config::Args),
    /// Upload a Hiera data tree (/etc/hiera) into one level of an
    /// environment, all or nothing
    Import(import::Args),
    /// Write an environment's effective documents at one level as a Hiera
    /// data tree
    Export(export::Args),
    /// Serve the ConfigDB REST API and Hiera lookups over HTTP.
    Serve(serve::Args),
    /// Load-test a server with realistic lookups; generate and load bench
    /// environments.
    Bench(Box<bench::Args>),
}

/// Runs a parsed command line.
///
/// # Errors
///
/// Failures that are not a command's own exit status.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Lookup(args) => lookup::run(args),
        Command::Config(args) => config::run(args),
        Command::Import(args) => import::run(args),
        Command::Export(args) => export::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Bench(args) => bench::run(*args),
    }
}
