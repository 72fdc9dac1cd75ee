//! The tagged JSON that carries values between these tests and Ruby
//! (`tests/support/tagged.rb` is its Ruby half and documents the format).

use hierad::hiera::{Hash, Value};
use serde_json::{Value as Json, json};

pub(crate) fn encode(v: &Value) -> Json {
    match v {
        Value::Nil => json!(["nil"]),
        Value::Bool(true) => json!(["true"]),
        Value::Bool(false) => json!(["false"]),
        Value::Int(n) => json!(["int", n.to_string()]),
        Value::BigInt(n) => json!(["int", n.to_string()]),
        Value::Float(f) => {
            let text = if f.is_nan() {
                "NaN".to_owned()
            } else if f.is_infinite() {
                if *f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
            } else {
                format!("{f:?}")
            };
            json!(["float", text])
        }
        Value::String(s) => json!(["str", s]),
        Value::Symbol(s) => json!(["sym", s]),
        Value::Array(a) => json!(["arr", a.iter().map(encode).collect::<Vec<_>>()]),
        Value::Hash(h) => json!([
            "hash",
            h.iter()
                .map(|(k, v)| json!([encode(k), encode(v)]))
                .collect::<Vec<_>>()
        ]),
    }
}

/// Decodes a tagged value; `["other", Class]` (an object Hiera's data model
/// has no room for) comes back as `Err(Class)`.
pub(crate) fn decode(t: &Json) -> Result<Value, String> {
    let tag = t[0]
        .as_str()
        .ok_or_else(|| format!("not a tagged value: {t}"))?;
    let text = || t[1].as_str().unwrap_or_default().to_owned();
    Ok(match tag {
        "nil" => Value::Nil,
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "int" => Value::integer(text().parse().map_err(|e| format!("{e}"))?),
        "float" => Value::Float(match text().as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            other => other.parse().map_err(|e| format!("{other}: {e}"))?,
        }),
        "str" => Value::String(text()),
        "sym" => Value::Symbol(text()),
        "arr" => Value::Array(
            t[1].as_array()
                .ok_or("arr without list")?
                .iter()
                .map(decode)
                .collect::<Result<_, _>>()?,
        ),
        "hash" => {
            let mut h = Hash::default();
            for pair in t[1].as_array().ok_or("hash without list")? {
                h.insert(decode(&pair[0])?, decode(&pair[1])?);
            }
            Value::Hash(h)
        }
        "other" => return Err(text()),
        other => return Err(format!("unknown tag {other}")),
    })
}

/// Structural equality that also sees what `eql?` forgives: key order and
/// the sign of zero.
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => {
            (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Hash(x), Value::Hash(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| same(k1, k2) && same(v1, v2))
        }
        _ => a == b,
    }
}
