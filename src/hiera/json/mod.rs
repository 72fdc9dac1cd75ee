//! JSON data as Ruby's json 2.6.1 (bundled with Ruby 3.1.2) loads it: the
//! json backend's `JSON.parse(text)` ([`load`]) and the `hiera` command's
//! `JSON.load(File.read(path))` for `-j` scope files ([`load_scope`]), with
//! Ruby's values (key order, Integer vs Float, duplicate keys last-wins) and
//! Ruby's exact errors.
//!
//! - [`parser`]: the C parser's state machines, byte for byte.
//! - [`additions`]: `create_additions`, the `json_class` hook of `JSON.load`.
//!
//! Neither strips a byte order mark: `JSON.parse` refuses one (`859:
//! unexpected token at '\u{feff}…'`). The json backend never sees it (its
//! `File.read(path, encoding: 'BOM|UTF-8')` drops it first, so its callers
//! must too); the `hiera` command's plain `File.read` keeps it, so a scope
//! file with a BOM fails to load. Both take text: a file that is not UTF-8
//! reaches them as the caller decoded it (Ruby would keep the raw bytes).

mod additions;
mod parser;

use super::error::Result;
use super::value::Value;
use parser::Options;

/// `JSON.parse(text)`: NaN and Infinity refused, nesting limited to 100,
/// no `json_class` hook.
///
/// # Errors
///
/// `JSON::ParserError` with Ruby's message (`859: unexpected token at
/// '…'`: a line of json's parser.rl and the text from where Ruby's parser
/// stopped), `JSON::NestingError` (`nesting of 101 is too deep`).
pub fn load(text: &str) -> Result<Value> {
    parser::parse(
        text,
        Options {
            allow_nan: false,
            max_nesting: 100,
            create_additions: false,
        },
    )
}

/// `JSON.load(text)` with `JSON.load_default_options`: an empty text is
/// nil (`allow_blank`; a blank one is still an error), NaN, Infinity and
/// -Infinity are Floats (`allow_nan`), nesting is unlimited
/// (`max_nesting: false`) up to Ruby's stack (ours: `SystemStackError`
/// past 1,000 levels), and an object with a non-nil `"json_class"` goes
/// through `create_additions` (see [`additions`]).
///
/// # Errors
///
/// As [`load`], bar the nesting limit; plus `SystemStackError` for very
/// deep nesting and the errors of `json_class` resolution.
pub fn load_scope(text: &str) -> Result<Value> {
    if text.is_empty() {
        return Ok(Value::Nil);
    }
    parser::parse(
        text,
        Options {
            allow_nan: true,
            max_nesting: 0,
            create_additions: true,
        },
    )
}

/// A number's text as Ruby's JSON reads it: a Float with a fraction or an
/// exponent, else an Integer of any size.
pub(crate) fn number(text: &str) -> Value {
    if text.contains(['.', 'e', 'E']) {
        Value::Float(text.parse().unwrap_or(f64::NAN))
    } else {
        match text.parse::<i64>() {
            Ok(n) => Value::Int(n),
            Err(_) => Value::integer(text.parse().unwrap_or_default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hiera::ErrorClass;
    use crate::rhash;

    #[test]
    fn load_and_load_scope_table() {
        // (text, JSON.parse, JSON.load); None = an error.
        let nan = Value::Float(f64::NAN);
        let cases: Vec<(&str, Option<Value>, Option<Value>)> = vec![
            ("", None, Some(Value::Nil)),
            ("  ", None, None),
            ("null", Some(Value::Nil), Some(Value::Nil)),
            ("NaN", None, Some(nan.clone())),
            (
                "[Infinity, -Infinity]",
                None,
                Some(Value::Array(vec![
                    Value::Float(f64::INFINITY),
                    Value::Float(f64::NEG_INFINITY),
                ])),
            ),
            (
                r#"{"json_class":null,"a":1}"#,
                Some(Value::Hash(rhash! {"json_class" => Value::Nil, "a" => 1})),
                Some(Value::Hash(rhash! {"json_class" => Value::Nil, "a" => 1})),
            ),
            (
                r#"{"json_class":"String","raw":[104,105]}"#,
                Some(Value::Hash(rhash! {
                    "json_class" => "String",
                    "raw" => Value::Array(vec![104.into(), 105.into()]),
                })),
                Some("hi".into()),
            ),
        ];
        for (text, parse, scope) in cases {
            for (got, want) in [(load(text), parse), (load_scope(text), scope)] {
                match (got, want) {
                    (Ok(v), Some(w)) => assert!(same(&v, &w), "{text:?}: {v:?} vs {w:?}"),
                    (Err(_), None) => {}
                    (got, want) => panic!("{text:?}: got {got:?}, want {want:?}"),
                }
            }
        }
    }

    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Float(x), Value::Float(y)) => {
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
            }
            _ => a == b,
        }
    }

    #[test]
    fn nesting_limits() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(load(&deep(100)).is_ok());
        let err = load(&deep(101)).unwrap_err();
        assert_eq!(err.class, ErrorClass::JsonNestingError);
        assert_eq!(err.message, "nesting of 101 is too deep");
        assert!(load_scope(&deep(parser::STACK_DEPTH)).is_ok());
        let err = load_scope(&deep(parser::STACK_DEPTH + 1)).unwrap_err();
        assert_eq!(err.class, ErrorClass::SystemStackError);
    }
}
