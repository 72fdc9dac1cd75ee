//! `hierad nodes changed`: the registered nodes whose effective data (or
//! whose Hiera answers of `--keys`) changed since a generation or a tag,
//! each with the key paths that changed: the nodes to redeploy.

use super::args::{Access, Conn};
use super::report;
use crate::api::impact::NodesChanged;
use std::fmt::Write as _;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) op: Op,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Op {
    /// The nodes whose data changed since a generation or a tag
    Changed(Changed),
}

#[derive(Debug, clap::Args)]
pub(crate) struct Changed {
    /// The environment id
    #[arg(long, value_name = "ID")]
    pub(crate) env: i64,
    /// A generation, or a tag's name
    #[arg(long, value_name = "G|TAG")]
    pub(crate) since: String,
    /// Only this resource's data
    #[arg(long, value_name = "R")]
    pub(crate) resource: Option<String>,
    /// Hiera keys whose answers to compare too, comma-separated
    #[arg(long, value_name = "K1,K2", value_delimiter = ',')]
    pub(crate) keys: Vec<String>,
    /// Print the API's JSON instead of one line per node
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

/// Runs `hierad nodes`.
///
/// # Errors
///
/// None of its own: errors are one line on stderr and exit status 1.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Op::Changed(c) = &args.op;
    Ok(report(changed(c)))
}

fn changed(c: &Changed) -> anyhow::Result<String> {
    let ops = c.conn.open(Access::Read)?;
    let answer = ops.nodes_changed(c.env, &c.since, c.resource.as_deref(), &c.keys)?;
    if c.json {
        return Ok(serde_json::to_string_pretty(&answer)?);
    }
    Ok(text(&answer))
}

/// `node-1 (nodes/node-1): astute: a.b, c` a line, then each changed
/// answer indented; a first line with the generations compared.
fn text(answer: &NodesChanged) -> String {
    let mut out = format!(
        "{} node(s) changed between generations {} and {}",
        answer.nodes.len(),
        answer.since,
        answer.generation
    );
    for node in &answer.nodes {
        let resources: Vec<String> = node
            .resources
            .iter()
            .map(|(r, paths)| format!("{r}: {}", paths.join(", ")))
            .collect();
        let _ = write!(
            out,
            "\n{} ({}): {}",
            node.node,
            node.level,
            resources.join("; ")
        );
        for (key, change) in node.keys.iter().flatten() {
            let shown = |v: &Option<crate::api::WireValue>| {
                v.as_ref().map_or_else(
                    || "(not found)".to_owned(),
                    |v| crate::wire::to_string(&v.0),
                )
            };
            let _ = write!(
                out,
                "\n  {key}: {} -> {}",
                shown(&change.old),
                shown(&change.new)
            );
        }
    }
    out
}
