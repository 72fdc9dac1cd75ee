//! YAML as Hiera's yaml backend reads it: Ruby 3.1's `YAML.load`, that is
//! Psych 4.0.3's `safe_load(text, permitted_classes: [Symbol], aliases:
//! false)` over libyaml 0.2.5. Pure: text in, value or Ruby error out.
//!
//! saphyr-parser (YAML 1.2) reads the events (`tree`); everything Psych
//! decides on top of them is ours: scalar typing (`scalar`), tags, merge
//! keys and refusals (`convert`). Where libyaml (YAML 1.1) reads the text
//! otherwise, a replay of its scanner (`libyaml`) prepares the text for
//! saphyr and knows libyaml's errors; `syntax` words saphyr's errors as
//! libyaml would.

mod convert;
mod libyaml;
mod ruby;
#[cfg(test)]
mod saphyr_texts;
mod scalar;
mod source;
mod syntax;
mod tree;

use crate::hiera::{ErrorClass, HieraError, Result, Value};
use libyaml::Replay;
use source::Source;
use tree::Located;

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
    load_with(text, false)
}

/// Loads the first document of `text` as Puppet 7's yaml_data does:
/// `Puppet::Util::Yaml.safe_load`, which is [`load`]'s Psych call with
/// `aliases: true` (puppet/util/yaml.rb). An alias is a copy of its
/// anchor's value (merge keys `<<: *base` included); aliases that would
/// copy more than a million nodes are refused.
///
/// # Errors
/// As [`load`], without `Psych::BadAlias` for an alias whose anchor came
/// before it.
pub fn load_puppet(text: &str) -> Result<Value> {
    load_with(text, true)
}

fn load_with(text: &str, aliases: bool) -> Result<Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    syntax::check_printable(text)?;
    // libyaml's scanner first: what it refuses, and how saphyr must see tabs.
    let replay = libyaml::replay(text, false);
    let failure = match attempt(&replay, aliases) {
        Ok(value) => return Ok(value),
        Err(Failure::Done(error)) => return Err(error),
        Err(Failure::Syntax(located)) => located,
    };
    if failure.indentation {
        // saphyr wants lines indented that libyaml does not: indent them.
        let padded = libyaml::replay(text, true);
        return match attempt(&padded, aliases) {
            Ok(value) => Ok(value),
            Err(Failure::Done(error)) => Err(error),
            Err(Failure::Syntax(located)) => Err(first_error(located, &padded)),
        };
    }
    Err(first_error(failure, &replay))
}

/// Why an attempt at reading the document failed.
enum Failure {
    /// The answer: an error libyaml or Psych raises.
    Done(HieraError),
    /// saphyr stopped; libyaml may have stopped earlier.
    Syntax(Located),
}

/// Reads and converts the document from the text the replay prepared.
fn attempt(replay: &Replay<'_>, aliases: bool) -> Result<Value, Failure> {
    let src = Source::new(&replay.text, &replay.pads, &replay.blocks);
    let parsed = tree::first_document(&src, aliases).map_err(Failure::Syntax)?;
    // saphyr read what libyaml's scanner refuses, before libyaml's end of
    // the document.
    if let Some(r) = &replay.refusal {
        if parsed.cut.is_none_or(|cut| r.index <= cut) {
            return Err(Failure::Done(syntax::refusal(r)));
        }
    }
    match parsed.root {
        None => Ok(Value::Nil),
        Some(root) => convert::to_value(&root).map_err(Failure::Done),
    }
}

/// libyaml's scanner error if it comes no later than saphyr's, else
/// saphyr's error in libyaml's words.
fn first_error(saphyr: Located, replay: &Replay<'_>) -> HieraError {
    match &replay.refusal {
        Some(r) if r.index <= saphyr.index || saphyr.about_tabs => syntax::refusal(r),
        _ => saphyr.error,
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
                let mut h = Hash::default();
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
                let mut h = Hash::default();
                h.insert(true.into(), 1.into());
                h.into()
            }),
            (":k: v\n", {
                let mut h = Hash::default();
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
    fn nesting_depth_is_bounded() {
        let block = |n: usize| -> String {
            (0..n)
                .map(|i| format!("{}- ", " ".repeat(2 * i)))
                .collect::<Vec<_>>()
                .join("\n")
                + "x\n"
        };
        let flow = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let too_deep = (ErrorClass::Exception, "stack level too deep".to_owned());
        let outcome = |text: &str| load(text).map_err(|e| (e.class, e.message));
        let cases = [
            (block(255), true),
            (block(256), false),
            (flow(255), true),
            (flow(256), false),
            // Far deeper input fails the same way instead of overflowing.
            (flow(200_000), false),
        ];
        for (text, ok) in cases {
            match outcome(&text) {
                Ok(_) => assert!(ok, "{} bytes loaded", text.len()),
                Err(e) => assert!(!ok && e == too_deep, "{} bytes: {e:?}", text.len()),
            }
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

    #[test]
    fn puppets_reader_bounds_what_aliases_copy() {
        // Ten of the one before, seven times over: 10^7 copies of `a`.
        let mut text = String::from("a0: &a0 [x]\n");
        for n in 1..=7 {
            let items = vec![format!("*a{}", n - 1); 10].join(", ");
            text.push_str(&format!("a{n}: &a{n} [{items}]\n"));
        }
        let e = load_puppet(&text).expect_err("refused");
        assert!(
            e.message.contains("aliases copy more than 1000000 nodes"),
            "{e:?}"
        );
        // Hiera 3's reader refuses the first alias, as ever.
        assert_eq!(
            load(&text).expect_err("refused").class,
            ErrorClass::PsychBadAlias
        );
        // An alias inside its own anchor (a recursive structure in Ruby)
        // has no node to copy: refused by name.
        let e = load_puppet("a: &x [1, *x]\n").expect_err("refused");
        assert_eq!(
            (e.class, e.message.as_str()),
            (ErrorClass::PsychBadAlias, "Unknown alias: x")
        );
    }
}
