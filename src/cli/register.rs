//! `hierad register`: the values a level of an environment takes (its nodes).
//! With a register, the environment answers 404 for level values it does not
//! list (docs/spec/configdb-api.md's "Cannot find a node with the given
//! identifier" and "Node with the given ID not assigned to cluster with the
//! given ID"), reads and writes alike; without one, any value is taken.
//! `hierad import --register` registers as it uploads.

use super::args::{Access, Conn};
use super::report;
use crate::configdb::LevelValue;
use anyhow::bail;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) op: Op,
}

/// Which register.
#[derive(Debug, clap::Args)]
pub(crate) struct Which {
    /// The environment id
    #[arg(long, value_name = "ID")]
    pub(crate) env: i64,
    /// The level's name, e.g. nodes
    #[arg(long, value_name = "LEVEL")]
    pub(crate) level: String,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Op {
    /// Print the registered values, one a line
    List(Which),
    /// Add values (the register is created if missing)
    Add(Values),
    /// Remove values (the register stays, even empty)
    Remove(Values),
    /// Replace the register with exactly these values (none: an empty
    /// register, which refuses every value)
    Set(Values),
    /// Remove the register: the level takes any value again
    Clear(Which),
}

#[derive(Debug, clap::Args)]
pub(crate) struct Values {
    #[command(flatten)]
    pub(crate) which: Which,
    /// The level values, e.g. node-1.domain.tld
    #[arg(value_name = "VALUE")]
    pub(crate) values: Vec<String>,
}

/// Runs `hierad register`.
///
/// # Errors
///
/// None of its own: errors are one line on stderr and exit status 1.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(report(register(&args.op)))
}

fn level_name(which: &Which) -> anyhow::Result<&str> {
    if which.level.contains('=') {
        bail!(
            "--level names a level here (e.g. nodes), not a level path: {:?}",
            which.level
        );
    }
    Ok(&which.level)
}

fn checked(values: &Values) -> anyhow::Result<()> {
    let level = level_name(&values.which)?;
    for value in &values.values {
        LevelValue::new(level, value.as_str())?;
    }
    Ok(())
}

fn register(op: &Op) -> anyhow::Result<String> {
    let described =
        |w: &Which| format!("the register of level {} of environment {}", w.level, w.env);
    match op {
        Op::List(which) => {
            let level = level_name(which)?;
            let db = which.conn.open(Access::Read)?;
            match db.register(which.env, level)? {
                Some(values) => Ok(values.join("\n")),
                None => bail!(
                    "environment {} keeps no register of level \"{level}\"",
                    which.env
                ),
            }
        }
        Op::Add(values) => {
            checked(values)?;
            let w = &values.which;
            let db = w.conn.open(Access::Write)?;
            let added = db.add_to_register(w.env, &w.level, &values.values)?;
            let total = db.register(w.env, &w.level)?.map_or(0, |v| v.len());
            Ok(format!(
                "added {added} value(s) to {} ({total} in all)",
                described(w)
            ))
        }
        Op::Remove(values) => {
            checked(values)?;
            let w = &values.which;
            let db = w.conn.open(Access::Write)?;
            let removed = db.remove_from_register(w.env, &w.level, &values.values)?;
            let total = db.register(w.env, &w.level)?.map_or(0, |v| v.len());
            Ok(format!(
                "removed {removed} value(s) from {} ({total} left)",
                described(w)
            ))
        }
        Op::Set(values) => {
            checked(values)?;
            let w = &values.which;
            let db = w.conn.open(Access::Write)?;
            db.set_register(w.env, &w.level, Some(&values.values))?;
            let total = db.register(w.env, &w.level)?.map_or(0, |v| v.len());
            Ok(format!("{} holds {total} value(s)", described(w)))
        }
        Op::Clear(which) => {
            let level = level_name(which)?;
            let db = which.conn.open(Access::Write)?;
            if db.register(which.env, level)?.is_none() {
                bail!(
                    "environment {} keeps no register of level \"{level}\"",
                    which.env
                );
            }
            db.set_register(which.env, level, None)?;
            Ok(format!(
                "removed {}: the level takes any value",
                described(which)
            ))
        }
    }
}
