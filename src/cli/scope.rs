//! `hierad scope get|set|delete|history`: the facts and scope variables
//! stored for a node (a value of one of the environment's registers),
//! which a lookup naming the node gets (`hierad lookup --server … --node
//! NAME`, docs/api.md "Node scopes"); on a server or a local database,
//! through [`crate::ops`].

use super::args::{Access, Conn};
use super::report;
use anyhow::{Context, bail};
use std::io::Read;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) op: Op,
}

/// Which node.
#[derive(Debug, clap::Args)]
pub(crate) struct Node {
    /// The environment id
    #[arg(long, value_name = "ID")]
    pub(crate) env: i64,
    /// The node, a value of one of the environment's registers
    #[arg(long, value_name = "NAME")]
    pub(crate) node: String,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Op {
    /// Print the node's stored scope as JSON (with its version, author, time)
    Get(Node),
    /// Store a new version of the node's scope: a JSON object from stdin
    Set(Node),
    /// Delete the node's scope (a deletion marker: its history stays)
    Delete(Node),
    /// List every version of the node's scope, oldest first
    History(Node),
}

/// Runs `hierad scope`.
///
/// # Errors
///
/// None of its own: errors are one line on stderr and exit status 1.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(report(scope(&args.op)))
}

fn scope(op: &Op) -> anyhow::Result<String> {
    match op {
        Op::Get(n) => {
            let db = n.conn.open(Access::Read)?;
            Ok(serde_json::to_string_pretty(&db.scope(n.env, &n.node)?)?)
        }
        Op::Set(n) => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the scope from stdin")?;
            let scope = parse(&text)?;
            let db = n.conn.open(Access::Write)?;
            db.put_scope(n.env, &n.node, &scope)?;
            Ok(format!(
                "stored the scope of node {} ({} variables)",
                n.node,
                scope.len()
            ))
        }
        Op::Delete(n) => {
            let db = n.conn.open(Access::Write)?;
            db.delete_scope(n.env, &n.node)?;
            Ok(format!("deleted the scope of node {}", n.node))
        }
        Op::History(n) => {
            let db = n.conn.open(Access::Read)?;
            let versions = db.scope_history(n.env, &n.node)?;
            if versions.is_empty() {
                return Ok(format!("node {}: no scope ever stored", n.node));
            }
            Ok(super::history::table(&versions).trim_end().to_owned())
        }
    }
}

/// A scope from stdin: a JSON object.
fn parse(text: &str) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(scope)) => Ok(scope),
        Ok(_) => bail!("a node scope is a JSON object of facts and scope variables"),
        Err(e) => bail!("the scope on stdin is not JSON: {e}"),
    }
}
