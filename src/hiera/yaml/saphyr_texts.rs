//! saphyr-parser's error texts that `tree` and `syntax` branch on, each
//! produced by an input: a saphyr-parser release that rewords one fails
//! here. Cargo.toml pins the exact version, so an upgrade is deliberate
//! and runs this first.
//!
//! Two texts are matched defensively and no input is known to produce
//! them: "did not find expected next token" (the scanner ran dry) and
//! "unexpected end of plain scalar" (both in `syntax::translate`), whose
//! arms only choose a libyaml wording.

use saphyr_parser::Parser;

/// saphyr's report of `input`: the first error's text.
fn first_error(input: &str) -> Option<String> {
    let mut parser = Parser::new_from_str(input);
    while let Some(next) = parser.next_event() {
        if let Err(err) = next {
            return Some(err.info().to_owned());
        }
    }
    None
}

/// (input, the text saphyr reports for it).
#[rustfmt::skip]
const CASES: &[(&str, &str)] = &[
    // tree::first_document
    ("a: *b\nc: &b 1", "while parsing node, found unknown anchor"),
    ("a: 1\n%YAML 1.1\n---\nb", "missing explicit document end marker before directive"),
    ("\"a\" b", "invalid trailing content after double-quoted scalar"),
    ("|\n    \n  a", "wrongly indented line in block scalar"),
    ("a: \"b\nc\"", "invalid indentation in quoted scalar"),
    ("a:\n\t- b", "tabs disallowed within this context (block indentation)"),
    ("a:\tb", "':' must be followed by a valid YAML whitespace"),
    // syntax::translate
    ("[1, 2", "while parsing a flow sequence, expected ',' or ']'"),
    ("{a: 1 b", "while parsing a flow mapping, did not find expected ',' or '}'"),
    ("a:\n  b: 1\n c: 2", "while parsing a block mapping, did not find expected key"),
    ("- a\nb: 1", "while parsing a block collection, did not find expected '-' indicator"),
    ("key: [", "while parsing a node, did not find expected node content"),
    ("a: b: c", "mapping values are not allowed in this context"),
    ("a: - b", "block sequence entries are not allowed in this context"),
    ("a: ? b", "mapping keys are not allowed in this context"),
    ("|\n  a\n b", "did not find expected <document start>"),
    ("a: 1\nb", "simple key expected"),
    ("? a\nb c\n: d", "simple key expect ':'"),
    ("!x!y a", "the handle wasn't declared"),
    ("]", "misplaced bracket"),
    ("[- a]", "\"-\" is only valid inside a block"),
    ("[a\n: b]", "illegal placement of ':' indicator"),
    ("?\ta", "expected whitespace"),
    ("[-]", "plain scalar cannot start with '-' followed by ,[]{}"),
    ("\"a\"#c", "comments must be separated from other tokens by whitespace"),
    ("a: b # c\n  d", "comment intercepting the multiline text"),
    ("{a:[1]}", "':' may not precede any of `[{` in flow mapping"),
    ("a: &", "while scanning an anchor or alias, did not find expected alphabetic or numeric character"),
    ("!<a b", "while scanning a verbatim tag, did not find the expected '>'"),
    ("\"\\xZZ\"", "while parsing a quoted scalar, did not find expected hexadecimal number"),
    ("%YAML 1\n---\na", "while scanning a YAML directive, did not find expected digit or '.' character"),
    ("%YAML x\n---\na", "while scanning a YAML directive, did not find expected version number"),
    ("%YAML 1.1234567890123\n---\na", "while scanning a YAML directive, found extremely long version number"),
    ("@a", "unexpected character: `@'"),
];

#[test]
fn saphyr_reports_the_texts_we_branch_on() {
    for (input, want) in CASES {
        assert_eq!(first_error(input).as_deref(), Some(*want), "{input:?}");
    }
    // tree::first_document: saphyr's flow nesting limit.
    let deep = "[".repeat(300);
    assert_eq!(
        first_error(&deep).as_deref(),
        Some("recursion limit exceeded")
    );
}
