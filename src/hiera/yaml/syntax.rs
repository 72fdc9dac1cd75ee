//! `Psych::SyntaxError` in libyaml's words: saphyr's reports mapped onto
//! the problem, context and context mark libyaml 0.2.5 gives for the same
//! mistake, and the errors of libyaml's parser and reader that saphyr
//! (YAML 1.2) has no reason to raise.

use super::libyaml::Refusal;
use super::source::Source;
use crate::hiera::{ErrorClass, HieraError, Result};
use saphyr_parser::{Marker, ScanError};

/// A collection open at the point of an error.
#[derive(Clone, Copy, Debug)]
pub(super) struct Open {
    pub(crate) seq: bool,
    pub(crate) flow: bool,
    /// Where libyaml marks it: its first token (or its properties).
    pub(crate) start: Marker,
}

/// What the parser had read when saphyr gave up.
pub(super) struct State<'o> {
    pub(crate) open: &'o [Open],
    /// The end of the last event read.
    pub(crate) last_end: Option<Marker>,
    /// Whether the document's root node is complete.
    pub(crate) root_done: bool,
}

/// A libyaml mark: 0-based line and column, as Psych adds one to each.
#[derive(Clone, Copy)]
struct Mark {
    line: usize,
    col: usize,
}

impl Source<'_> {
    fn at(&self, m: Marker) -> Mark {
        let (line, col) = self.mark(m);
        Mark { line, col }
    }
}

/// Where libyaml's context mark stays when a parser error sets none.
const ZERO: Mark = Mark { line: 0, col: 0 };

/// Psych's message: `(<unknown>): <problem> <context> at line L column C`.
fn error(problem: &str, context: Option<&str>, mark: Mark) -> HieraError {
    let text = match context {
        Some(c) => format!("{problem} {c}"),
        None => problem.to_owned(),
    };
    HieraError::new(
        ErrorClass::PsychSyntaxError,
        format!(
            "(<unknown>): {text} at line {} column {}",
            mark.line + 1,
            mark.col + 1
        ),
    )
}

/// Maps a saphyr error onto libyaml's report of the same input.
pub(super) fn translate(err: &ScanError, src: &Source<'_>, state: &State<'_>) -> HieraError {
    let at = *err.marker();
    let info = err.info();
    let innermost = |seq: bool, flow: bool| {
        state
            .open
            .iter()
            .rev()
            .find(|o| o.seq == seq && o.flow == flow)
            .map_or(src.at(at), |o| src.at(o.start))
    };
    let in_flow = state.open.last().is_some_and(|o| o.flow);
    match info {
        "while parsing a flow sequence, expected ',' or ']'" => error(
            "did not find expected ',' or ']'",
            Some("while parsing a flow sequence"),
            innermost(true, true),
        ),
        "while parsing a flow mapping, did not find expected ',' or '}'" => error(
            "did not find expected ',' or '}'",
            Some("while parsing a flow mapping"),
            innermost(false, true),
        ),
        "while parsing a block mapping, did not find expected key" => error(
            "did not find expected key",
            Some("while parsing a block mapping"),
            innermost(false, false),
        ),
        "while parsing a block collection, did not find expected '-' indicator" => error(
            "did not find expected '-' indicator",
            Some("while parsing a block collection"),
            innermost(true, false),
        ),
        "while parsing a node, did not find expected node content" => error(
            "did not find expected node content",
            Some(if in_flow {
                "while parsing a flow node"
            } else {
                "while parsing a block node"
            }),
            src.at(at),
        ),
        "mapping values are not allowed in this context"
        | "block sequence entries are not allowed in this context"
        | "mapping keys are not allowed in this context" => error(info, None, src.at(at)),
        "did not find expected <document start>" => error(info, None, ZERO),
        "simple key expected" | "simple key expect ':'" => error(
            "could not find expected ':'",
            Some("while scanning a simple key"),
            src.at(next_token(src, state.last_end).unwrap_or(at)),
        ),
        "the handle wasn't declared" => error(
            "found undefined tag handle",
            Some("while parsing a node"),
            src.at(at),
        ),
        "misplaced bracket"
        | "invalid trailing content after double-quoted scalar"
        | "did not find expected next token" => stray_token(src, state, at),
        // YAML 1.2 rules libyaml does not have: inside a flow collection,
        // libyaml's parser trips on the tokens it reads there instead.
        _ if in_flow && saphyr_only(info) => stray_token(src, state, at),
        "while scanning an anchor or alias, did not find expected alphabetic or numeric character" => {
            error(
                "did not find expected alphabetic or numeric character",
                Some(anchor_context(src, at)),
                src.at(at),
            )
        }
        "while scanning a verbatim tag, did not find the expected '>'" => error(
            "did not find the expected '>'",
            Some("while scanning a tag"),
            src.at(at),
        ),
        "while parsing a quoted scalar, did not find expected hexadecimal number" => error(
            "did not find expected hexdecimal number",
            Some("while parsing a quoted scalar"),
            src.at(at),
        ),
        "while scanning a YAML directive, did not find expected digit or '.' character"
        | "while scanning a YAML directive, did not find expected version number"
        | "while scanning a YAML directive, found extremely long version number" => error(
            info.trim_start_matches("while scanning a YAML directive, "),
            Some("while scanning a %YAML directive"),
            src.at(at),
        ),
        _ if info.starts_with("unexpected character: ") => error(
            "found character that cannot start any token",
            Some("while scanning for the next token"),
            src.at(at),
        ),
        _ => match info.split_once(", ") {
            // saphyr keeps libyaml's "<context>, <problem>" for the rest.
            Some((context, problem)) if context.starts_with("while ") => {
                error(problem, Some(context), src.at(at))
            }
            _ => error(info, None, src.at(at)),
        },
    }
}

/// saphyr's complaints that have no counterpart in libyaml's scanner.
fn saphyr_only(info: &str) -> bool {
    matches!(
        info,
        "\"-\" is only valid inside a block"
            | "illegal placement of ':' indicator"
            | "expected whitespace"
            | "plain scalar cannot start with '-' followed by ,[]{}"
            | "comments must be separated from other tokens by whitespace"
            | "comment intercepting the multiline text"
            | "':' may not precede any of `[{` in flow mapping"
            | "unexpected end of plain scalar"
            | "invalid indentation"
            | "invalid indentation in flow construct"
    )
}

/// `&` or `*`: which of libyaml's two contexts applies.
fn anchor_context(src: &Source<'_>, at: Marker) -> &'static str {
    if src.from(at).starts_with('*') {
        "while scanning an alias"
    } else {
        "while scanning an anchor"
    }
}

/// A token libyaml's parser does not expect where it stands: the complaint
/// of the collection (or document) being read.
fn stray_token(src: &Source<'_>, state: &State<'_>, at: Marker) -> HieraError {
    let prev = src
        .before(at)
        .trim_end_matches([' ', '\t', '\r', '\n'])
        .chars()
        .next_back();
    let expecting_node = matches!(prev, Some(':' | '-' | '?' | ',' | '[' | '{'));
    match state.open.last() {
        None if state.root_done => error("did not find expected <document start>", None, ZERO),
        None => error(
            "did not find expected node content",
            Some("while parsing a block node"),
            src.at(at),
        ),
        Some(o) if expecting_node => error(
            "did not find expected node content",
            Some(if o.flow {
                "while parsing a flow node"
            } else {
                "while parsing a block node"
            }),
            src.at(at),
        ),
        Some(o) => {
            let (problem, context) = match (o.flow, o.seq) {
                (true, true) => (
                    "did not find expected ',' or ']'",
                    "while parsing a flow sequence",
                ),
                (true, false) => (
                    "did not find expected ',' or '}'",
                    "while parsing a flow mapping",
                ),
                (false, true) => (
                    "did not find expected '-' indicator",
                    "while parsing a block collection",
                ),
                (false, false) => ("did not find expected key", "while parsing a block mapping"),
            };
            error(problem, Some(context), src.at(o.start))
        }
    }
}

/// The start of the first token after `from`: where libyaml's stale simple
/// key began.
pub(super) fn next_token(src: &Source<'_>, from: Option<Marker>) -> Option<Marker> {
    let from = from?;
    let (mut line, mut col, mut index) = (from.line(), from.col(), from.index());
    let mut in_comment = false;
    for c in src.from(from).chars() {
        match c {
            '\n' => {
                in_comment = false;
                line += 1;
                col = 0;
                index += 1;
                continue;
            }
            _ if in_comment => {}
            ' ' | '\t' | '\r' => {}
            '#' => in_comment = true,
            _ => return Some(Marker::new(index, line, col)),
        }
        col += 1;
        index += 1;
    }
    None
}

/// The characters libyaml's reader accepts (YAML 1.1 `c-printable`).
fn is_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
        || c >= '\u{10000}'
}

/// libyaml's reader refuses control characters anywhere in the text, as
/// it decodes ahead of the parser.
///
/// # Errors
/// Its error, which has no mark: Psych reports line 1 column 1.
pub(super) fn check_printable(text: &str) -> Result<()> {
    let ascii_ok = |b: u8| (b' '..=b'~').contains(&b) || matches!(b, b'\t' | b'\n' | b'\r');
    if text.bytes().all(ascii_ok) || text.chars().all(is_printable) {
        Ok(())
    } else {
        Err(error("control characters are not allowed", None, ZERO))
    }
}

/// libyaml's block mapping wants a key before a `:`; saphyr (YAML 1.2)
/// reads an empty one. True for the empty key saphyr made of a `:` at `at`
/// that no `?` introduced.
pub(super) fn is_keyless_value(src: &Source<'_>, at: Marker) -> bool {
    src.from(at).starts_with(':')
        && !src
            .before(at)
            .trim_end_matches([' ', '\t', '\r', '\n'])
            .ends_with('?')
}

/// libyaml's complaint for an indicator where a flow node should start.
pub(super) fn flow_node_expected(src: &Source<'_>, at: Marker) -> HieraError {
    error(
        "did not find expected node content",
        Some("while parsing a flow node"),
        src.at(at),
    )
}

/// libyaml's complaint for a `:` without a key in a block mapping.
pub(super) fn missing_key(src: &Source<'_>, mapping_start: Marker) -> HieraError {
    error(
        "did not find expected key",
        Some("while parsing a block mapping"),
        src.at(mapping_start),
    )
}

/// Psych's exception for an error of libyaml's scanner.
pub(super) fn refusal(r: &Refusal) -> HieraError {
    error(
        r.problem,
        r.context,
        Mark {
            line: r.line,
            col: r.col,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text() {
        let cases = [
            ("a: b\n\tc\r\n", true),
            ("é ✓ \u{85} \u{feff} \u{1F600}", true),
            ("a\u{1}", false),
            ("\u{7f}", false),
            ("\u{9f}", false),
            ("\u{fffe}", false),
            ("\0", false),
        ];
        for (text, ok) in cases {
            assert_eq!(check_printable(text).is_ok(), ok, "{text:?}");
        }
        let err = check_printable("a: \u{1}").unwrap_err();
        assert_eq!(
            err.message,
            "(<unknown>): control characters are not allowed at line 1 column 1"
        );
    }

    #[test]
    fn psych_message_format() {
        let cases = [
            (
                error(
                    "did not find expected key",
                    Some("while parsing a block mapping"),
                    Mark { line: 2, col: 4 },
                ),
                "(<unknown>): did not find expected key while parsing a block mapping at line 3 column 5",
            ),
            (
                error("mapping values are not allowed in this context", None, ZERO),
                "(<unknown>): mapping values are not allowed in this context at line 1 column 1",
            ),
        ];
        for (err, want) in cases {
            assert_eq!(
                (err.class, err.message.as_str()),
                (ErrorClass::PsychSyntaxError, want)
            );
        }
    }
}
