use clap::Parser;
use hierad::cli::{Cli, run};
use std::process::ExitCode;

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("hierad: {err:#}");
            ExitCode::from(2)
        }
    }
}
