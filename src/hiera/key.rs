//! Lookup keys: splitting dotted keys into segments (`Hiera::Util.split_key`)
//! and descending into a value with them (`Backend.qualified_lookup`).

use super::error::{ErrorClass, HieraError, Result};
use super::value::Value;

/// The segments of a key: `a.'b.c'.0` → `["a", "b.c", "0"]`.
///
/// Grammar (the whole key must match): `segment ("." segment)*` where a
/// segment is `"[^"]+"`, `'[^']+'` or `[^'".]+`; quotes are removed.
/// The empty key is not an error: it yields no segments (Hiera then looks
/// up `nil`, see [`lookup_key`]).
///
/// `None` on a syntax error; each caller builds its own message, as Hiera
/// does (`Syntax error in key: …` vs `… in interpolation expression`).
pub(crate) fn split_key(key: &str) -> Option<Vec<&str>> {
    let mut segments = Vec::new();
    if key.is_empty() {
        return Some(segments);
    }
    let bytes = key.as_bytes();
    let mut at = 0;
    loop {
        let segment = match bytes[at] {
            quote @ (b'"' | b'\'') => {
                let close = key[at + 1..].find(quote as char)?;
                if close == 0 {
                    return None;
                }
                let seg = &key[at + 1..at + 1 + close];
                at += close + 2;
                seg
            }
            _ => {
                // memchr3: `find` with a set of chars costs more than most
                // keys take to scan (every lookup splits its key).
                let len =
                    memchr::memchr3(b'\'', b'"', b'.', &bytes[at..]).unwrap_or(key.len() - at);
                if len == 0 {
                    return None;
                }
                let seg = &key[at..at + len];
                at += len;
                seg
            }
        };
        segments.push(segment);
        if at == key.len() {
            return Some(segments);
        }
        if bytes[at] != b'.' || at + 1 == key.len() {
            return None;
        }
        at += 1;
    }
}

/// The error a lookup raises for a key that does not parse.
pub(crate) fn key_syntax_error(key: &str) -> HieraError {
    HieraError::new(
        ErrorClass::ArgumentError,
        format!("Syntax error in key: {key}"),
    )
}

/// The top-level key a backend is asked for: the first segment, or `nil`
/// for the empty key (Ruby's `''[0]`), which only a `~:` key can match.
pub(crate) fn lookup_key(segments: &[&str]) -> Value {
    segments.first().map_or(Value::Nil, |s| Value::str(*s))
}

/// `Backend.qualified_lookup`: descends into `value` along `segments`.
/// `Ok(None)` is Hiera's `throw :no_such_key`.
///
/// # Errors
///
/// Hiera's type-mismatch `Exception`s, and the `NoMethodError` an Integer
/// raises when asked for a named sub-key.
pub(crate) fn qualified_lookup<'v>(
    segments: &[&str],
    mut value: &'v Value,
    full_key: Option<&str>,
) -> Result<Option<&'v Value>> {
    let suffix = full_key.map_or(String::new(), |k| format!(" from key '{k}'"));
    for segment in segments {
        if value.is_nil() {
            return Ok(None);
        }
        if is_index(segment) {
            let index = ruby_to_i(segment);
            let Value::Array(items) = value else {
                return Err(HieraError::new(
                    ErrorClass::Exception,
                    format!(
                        "Hiera type mismatch: Got {} when Array was expected to access value using '{index}'{suffix}",
                        value.class_name()
                    ),
                ));
            };
            match usize::try_from(index).ok().and_then(|i| items.get(i)) {
                Some(item) => value = item,
                None => return Ok(None),
            }
        } else {
            match value {
                Value::Hash(h) => match h.get(&Value::str(*segment)) {
                    Some(v) => value = v,
                    None => return Ok(None),
                },
                Value::Int(_) | Value::BigInt(_) => {
                    // Integer#[] exists (bit reference), so Hiera gets past
                    // its check and then calls the missing `include?`.
                    return Err(HieraError::new(
                        ErrorClass::NoMethodError,
                        format!(
                            "undefined method `include?' for {}:Integer",
                            super::render::ruby::inspect(value)
                        ),
                    ));
                }
                _ => {
                    return Err(HieraError::new(
                        ErrorClass::Exception,
                        format!(
                            "Hiera type mismatch: Got {} when a hash-like object was expected to access value using '{segment}'{suffix}",
                            value.class_name()
                        ),
                    ));
                }
            }
        }
    }
    Ok(Some(value))
}

/// Ruby's `segment =~ /^[0-9]+$/`: `^` and `$` are line anchors, so any
/// line of digits makes an index.
pub(crate) fn is_index(segment: &str) -> bool {
    segment
        .split('\n')
        .any(|line| !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()))
}

/// Ruby's `String#to_i` for what [`is_index`] accepts: the leading decimal
/// digits (with single underscores), after optional blanks and a sign.
fn ruby_to_i(s: &str) -> i64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut n: i64 = 0;
    let mut prev_underscore = true;
    for b in t.bytes() {
        match b {
            b'0'..=b'9' => {
                n = n.saturating_mul(10).saturating_add(i64::from(b - b'0'));
                prev_underscore = false;
            }
            b'_' if !prev_underscore => prev_underscore = true,
            _ => break,
        }
    }
    if negative { -n } else { n }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    #[test]
    fn split_key_table() {
        let ok: &[(&str, &[&str])] = &[
            ("", &[]),
            ("a", &["a"]),
            ("a.b.c", &["a", "b", "c"]),
            ("a.'b.c'.d", &["a", "b.c", "d"]),
            ("\"a.b\"", &["a.b"]),
            ("'a'", &["a"]),
            ("arr.1", &["arr", "1"]),
            ("::a::b", &["::a::b"]),
            ("\"it's\"", &["it's"]),
            (" a . b ", &[" a ", " b "]),
        ];
        for (key, want) in ok {
            assert_eq!(split_key(key).as_deref(), Some(*want), "key {key:?}");
        }
        for bad in [
            ".", "a.", ".a", "a..b", "it's", "\"a\"b", "a\"b\"", "''", "'a", "a.''", "\"\"",
        ] {
            assert_eq!(split_key(bad), None, "key {bad:?}");
        }
    }

    #[test]
    fn qualified_lookup_table() {
        let data = Value::Hash(rhash! {
            "h" => Value::Hash(rhash! {"x" => 10}),
            "arr" => Value::Array(vec!["a".into(), "b".into()]),
            "port" => 80,
            "s" => "text",
            "n" => Value::Nil,
        });
        let found: &[(&[&str], Option<Value>)] = &[
            (&["h", "x"], Some(10.into())),
            (&["h", "y"], None),
            (&["arr", "1"], Some("b".into())),
            (&["arr", "2"], None),
            (&["n", "x"], None),
            (&["missing"], None),
        ];
        for (segs, want) in found {
            let got = qualified_lookup(segs, &data, Some("k")).unwrap().cloned();
            assert_eq!(&got, want, "segments {segs:?}");
        }
        let errors: &[(&[&str], ErrorClass, &str)] = &[
            (
                &["h", "0"],
                ErrorClass::Exception,
                "Hiera type mismatch: Got Hash when Array was expected to access value using '0' from key 'k'",
            ),
            (
                &["arr", "-1"],
                ErrorClass::Exception,
                "Hiera type mismatch: Got Array when a hash-like object was expected to access value using '-1' from key 'k'",
            ),
            (
                &["s", "x"],
                ErrorClass::Exception,
                "Hiera type mismatch: Got String when a hash-like object was expected to access value using 'x' from key 'k'",
            ),
            (
                &["port", "x"],
                ErrorClass::NoMethodError,
                "undefined method `include?' for 80:Integer",
            ),
        ];
        for (segs, class, message) in errors {
            let err = qualified_lookup(segs, &data, Some("k")).unwrap_err();
            assert_eq!((err.class, err.message.as_str()), (*class, *message));
        }
    }

    #[test]
    fn ruby_to_i_table() {
        for (s, n) in [
            ("12", 12),
            ("007", 7),
            ("1_0", 10),
            ("a\n1", 0),
            ("3\nx", 3),
        ] {
            assert_eq!(ruby_to_i(s), n, "{s:?}");
        }
    }
}
