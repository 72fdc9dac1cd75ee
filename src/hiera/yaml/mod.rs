//! YAML as Hiera's yaml backend reads it: Ruby 3.1's `YAML.load`, that is
//! Psych 4.0.3's `safe_load(text, permitted_classes: [Symbol], aliases:
//! false)` over libyaml 0.2.5. Pure: text in, value or Ruby error out.
//!
//! saphyr-parser reads the events; everything Psych decides on top of them
//! is ours: scalar typing (`scalar`), tags, merge keys and refusals
//! (`convert`), and libyaml's stricter syntax and error wording (`syntax`,
//! `tabs`).

mod convert;
mod scalar;
mod source;
mod syntax;
mod tabs;
mod tree;

use crate::hiera::{ErrorClass, HieraError, Result, Value};
use source::Source;

/// Loads the first document of `text` as `YAML.load` would, after the
/// backend's `File.read(path, encoding: 'BOM|UTF-8')` (a leading UTF-8 BOM
/// is dropped).
///
/// A stream without any document (empty, or only comments) loads as nil,
/// Psych's default fallback; `---` alone is an empty document, also nil.
///
/// # Errors
/// The Ruby exception `YAML.load` raises: `Psych::SyntaxError` (libyaml's
/// wording where it could be matched), `Psych::BadAlias` for any alias,
/// `Psych::DisallowedClass` for dates, times and Ruby object tags, and the
/// few `ArgumentError`/`TypeError`/`NoMethodError` Psych's own conversions
/// raise on odd tagged scalars.
pub fn load(text: &str) -> Result<Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    syntax::check_stream_start(text)?;
    let (mut prepared, mut tab_error) = tabs::prepare(text, false);
    let mut src = Source::new(&prepared);
    let mut parsed = tree::first_document(&src);
    if parsed.as_ref().is_err_and(|e| e.quoted_indent) {
        (prepared, tab_error) = tabs::prepare(text, true);
        src = Source::new(&prepared);
        parsed = tree::first_document(&src);
    }
    // libyaml stops at the first tab it refuses unless an earlier error
    // stopped it first; saphyr's own tab complaints never count.
    let root = match (parsed, tab_error) {
        (Err(e), Some(t)) if e.index < t.index && !e.about_tabs => return Err(e.error),
        (_, Some(t)) => return Err(syntax::tab_error(&t)),
        (Err(e), None) => return Err(e.error),
        (Ok(root), None) => root,
    };
    match root {
        None => Ok(Value::Nil),
        Some(root) => convert::to_value(&root),
    }
}

fn disallowed(class: &str) -> HieraError {
    HieraError::new(
        ErrorClass::PsychDisallowedClass,
        format!("Tried to load unspecified class: {class}"),
    )
}

fn bad_alias(name: &str) -> HieraError {
    HieraError::new(ErrorClass::PsychBadAlias, format!("Unknown alias: {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hiera::Hash;
    use crate::rhash;

    fn sym(s: &str) -> Value {
        Value::Symbol(s.into())
    }

    #[test]
    fn documents() {
        let cases: Vec<(&str, Value)> = vec![
            ("", Value::Nil),
            ("# only a comment\n", Value::Nil),
            ("---", Value::Nil),
            ("--- a\n--- b\n", Value::str("a")),
            ("\u{feff}a: 1\n", rhash! {"a" => 1}.into()),
            ("a: 1\nb: [x, 2]\n", {
                let mut h = rhash! {"a" => 1};
                h.insert("b".into(), vec![Value::str("x"), 2.into()].into());
                h.into()
            }),
            ("a: 1\na: 2\nb: 3\n", rhash! {"a" => 2, "b" => 3}.into()),
            ("base: &b {x: 1}\n<<: {x: 2, y: 3}\nz: 4\n", {
                let mut h = Hash::new();
                h.insert("base".into(), rhash! {"x" => 1}.into());
                h.insert("x".into(), 2.into());
                h.insert("y".into(), 3.into());
                h.insert("z".into(), 4.into());
                h.into()
            }),
            (
                "<<: [{a: 1}, {a: 2, b: 2}]\n",
                rhash! {"a" => 1, "b" => 2}.into(),
            ),
            ("!!str <<: 1\n", rhash! {"<<" => 1}.into()),
            ("yes: 1\n", {
                let mut h = Hash::new();
                h.insert(true.into(), 1.into());
                h.into()
            }),
            (":k: v\n", {
                let mut h = Hash::new();
                h.insert(sym("k"), "v".into());
                h.into()
            }),
            ("a: |\n  x\n  y\n", rhash! {"a" => "x\ny\n"}.into()),
            ("a: >-\n  x\n  y\n", rhash! {"a" => "x y"}.into()),
            ("a: '1'\n", rhash! {"a" => "1"}.into()),
            ("a: !!binary aGVsbG8=\n", rhash! {"a" => "hello"}.into()),
            ("- !ruby/symbol foo\n", vec![sym("foo")].into()),
            (
                "- !!int '42'\n- !!float '1'\n",
                vec![42.into(), Value::Float(1.0)].into(),
            ),
            ("a: &x 1\n", rhash! {"a" => 1}.into()),
        ];
        for (text, want) in cases {
            assert_eq!(load(text), Ok(want), "load({text:?})");
        }
    }

    #[test]
    fn refusals() {
        let cases: &[(&str, ErrorClass, &str)] = &[
            (
                "a: &x 1\nb: *x\n",
                ErrorClass::PsychBadAlias,
                "Unknown alias: x",
            ),
            (
                "a: *nowhere\n",
                ErrorClass::PsychBadAlias,
                "Unknown alias: nowhere",
            ),
            (
                "<<: *base\n",
                ErrorClass::PsychBadAlias,
                "Unknown alias: base",
            ),
            (
                "d: 2024-01-02\n",
                ErrorClass::PsychDisallowedClass,
                "Tried to load unspecified class: Date",
            ),
            (
                "x: !ruby/object:OpenStruct {}\n",
                ErrorClass::PsychDisallowedClass,
                "Tried to load unspecified class: OpenStruct",
            ),
            (
                "s: !!set {a: 1}\n",
                ErrorClass::PsychDisallowedClass,
                "Tried to load unspecified class: Psych::Set",
            ),
            (
                "a: [1, 2\n",
                ErrorClass::PsychSyntaxError,
                "(<unknown>): did not find expected ',' or ']' while parsing a flow sequence at line 1 column 4",
            ),
            (
                "a: 1\nb\n",
                ErrorClass::PsychSyntaxError,
                "(<unknown>): could not find expected ':' while scanning a simple key at line 2 column 1",
            ),
            (
                "a: *x\nb: [\n",
                ErrorClass::PsychSyntaxError,
                "(<unknown>): did not find expected node content while parsing a flow node at line 3 column 1",
            ),
        ];
        for (text, class, message) in cases {
            let err = load(text).unwrap_err();
            assert_eq!(
                (err.class, err.message.as_str()),
                (*class, *message),
                "{text:?}"
            );
        }
    }
}
