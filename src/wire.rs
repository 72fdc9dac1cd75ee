//! The wire and storage form of Hiera values: JSON, with a small tagged
//! escape for what JSON cannot say, so every Ruby type distinction survives
//! HTTP and the database.
//!
//! Plain JSON where it suffices: nil, booleans, Strings, Arrays, Hashes
//! with String keys. Integers are written without a fraction and Floats
//! always with one (`1.0`), so the two stay apart; big Integers are plain
//! JSON numbers (arbitrary length). The rest is an object whose first key
//! is `"__hierad__"`:
//!
//! - `{"__hierad__": "sym", "name": "foo"}`: the Symbol `:foo`;
//! - `{"__hierad__": "float", "value": "NaN" | "Infinity" | "-Infinity"}`;
//! - `{"__hierad__": "hash", "pairs": [[k, v], …]}`: a Hash with a
//!   non-String key, or with a `"__hierad__"` key of its own (so user data
//!   can never be mistaken for a tag).

use crate::hiera::render::ruby::float_to_s;
use crate::hiera::{Hash, Value, json::from_json};
use serde_json::{Map, Number, Value as Json};

/// The tag key; an object holding it is a tagged value.
pub const TAG: &str = "__hierad__";

/// Errors decoding the wire form.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WireError {
    /// The text is not JSON.
    #[error("malformed JSON: {0}")]
    Json(String),
    /// A `__hierad__` object that is not one of the known tags.
    #[error("malformed tagged value: {0}")]
    Tag(String),
}

/// Encodes a value as wire JSON.
pub fn to_json(v: &Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(n) => Json::Number((*n).into()),
        Value::BigInt(n) => number(&n.to_string()),
        Value::Float(f) if f.is_finite() => number(&float_to_s(*f)),
        Value::Float(f) => {
            let text = if f.is_nan() {
                "NaN"
            } else if *f > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            };
            tagged("float", "value", Json::String(text.to_owned()))
        }
        Value::String(s) => Json::String(s.clone()),
        Value::Symbol(s) => tagged("sym", "name", Json::String(s.clone())),
        Value::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Hash(h) => {
            let plain = h.keys().all(|k| matches!(k, Value::String(s) if s != TAG));
            if plain {
                let mut map = Map::with_capacity(h.len());
                for (k, v) in h {
                    if let Value::String(k) = k {
                        map.insert(k.clone(), to_json(v));
                    }
                }
                Json::Object(map)
            } else {
                let pairs = h
                    .iter()
                    .map(|(k, v)| Json::Array(vec![to_json(k), to_json(v)]))
                    .collect();
                tagged("hash", "pairs", Json::Array(pairs))
            }
        }
    }
}

/// Encodes a value as wire JSON text.
pub fn to_string(v: &Value) -> String {
    serde_json::to_string(&Wire(v)).unwrap_or_else(|_| to_json(v).to_string())
}

/// A value serialized as [`to_json`] encodes it, without building the
/// JSON tree first: answers of tens of kilobytes are written straight
/// from the value.
pub struct Wire<'a>(pub &'a Value);

impl serde::Serialize for Wire<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Nil => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(n) => s.serialize_i64(*n),
            Value::String(text) => s.serialize_str(text),
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Wire(item))?;
                }
                seq.end()
            }
            Value::Hash(h) if h.keys().all(|k| matches!(k, Value::String(s) if s != TAG)) => {
                let mut map = s.serialize_map(Some(h.len()))?;
                for (k, v) in h {
                    if let Value::String(k) = k {
                        map.serialize_entry(k, &Wire(v))?;
                    }
                }
                map.end()
            }
            // Numbers kept as text, and the tagged forms: rare, as to_json.
            other => to_json(other).serialize(s),
        }
    }
}

/// Decodes wire JSON.
///
/// # Errors
///
/// A malformed `__hierad__` object.
pub fn from_wire(json: Json) -> Result<Value, WireError> {
    match json {
        Json::Array(items) => Ok(Value::Array(
            items.into_iter().map(from_wire).collect::<Result<_, _>>()?,
        )),
        Json::Object(mut map) if map.contains_key(TAG) => {
            let tag = map.remove(TAG);
            let field = |map: &mut Map<String, Json>, name: &str| {
                map.remove(name)
                    .ok_or_else(|| WireError::Tag(format!("{TAG} object without \"{name}\"")))
            };
            match tag.as_ref().and_then(Json::as_str) {
                Some("sym") => match field(&mut map, "name")? {
                    Json::String(s) => Ok(Value::Symbol(s)),
                    other => Err(WireError::Tag(format!("symbol name {other}"))),
                },
                Some("float") => match field(&mut map, "value")?.as_str() {
                    Some("NaN") => Ok(Value::Float(f64::NAN)),
                    Some("Infinity") => Ok(Value::Float(f64::INFINITY)),
                    Some("-Infinity") => Ok(Value::Float(f64::NEG_INFINITY)),
                    other => Err(WireError::Tag(format!("float value {other:?}"))),
                },
                Some("hash") => {
                    let Json::Array(pairs) = field(&mut map, "pairs")? else {
                        return Err(WireError::Tag("hash pairs must be a list".into()));
                    };
                    let mut h = Hash::with_capacity_and_hasher(pairs.len(), Default::default());
                    for pair in pairs {
                        match pair {
                            Json::Array(kv) if kv.len() == 2 => {
                                let mut kv = kv.into_iter();
                                let k = from_wire(kv.next().unwrap_or_default())?;
                                let v = from_wire(kv.next().unwrap_or_default())?;
                                h.insert(k, v);
                            }
                            other => {
                                return Err(WireError::Tag(format!("hash pair {other}")));
                            }
                        }
                    }
                    Ok(Value::Hash(h))
                }
                _ => Err(WireError::Tag(format!("unknown tag {tag:?}"))),
            }
        }
        Json::Object(map) => {
            let mut h = Hash::with_capacity_and_hasher(map.len(), Default::default());
            for (k, v) in map {
                h.insert(Value::String(k), from_wire(v)?);
            }
            Ok(Value::Hash(h))
        }
        scalar => Ok(from_json(scalar)),
    }
}

/// Decodes wire JSON text.
///
/// # Errors
///
/// Text that is not JSON, or a malformed tagged value.
pub fn from_str(text: &str) -> Result<Value, WireError> {
    let json: Json = serde_json::from_str(text).map_err(|e| WireError::Json(e.to_string()))?;
    from_wire(json)
}

fn number(text: &str) -> Json {
    // With serde_json's arbitrary_precision, a Number keeps its exact text.
    Json::Number(text.parse::<Number>().unwrap_or_else(|_| Number::from(0)))
}

fn tagged(tag: &str, field: &str, value: Json) -> Json {
    let mut map = Map::new();
    map.insert(TAG.to_owned(), Json::String(tag.to_owned()));
    map.insert(field.to_owned(), value);
    Json::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    #[test]
    fn round_trips_every_type() {
        let mut odd = Hash::default();
        odd.insert(Value::Int(1), "one".into());
        odd.insert(Value::Nil, Value::Bool(true));
        odd.insert(Value::Symbol("s".into()), Value::Float(1.0));
        let cases = vec![
            Value::Nil,
            Value::Bool(false),
            Value::Int(-3),
            Value::integer("123456789012345678901234567890".parse().unwrap()),
            Value::Float(1.0),
            Value::Float(1.5e300),
            Value::Float(f64::NEG_INFINITY),
            Value::str("%{x}"),
            Value::Symbol("sym".into()),
            Value::Hash(odd),
            Value::Hash(rhash! {"__hierad__" => "user data", "b" => Value::Array(vec![])}),
            Value::Hash(rhash! {"z" => 1, "a" => Value::Hash(rhash! {"k" => Value::Nil})}),
        ];
        for v in cases {
            let text = to_string(&v);
            let back = from_str(&text).unwrap();
            assert_eq!(back, v, "{text}");
            assert_eq!(to_string(&back), text, "stable encoding");
        }
        let nan = from_str(&to_string(&Value::Float(f64::NAN))).unwrap();
        assert!(matches!(nan, Value::Float(f) if f.is_nan()));
    }

    #[test]
    fn written_directly_as_the_json_tree() {
        let mut odd = Hash::default();
        odd.insert(Value::Int(1), "one".into());
        odd.insert(Value::Symbol("s".into()), Value::Float(f64::NAN));
        let cases = vec![
            Value::Nil,
            Value::Int(i64::MIN),
            Value::integer("-123456789012345678901234567890".parse().unwrap()),
            Value::Float(0.1),
            Value::Float(-0.0),
            Value::Float(1e100),
            Value::Float(f64::INFINITY),
            Value::str("quote \" and \u{1} and é"),
            Value::Symbol("sym".into()),
            Value::Array(vec![
                Value::Hash(odd.clone()),
                Value::Array(vec![]),
                Value::Nil,
            ]),
            Value::Hash(rhash! {"__hierad__" => "user data"}),
            Value::Hash(rhash! {"a" => Value::Hash(odd), "b" => Value::Hash(Hash::default())}),
        ];
        for v in cases {
            assert_eq!(to_string(&v), to_json(&v).to_string(), "{v:?}");
        }
    }

    #[test]
    fn plain_json_stays_plain() {
        let v = Value::Hash(
            rhash! {"a" => 1, "f" => Value::Float(2.0), "l" => Value::Array(vec!["x".into()])},
        );
        assert_eq!(to_string(&v), r#"{"a":1,"f":2.0,"l":["x"]}"#);
    }

    #[test]
    fn malformed_tags_are_errors() {
        for text in [
            r#"{"__hierad__":"nope"}"#,
            r#"{"__hierad__":"sym"}"#,
            r#"{"__hierad__":"hash","pairs":[[1]]}"#,
            r#"{"__hierad__":"float","value":"1.5"}"#,
        ] {
            assert!(matches!(from_str(text), Err(WireError::Tag(_))), "{text}");
        }
        assert!(matches!(from_str("{"), Err(WireError::Json(_))));
    }
}
