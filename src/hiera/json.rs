//! JSON data as Ruby's `JSON.parse` loads it, for the json backend and
//! `-j` scope files: key order kept, Integer (any size) vs Float by the
//! number's spelling, duplicate keys resolved last-wins.

use super::error::{ErrorClass, HieraError, Result};
use super::value::{Hash, Value};
use serde_json::Value as Json;

/// Parses JSON text into a [`Value`].
///
/// # Errors
///
/// `JSON::ParserError` for malformed text. Ruby's message names an internal
/// parser line and the unparsed rest (`859: unexpected token at '…'`); ours
/// keeps the `unexpected token at '…'` part, pointing where serde_json
/// stopped, which is not always where Ruby's parser stops.
pub fn load(text: &str) -> Result<Value> {
    match serde_json::from_str::<Json>(text) {
        Ok(json) => Ok(from_json(json)),
        Err(err) => {
            let rest = rest_at(text, err.line(), err.column());
            Err(HieraError::new(
                ErrorClass::JsonParserError,
                format!("unexpected token at '{rest}'"),
            ))
        }
    }
}

/// Converts parsed JSON into a [`Value`].
pub fn from_json(json: Json) -> Value {
    match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(b),
        Json::Number(n) => number(n.as_str()),
        Json::String(s) => Value::String(s),
        Json::Array(items) => Value::Array(items.into_iter().map(from_json).collect()),
        Json::Object(map) => {
            let mut h = Hash::with_capacity(map.len());
            for (k, v) in map {
                h.insert(Value::String(k), from_json(v));
            }
            Value::Hash(h)
        }
    }
}

/// Ruby makes a Float of any number with a fraction or an exponent.
fn number(text: &str) -> Value {
    if text.contains(['.', 'e', 'E']) {
        Value::Float(text.parse().unwrap_or(f64::NAN))
    } else {
        match text.parse::<i64>() {
            Ok(n) => Value::Int(n),
            Err(_) => Value::integer(text.parse().unwrap_or_default()),
        }
    }
}

fn rest_at(text: &str, line: usize, column: usize) -> &str {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = (line_start + column.saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    &text[at..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    #[test]
    fn load_table() {
        let cases: &[(&str, Value)] = &[
            ("1", Value::Int(1)),
            ("1.0", Value::Float(1.0)),
            ("1e3", Value::Float(1000.0)),
            ("-0", Value::Int(0)),
            (
                "12345678901234567890",
                Value::integer("12345678901234567890".parse().unwrap()),
            ),
            ("null", Value::Nil),
            ("\"s\"", "s".into()),
            (
                r#"{"b":1,"a":[true,null],"b":2}"#,
                Value::Hash(rhash! {"b" => 2, "a" => Value::Array(vec![true.into(), Value::Nil])}),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(&load(text).unwrap(), want, "{text}");
        }
    }

    #[test]
    fn errors_are_parser_errors() {
        for text in ["", "{", "[1,2", r#"{"a":NaN}"#] {
            let err = load(text).unwrap_err();
            assert_eq!(err.class, ErrorClass::JsonParserError, "{text}");
            assert!(err.message.starts_with("unexpected token at '"), "{text}");
        }
    }
}
