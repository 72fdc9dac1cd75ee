//! `JSON.dump` of Ruby's bundled json 2.6.1 (the C generator with
//! `JSON.dump_default_options`), and the `hiera` command's json output
//! format. No I/O.
//!
//! What JSON.dump does with Ruby's objects: compact output; Floats written
//! by `Float#to_s` (`8.0`, `1.0e+20`, and bare `NaN`/`Infinity` since
//! `allow_nan` is on); Symbols as their names; Hash keys that are not
//! Strings converted with `to_s` (nil → `""`, an Array key → its
//! `inspect`). Strings escape only `"`, `\` and control characters; `/` and
//! all other characters, U+2028 included, are written as they are.

use super::ruby;
use crate::hiera::Value;

/// `JSON.dump(v)`.
pub fn dump(v: &Value) -> String {
    let mut out = String::new();
    dump_into(v, &mut out);
    out
}

/// The `hiera` command's json format: `puts JSON.dump(v)`.
pub fn cli_output(v: &Value) -> String {
    let mut out = dump(v);
    out.push('\n');
    out
}

fn dump_into(v: &Value, out: &mut String) {
    match v {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(n) => out.push_str(&n.to_string()),
        Value::BigInt(n) => out.push_str(&n.to_string()),
        Value::Float(f) => out.push_str(&ruby::float_to_s(*f)),
        // A Symbol has no generator of its own: `Object#to_json` writes its
        // `to_s`.
        Value::String(s) | Value::Symbol(s) => string_into(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                dump_into(item, out);
            }
            out.push(']');
        }
        Value::Hash(h) => {
            out.push('{');
            for (i, (k, item)) in h.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                match k {
                    Value::String(s) | Value::Symbol(s) => string_into(s, out),
                    other => string_into(&ruby::to_s(other), out),
                }
                out.push(':');
                dump_into(item, out);
            }
            out.push('}');
        }
    }
}

/// `convert_UTF8_to_JSON` without `ascii_only` and `escape_slash`.
fn string_into(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0c' => out.push_str("\\f"),
            '\x08' => out.push_str("\\b"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    #[test]
    fn dump_values() {
        let mut keys = rhash! {"s" => 1};
        keys.insert(Value::Symbol("sym".into()), 2.into());
        keys.insert(Value::Nil, 3.into());
        keys.insert(Value::Float(1e20), 4.into());
        keys.insert(Value::Array(vec!["a".into()]), 5.into());
        keys.insert(true.into(), Value::Symbol("v".into()));
        let cases: Vec<(Value, &str)> = vec![
            (Value::Nil, "null"),
            (Value::Float(8.0), "8.0"),
            (Value::Float(1e20), "1.0e+20"),
            (Value::Float(f64::NAN), "NaN"),
            (Value::Float(f64::NEG_INFINITY), "-Infinity"),
            (
                Value::integer("123456789012345678901234567890".parse().unwrap()),
                "123456789012345678901234567890",
            ),
            (
                "a\"\\/\n\r\t\x0c\x08\0\x1f\x7fé\u{2028}😀".into(),
                "\"a\\\"\\\\/\\n\\r\\t\\f\\b\\u0000\\u001f\u{7f}é\u{2028}😀\"",
            ),
            (
                Value::Hash(keys),
                r#"{"s":1,"sym":2,"":3,"1.0e+20":4,"[\"a\"]":5,"true":"v"}"#,
            ),
            (
                Value::Array(vec![Value::Array(vec![]), Value::Hash(rhash! {})]),
                "[[],{}]",
            ),
        ];
        for (v, want) in cases {
            assert_eq!(dump(&v), want, "{v:?}");
        }
        assert_eq!(cli_output(&"x".into()), "\"x\"\n");
    }
}
