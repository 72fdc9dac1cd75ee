//! The replay against libyaml's behaviour, case by case.

use super::*;

#[test]
fn separation_tabs_become_spaces() {
    let cases = [
        ("key:\tvalue\n", "key: value\n"),
        ("a: b\tc\n", "a: b\tc\n"),
        ("a: 1\t# c\n", "a: 1 # c\n"),
        ("key\t: v\n", "key : v\n"),
        ("[1,\t2]\n", "[1, 2]\n"),
        ("a: \"x\n\ty\"\n", "a: \"x\n y\"\n"),
        ("a: \"x\ty\"\n", "a: \"x\ty\"\n"),
        ("a: \"x\\\ty\"\n", "a: \"x\\\ty\"\n"),
        ("a: |\n  x\n  \ty\n", "a: |\n  x\n  \ty\n"),
        ("a: x\n    \ty\n", "a: x\n     y\n"),
    ];
    for (text, want) in cases {
        let r = replay(text, false);
        assert!(r.refusal.is_none(), "{text:?}");
        assert_eq!(r.text, want, "{text:?}");
    }
}

#[test]
fn under_indented_lines_padded_on_request() {
    let cases = [
        ("a: 'x\ny'\n", "a: 'x\n   y'\n"),
        (
            "a:\n  b: \"x\n y\\\nz\"\n",
            "a:\n  b: \"x\n     y\\\n     z\"\n",
        ),
        ("- 'x\n\n  y'\n", "- 'x\n\n  y'\n"),
        ("a: [1,\n2]\n", "a: [1,\n    2]\n"),
        ("a: [\n]\n", "a: [\n    ]\n"),
        ("a: {x: 1,\n# c\ny: 2}\n", "a: {x: 1,\n    # c\n    y: 2}\n"),
        ("a: [b\nc]\n", "a: [b\n    c]\n"),
    ];
    for (text, want) in cases {
        let r = replay(text, true);
        assert!(r.refusal.is_none(), "{text:?}");
        assert_eq!(r.text, want, "{text:?}");
    }
}

#[test]
fn libyaml_refusals() {
    let cases: &[(&str, &str, (usize, usize))] = &[
        (
            "a:\n\tb: 1\n",
            "found character that cannot start any token",
            (1, 0),
        ),
        (
            "\tb: 1\n",
            "found character that cannot start any token",
            (0, 0),
        ),
        (
            "- \tx\n",
            "found character that cannot start any token",
            (0, 2),
        ),
        (
            "? a\n:\tb\n",
            "found character that cannot start any token",
            (1, 1),
        ),
        (
            "a: 1\n\t\nb: 2\n",
            "found a tab character that violates indentation",
            (0, 3),
        ),
        (
            "a: |\n  x\n\ty\n",
            "found a tab character where an indentation space is expected",
            (0, 3),
        ),
        ("a: 1\nb\n", "could not find expected ':'", (1, 0)),
        ("a: 'x\n", "found unexpected end of stream", (0, 3)),
        ("a: \"\\q\"\n", "found unknown escape character", (0, 3)),
        (
            "a: &x.y 1\n",
            "did not find expected alphabetic or numeric character",
            (0, 3),
        ),
        (
            "a: [!x}]\n",
            "did not find expected whitespace or line break",
            (0, 4),
        ),
        (
            "a: b: c\n",
            "mapping values are not allowed in this context",
            (0, 4),
        ),
        ("[a:]\n", "found unexpected ':'", (0, 1)),
        (
            "a: |0\n",
            "found an indentation indicator equal to 0",
            (0, 3),
        ),
    ];
    for (text, problem, mark) in cases {
        let r = replay(text, false);
        let r = r
            .refusal
            .unwrap_or_else(|| panic!("no refusal for {text:?}"));
        assert_eq!((r.problem, (r.line, r.col)), (*problem, *mark), "{text:?}");
    }
}
