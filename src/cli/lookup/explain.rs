//! `--explain`: the hierarchy walk of a lookup, level by level, as text.

use crate::hiera::HieraError;
use crate::hiera::lookup::{Answer, Outcome, Resolution, Step};
use crate::hiera::render::ruby::inspect;
use std::fmt::Write;

/// The explanation printed before the answer.
pub fn render(
    key: &str,
    resolution: &Resolution,
    steps: &[Step],
    result: Result<&Answer, &HieraError>,
) -> String {
    let kind = match resolution {
        Resolution::Array => "array",
        Resolution::Hash | Resolution::HashWith(_) => "hash",
        _ => "priority",
    };
    let mut out = format!("Explaining {kind} lookup of '{key}':\n");
    for step in steps {
        let indent = "  ".repeat(step.depth + 1);
        let nested = if step.depth > 0 {
            format!("(nested lookup of '{}') ", step.key)
        } else {
            String::new()
        };
        let what = match &step.outcome {
            Outcome::BadDefinition => "skipped: not a valid level after interpolation".to_owned(),
            Outcome::NoData => "no data".to_owned(),
            Outcome::NoKey => "key not present".to_owned(),
            Outcome::Found(v) => format!("FOUND {}", inspect(v)),
        };
        let place = if step.path.is_empty() {
            String::new()
        } else {
            format!(" ({})", step.path)
        };
        let _ = writeln!(
            out,
            "{indent}{nested}{} level '{}'{place}: {what}",
            step.backend.name(),
            step.source
        );
    }
    let _ = match result {
        Ok(Answer::Found(_)) => writeln!(out, "Result: found"),
        Ok(Answer::Default(_)) => writeln!(out, "Result: not found, the default applies"),
        Ok(Answer::NotFound) => writeln!(out, "Result: not found (nil)"),
        Err(e) => writeln!(out, "Result: error: {e}"),
    };
    out
}
