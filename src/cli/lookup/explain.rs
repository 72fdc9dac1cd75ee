//! `--explain`: the hierarchy walk of a lookup, level by level, as text,
//! from the local lookup's steps or from a server's (`lookup --server`).

use crate::api::LookupAnswer;
use crate::hiera::HieraError;
use crate::hiera::lookup::{Answer, Outcome, Resolution, Step};
use crate::hiera::render::ruby::inspect;
use std::fmt::Write;

/// The explanation printed before the answer.
pub(crate) fn render(
    key: &str,
    resolution: &Resolution,
    steps: &[Step],
    result: Result<&Answer, &HieraError>,
) -> String {
    let mut out = header(key, resolution);
    for step in steps {
        let what = match &step.outcome {
            Outcome::BadDefinition => SKIPPED.to_owned(),
            Outcome::NoData => NO_DATA.to_owned(),
            Outcome::NoKey => NO_KEY.to_owned(),
            Outcome::Found(v) => format!("FOUND {}", inspect(v)),
        };
        let place = if step.path.is_empty() {
            String::new()
        } else {
            format!(" ({})", step.path)
        };
        let level = format!("{} level '{}'{place}", step.backend.name(), step.source);
        line(&mut out, step.depth, &step.key, &level, &what);
    }
    let _ = match result {
        Ok(Answer::Found(_)) => writeln!(out, "Result: found"),
        Ok(Answer::Default(_)) => writeln!(out, "{DEFAULT_APPLIES}"),
        Ok(Answer::NotFound) => writeln!(out, "{NOT_FOUND}"),
        Err(e) => writeln!(out, "Result: error: {e}"),
    };
    out
}

/// The explanation of a server's answer: the same lines, naming the
/// datasource of each level (a server has no backends or files).
pub(crate) fn render_remote(key: &str, resolution: &Resolution, answer: &LookupAnswer) -> String {
    let mut out = header(key, resolution);
    for step in answer.explain.iter().flatten() {
        let what = match (step.outcome.as_str(), &step.value) {
            ("bad_definition", _) => SKIPPED.to_owned(),
            ("no_data", _) => NO_DATA.to_owned(),
            ("no_key", _) => NO_KEY.to_owned(),
            ("found", Some(v)) => format!("FOUND {}", inspect(&v.0)),
            (other, _) => other.to_owned(),
        };
        let level = format!("level '{}'", step.source);
        line(&mut out, step.depth, &step.key, &level, &what);
    }
    let _ = if answer.found {
        writeln!(out, "Result: found")
    } else if answer.default {
        writeln!(out, "{DEFAULT_APPLIES}")
    } else {
        writeln!(out, "{NOT_FOUND}")
    };
    out
}

const SKIPPED: &str = "skipped: not a valid level after interpolation";
const NO_DATA: &str = "no data";
const NO_KEY: &str = "key not present";
const DEFAULT_APPLIES: &str = "Result: not found, the default applies";
const NOT_FOUND: &str = "Result: not found (nil)";

fn header(key: &str, resolution: &Resolution) -> String {
    let kind = match resolution {
        Resolution::Array => "array",
        Resolution::Hash | Resolution::HashWith(_) => "hash",
        _ => "priority",
    };
    format!("Explaining {kind} lookup of '{key}':\n")
}

fn line(out: &mut String, depth: usize, key: &str, level: &str, what: &str) {
    let indent = "  ".repeat(depth + 1);
    let nested = if depth > 0 {
        format!("(nested lookup of '{key}') ")
    } else {
        String::new()
    };
    let _ = writeln!(out, "{indent}{nested}{level}: {what}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ExplainStep, WireValue};
    use crate::hiera::Value;

    #[test]
    fn remote_steps_read_like_local_ones() {
        let step =
            |depth, key: &str, source: &str, outcome: &str, value: Option<Value>| ExplainStep {
                depth,
                key: key.into(),
                source: source.into(),
                outcome: outcome.into(),
                value: value.map(WireValue),
                keys: None,
            };
        let steps = vec![
            step(0, "k", "override/class/", "bad_definition", None),
            step(0, "k", "nodes", "no_data", None),
            step(0, "k", "globals", "no_key", None),
            step(1, "j", "astute", "found", Some(Value::str("x"))),
            step(0, "k", "astute", "found", Some(Value::Int(15))),
        ];
        let answer = |found, default, explain| LookupAnswer {
            found,
            default,
            value: None,
            explain,
            explanation: None,
        };
        let text = render_remote(
            "k",
            &Resolution::Priority,
            &answer(true, false, Some(steps)),
        );
        assert_eq!(
            text,
            "Explaining priority lookup of 'k':
  level 'override/class/': skipped: not a valid level after interpolation
  level 'nodes': no data
  level 'globals': key not present
    (nested lookup of 'j') level 'astute': FOUND \"x\"
  level 'astute': FOUND 15
Result: found
"
        );
        let cases: &[(bool, bool, Resolution, &str)] = &[
            (
                false,
                true,
                Resolution::Array,
                "Explaining array lookup of 'k':\nResult: not found, the default applies\n",
            ),
            (
                false,
                false,
                Resolution::Hash,
                "Explaining hash lookup of 'k':\nResult: not found (nil)\n",
            ),
        ];
        for (found, default, resolution, want) in cases {
            assert_eq!(
                render_remote("k", resolution, &answer(*found, *default, None)),
                *want
            );
        }
    }
}
