//! `--dry-run` on `hierad config set|override|delete|restore`: the write
//! sent as a dry-run ([`crate::ops::ConfigOps::dry_run`]; the server's
//! `?dry_run=true`, or `ops::preview` over `--db`), printed per node as
//! `node (level)` then each `resource key.path: old -> new`, or with
//! `--dry-run=json` as the API answers it. Nothing is written.

use crate::api::WireValue;
use crate::api::impact::DryRun;
use crate::wire;

/// How a dry-run's answer is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DryRunFormat {
    Text,
    Json,
}

/// The `--dry-run[=text|json]` flag.
#[derive(Clone, Copy, Debug, clap::Args)]
pub(crate) struct DryRunArg {
    /// Write nothing: print each registered node's effective key paths the write would change, old -> new (=json: the API's answer)
    #[arg(
        long,
        value_enum,
        value_name = "FORMAT",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "text"
    )]
    pub(crate) dry_run: Option<DryRunFormat>,
}

/// One value as compact JSON (wire form), `(absent)` for none.
fn shown(value: Option<&WireValue>) -> String {
    value.map_or_else(
        || "(absent)".to_owned(),
        |WireValue(v)| serde_json::to_string(&wire::to_json(v)).unwrap_or_default(),
    )
}

/// The text a dry-run prints.
///
/// # Errors
///
/// Only a failure to write JSON.
pub(crate) fn render(answer: &DryRun, format: DryRunFormat) -> anyhow::Result<String> {
    if format == DryRunFormat::Json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(answer)?));
    }
    let mut out = String::new();
    for node in &answer.nodes {
        out.push_str(&format!("{} ({})\n", node.node, node.level));
        for c in &node.changes {
            let path = if c.path.is_empty() {
                "(whole document)"
            } else {
                &c.path
            };
            out.push_str(&format!(
                "  {} {path}: {} -> {}\n",
                c.resource,
                shown(c.old.as_ref()),
                shown(c.new.as_ref())
            ));
        }
    }
    let n = answer.nodes.len();
    out.push_str(&format!(
        "dry run: {n} node{} would change; nothing was written\n",
        if n == 1 { "" } else { "s" }
    ));
    Ok(out)
}
