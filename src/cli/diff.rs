//! `hierad config diff`: two versions of a level's stored document
//! (default: the previous and the latest), or with `--effective` the
//! effective document at two generations or tags; readable (coloured on
//! a terminal, unless `NO_COLOR` is set) or the API's JSON
//! (`--format json`).

use super::args::Access;
use super::history::Doc;
use crate::api::DiffAnswer;
use crate::ops::diffs::{Point, Range};
use crate::wire;
use anyhow::bail;
use std::io::IsTerminal;

#[derive(Debug, clap::Args)]
pub(crate) struct DiffArgs {
    #[command(flatten)]
    pub(crate) doc: Doc,
    /// The version to compare from [default: the one before --to; 0 is the empty document]
    #[arg(long, value_name = "N")]
    pub(crate) from: Option<u64>,
    /// The version to compare to [default: the latest]
    #[arg(long, value_name = "N")]
    pub(crate) to: Option<u64>,
    /// Compare the effective document at two generations or tags instead
    #[arg(long, conflicts_with_all = ["from", "to"])]
    pub(crate) effective: bool,
    /// With --effective: the generation to compare from
    #[arg(long, value_name = "G", conflicts_with = "from_tag")]
    pub(crate) from_generation: Option<u64>,
    /// With --effective: the tag to compare from
    #[arg(long, value_name = "NAME")]
    pub(crate) from_tag: Option<String>,
    /// With --effective: the generation to compare to [default: the newest]
    #[arg(long, value_name = "G", conflicts_with = "to_tag")]
    pub(crate) to_generation: Option<u64>,
    /// With --effective: the tag to compare to
    #[arg(long, value_name = "NAME")]
    pub(crate) to_tag: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: DiffFormat,
}

/// `config diff --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DiffFormat {
    Text,
    Json,
}

/// `config diff`.
///
/// # Errors
///
/// Generations or tags without --effective, --effective without a from;
/// what the diff refuses (a missing version or tag, a pruned generation).
pub(crate) fn run(args: &DiffArgs) -> anyhow::Result<String> {
    let range = range(args)?;
    let (ops, at) = args.doc.open(Access::Read)?;
    let answer = ops.diff(&at, &range)?;
    match args.format {
        DiffFormat::Json => Ok(serde_json::to_string_pretty(&answer)? + "\n"),
        DiffFormat::Text => {
            let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            let what = if args.effective {
                "generation"
            } else {
                "version"
            };
            Ok(render(&answer, what, colour))
        }
    }
}

fn range(args: &DiffArgs) -> anyhow::Result<Range> {
    let point = |g: Option<u64>, t: &Option<String>| match (g, t) {
        (Some(g), _) => Some(Point::Generation(g)),
        (None, Some(t)) => Some(Point::Tag(t.clone())),
        (None, None) => None,
    };
    let from = point(args.from_generation, &args.from_tag);
    let to = point(args.to_generation, &args.to_tag);
    if !args.effective {
        if from.is_some() || to.is_some() {
            bail!(
                "--from-generation, --to-generation, --from-tag and --to-tag compare the effective document: add --effective"
            );
        }
        return Ok(Range::Versions {
            from: args.from,
            to: args.to,
        });
    }
    let Some(from) = from else {
        bail!("--effective compares generations: give --from-generation G or --from-tag NAME");
    };
    Ok(Range::Effective { from, to })
}

/// The diff as lines: `+ path` added, `- path` removed, `~ path: old ->
/// new` changed (values as wire JSON); green, red and yellow with
/// `colour`.
pub(crate) fn render(answer: &DiffAnswer, what: &str, colour: bool) -> String {
    let paint = |code: &str, text: String| {
        if colour {
            format!("\x1b[{code}m{text}\x1b[0m\n")
        } else {
            format!("{text}\n")
        }
    };
    let shown = |path: &str| {
        if path.is_empty() {
            "(the whole document)".to_owned()
        } else {
            path.to_owned()
        }
    };
    let mut out = format!("--- {what} {}\n+++ {what} {}\n", answer.from, answer.to);
    if answer.added.is_empty() && answer.removed.is_empty() && answer.changed.is_empty() {
        out.push_str("(no changes)\n");
        return out;
    }
    for path in &answer.added {
        out.push_str(&paint("32", format!("+ {}", shown(path))));
    }
    for path in &answer.removed {
        out.push_str(&paint("31", format!("- {}", shown(path))));
    }
    for change in &answer.changed {
        let line = format!(
            "~ {}: {} -> {}",
            shown(&change.path),
            wire::to_string(&change.old.0),
            wire::to_string(&change.new.0)
        );
        out.push_str(&paint("33", line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hiera::{Hash, Value};

    #[test]
    fn a_diff_reads_as_plus_minus_and_tilde_lines() {
        let a: Hash = [
            (Value::str("a"), Value::Int(1)),
            (Value::str("d"), Value::Int(1)),
        ]
        .into_iter()
        .collect();
        let b: Hash = [
            (Value::str("a"), Value::Int(2)),
            (Value::str("e"), Value::str("x")),
        ]
        .into_iter()
        .collect();
        let answer = DiffAnswer::new(1, 2, &a, &b);
        assert_eq!(
            render(&answer, "version", false),
            "--- version 1\n+++ version 2\n+ e\n- d\n~ a: 1 -> 2\n"
        );
        assert_eq!(
            render(&answer, "version", true).lines().nth(2),
            Some("\x1b[32m+ e\x1b[0m")
        );
        let same = DiffAnswer::new(2, 2, &b, &b);
        assert!(render(&same, "version", false).ends_with("(no changes)\n"));
    }
}
