//! Key paths (`a.b.0`) into a document: reading one nested value
//! (`?key=`, `config get --key`) and setting or removing one
//! (`config set/override --key`).
//!
//! The syntax is Hiera's dotted-key syntax (segments split on `.`, a
//! segment quoted with `'…'` or `"…"` may contain dots: `a.'b.c'.0`), so a
//! key reads the same in a lookup and in `config get`. A segment addresses
//! a String key in a Hash, or an index (digits only) in an Array.
//!
//! Reading a key that is not there is `Ok(None)`: a missing Hash key or an
//! index past the end. Descending into a scalar, or into an Array with a
//! segment that is not an index, is an error. Setting creates missing
//! intermediate Hashes (and replaces an intermediate `nil` by a Hash, since
//! nil holds nothing to lose); it never grows an Array, so an index must be
//! in range.

use crate::hiera::key::split_key;
use crate::hiera::{Hash, Value};
use std::fmt;

/// A key path that cannot be used on a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum KeyPathError {
    #[error("empty key path: name a key such as a.b.0")]
    Empty,
    #[error(
        "invalid key path \"{key}\": write dot-separated segments such as a.b.0, and quote a segment that contains a dot: a.'b.c'"
    )]
    Syntax { key: String },
    #[error("cannot use key \"{key}\": \"{at}\" is {class}, not a Hash or an Array")]
    NotAContainer {
        key: String,
        at: String,
        class: &'static str,
    },
    #[error(
        "cannot use key \"{key}\": \"{at}\" is an Array, so the segment after it must be an index (0, 1, …), not \"{segment}\""
    )]
    NotAnIndex {
        key: String,
        at: String,
        segment: String,
    },
    #[error(
        "cannot use key \"{key}\": index {index} is out of range for \"{at}\", an Array of {len} element(s)"
    )]
    IndexOutOfRange {
        key: String,
        at: String,
        index: usize,
        len: usize,
    },
}

/// A parsed key path; never empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyPath {
    text: String,
    segments: Vec<String>,
}

impl KeyPath {
    /// Parses `a.b.0` or `a.'b.c'`.
    ///
    /// # Errors
    ///
    /// [`KeyPathError::Empty`], [`KeyPathError::Syntax`].
    pub(crate) fn parse(text: &str) -> Result<Self, KeyPathError> {
        if text.is_empty() {
            return Err(KeyPathError::Empty);
        }
        let segments = split_key(text).ok_or_else(|| KeyPathError::Syntax {
            key: text.to_owned(),
        })?;
        Ok(KeyPath {
            text: text.to_owned(),
            segments: segments.into_iter().map(str::to_owned).collect(),
        })
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The first `n` segments as text, for messages.
    fn prefix(&self, n: usize) -> String {
        join_segments(&self.segments[..n])
    }

    fn index(&self, depth: usize) -> Result<usize, KeyPathError> {
        let segment = &self.segments[depth];
        match segment.parse() {
            Ok(i) if segment.bytes().all(|b| b.is_ascii_digit()) => Ok(i),
            _ => Err(KeyPathError::NotAnIndex {
                key: self.text.clone(),
                at: self.prefix(depth),
                segment: segment.clone(),
            }),
        }
    }

    fn not_a_container(&self, depth: usize, v: &Value) -> KeyPathError {
        KeyPathError::NotAContainer {
            key: self.text.clone(),
            at: self.prefix(depth),
            class: v.class_name(),
        }
    }

    fn out_of_range(&self, depth: usize, index: usize, len: usize) -> KeyPathError {
        KeyPathError::IndexOutOfRange {
            key: self.text.clone(),
            at: self.prefix(depth),
            index,
            len,
        }
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for KeyPath {
    type Err = KeyPathError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        KeyPath::parse(s)
    }
}

/// Segments written as a key path: a segment with a dot or a quote
/// quoted (with `"` if it holds a `'`), so [`KeyPath::parse`] reads it
/// back (a segment holding both quotes, or none at all, has no spelling).
pub(crate) fn join_segments(segments: &[String]) -> String {
    let parts: Vec<String> = segments
        .iter()
        .map(|s| {
            if !s.is_empty() && !s.contains(['.', '\'', '"']) {
                s.clone()
            } else if s.contains('\'') {
                format!("\"{s}\"")
            } else {
                format!("'{s}'")
            }
        })
        .collect();
    parts.join(".")
}

/// The value at `key` in `doc`; `Ok(None)` when it is not there.
///
/// # Errors
///
/// Descending into a scalar, or into an Array with a non-index segment.
pub(crate) fn get<'v>(doc: &'v Hash, key: &KeyPath) -> Result<Option<&'v Value>, KeyPathError> {
    let Some(mut cur) = doc.get(&Value::str(key.segments[0].as_str())) else {
        return Ok(None);
    };
    for depth in 1..key.segments.len() {
        let next = match cur {
            Value::Hash(h) => h.get(&Value::str(key.segments[depth].as_str())),
            Value::Array(a) => a.get(key.index(depth)?),
            other => return Err(key.not_a_container(depth, other)),
        };
        match next {
            Some(v) => cur = v,
            None => return Ok(None),
        }
    }
    Ok(Some(cur))
}

/// The intermediate Hashes [`set`] would create for `key` in `doc`, as
/// key paths from the outermost: the write's way of saying how it split
/// the key (`a./etc/app.conf.b` makes `/etc/app` and `conf` two Hashes).
/// Empty when every container on the way is there.
pub(crate) fn new_hashes(doc: &Hash, key: &KeyPath) -> Vec<String> {
    let last = key.segments.len() - 1;
    let mut cur = doc.get(&Value::str(key.segments[0].as_str()));
    for depth in 0..last {
        match cur {
            None | Some(Value::Nil) => {
                return (depth + 1..=last).map(|n| key.prefix(n)).collect();
            }
            Some(Value::Hash(h)) => cur = h.get(&Value::str(key.segments[depth + 1].as_str())),
            Some(Value::Array(a)) => match key.index(depth + 1) {
                Ok(i) => cur = a.get(i),
                Err(_) => return Vec::new(),
            },
            // `set` refuses this key; nothing is created.
            Some(_) => return Vec::new(),
        }
    }
    Vec::new()
}

/// A place that holds values by key or by index.
enum Container<'a> {
    Hash(&'a mut Hash),
    Array(&'a mut Vec<Value>),
}

/// Sets the value at `key`, creating missing intermediate Hashes.
///
/// # Errors
///
/// Descending into a scalar (other than nil), a non-index segment on an
/// Array, or an index out of range.
pub(crate) fn set(doc: &mut Hash, key: &KeyPath, value: Value) -> Result<(), KeyPathError> {
    let last = key.segments.len() - 1;
    let mut cur = Container::Hash(doc);
    for depth in 0..last {
        let next = match cur {
            Container::Hash(h) => h
                .entry(Value::str(key.segments[depth].as_str()))
                .or_insert_with(|| Value::Hash(Hash::default())),
            Container::Array(a) => {
                let (index, len) = (key.index(depth)?, a.len());
                a.get_mut(index)
                    .ok_or_else(|| key.out_of_range(depth, index, len))?
            }
        };
        if next.is_nil() {
            *next = Value::Hash(Hash::default());
        }
        cur = match next {
            Value::Hash(h) => Container::Hash(h),
            Value::Array(a) => Container::Array(a),
            other => return Err(key.not_a_container(depth + 1, other)),
        };
    }
    match cur {
        Container::Hash(h) => {
            // An existing key keeps its place, as Ruby's `Hash#[]=` does.
            h.insert(Value::str(key.segments[last].as_str()), value);
        }
        Container::Array(a) => {
            let (index, len) = (key.index(last)?, a.len());
            *a.get_mut(index)
                .ok_or_else(|| key.out_of_range(last, index, len))? = value;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    fn doc() -> Hash {
        rhash! {
            "a" => Value::Hash(rhash! {
                "b" => Value::Array(vec![
                    Value::Hash(rhash! {"c" => 1}),
                    "two".into(),
                ]),
                "s" => "text",
                "n" => Value::Nil,
            }),
            "x.y" => Value::Hash(rhash! {"z" => true}),
            "top" => 7,
        }
    }

    #[test]
    fn get_cases() {
        type Want = Result<Option<Value>, &'static str>;
        let cases: &[(&str, Want)] = &[
            ("top", Ok(Some(7.into()))),
            ("a.b.0.c", Ok(Some(1.into()))),
            ("a.b.1", Ok(Some("two".into()))),
            ("'x.y'.z", Ok(Some(true.into()))),
            ("a.n", Ok(Some(Value::Nil))),
            ("missing", Ok(None)),
            ("a.missing.deeper", Ok(None)),
            ("a.b.2", Ok(None)),
            ("a.b.0.zz", Ok(None)),
            ("top.x", Err("\"top\" is Integer, not a Hash or an Array")),
            ("a.s.0", Err("\"a.s\" is String")),
            ("a.n.x", Err("\"a.n\" is NilClass")),
            (
                "a.b.first",
                Err("\"a.b\" is an Array, so the segment after it must be an index"),
            ),
            ("a.b.-1", Err("not \"-1\"")),
            ("a..b", Err("invalid key path \"a..b\"")),
            (".a", Err("invalid key path")),
            ("a.", Err("invalid key path")),
            ("", Err("empty key path")),
        ];
        let doc = doc();
        for (text, want) in cases {
            let got = KeyPath::parse(text).and_then(|k| get(&doc, &k).map(|v| v.cloned()));
            match (got, want) {
                (Ok(got), Ok(want)) => assert_eq!(&got, want, "{text}"),
                (Err(e), Err(msg)) => assert!(e.to_string().contains(msg), "{text}: {e}"),
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn set_cases() {
        let cases: &[(&str, Result<&str, &str>)] = &[
            // (key, Ok(key to read back) | Err(message))
            ("top", Ok("top")),
            ("new", Ok("new")),
            ("new.deep.er", Ok("new.deep.er")),
            ("a.b.0.c", Ok("a.b.0.c")),
            ("a.b.1", Ok("a.b.1")),
            ("a.n.x", Ok("a.n.x")),
            ("'x.y'.w", Ok("'x.y'.w")),
            (
                "a.b.2",
                Err("index 2 is out of range for \"a.b\", an Array of 2 element(s)"),
            ),
            ("a.b.5.c", Err("index 5 is out of range")),
            ("a.b.key", Err("must be an index")),
            ("top.x", Err("\"top\" is Integer")),
            ("a.s.x", Err("\"a.s\" is String")),
        ];
        for (text, want) in cases {
            let mut d = doc();
            let key = KeyPath::parse(text).unwrap();
            let got = set(&mut d, &key, "NEW".into());
            match (got, want) {
                (Ok(()), Ok(read)) => {
                    let read = KeyPath::parse(read).unwrap();
                    assert_eq!(get(&d, &read).unwrap(), Some(&"NEW".into()), "{text}");
                }
                (Err(e), Err(msg)) => {
                    assert!(e.to_string().contains(msg), "{text}: {e}");
                    assert_eq!(d, doc(), "{text}: a failed set changes nothing");
                }
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn new_hashes_are_the_containers_set_creates() {
        let doc = doc();
        let created = |key: &str| new_hashes(&doc, &KeyPath::parse(key).unwrap());
        assert_eq!(
            created("configuration.file./etc/app.conf.content"),
            [
                "configuration",
                "configuration.file",
                "configuration.file./etc/app",
                "configuration.file./etc/app.conf"
            ]
        );
        assert_eq!(
            created("configuration.file.'/etc/app.conf'.content"),
            [
                "configuration",
                "configuration.file",
                "configuration.file.'/etc/app.conf'"
            ]
        );
        assert_eq!(created("a.b.0.d.e"), ["a.b.0.d"]);
        // A nil on the way becomes a Hash.
        assert_eq!(created("a.n.q"), ["a.n"]);
        for there in ["fresh", "a.b.0.c", "a.b.1", "'x.y'.w", "a.s.q", "a.b.x.y"] {
            assert!(created(there).is_empty(), "{there}");
        }
    }

    #[test]
    fn set_keeps_siblings_and_order() {
        let mut d = doc();
        set(&mut d, &KeyPath::parse("a.s").unwrap(), 1.into()).unwrap();
        let a = d[&Value::str("a")].as_hash().unwrap();
        let keys: Vec<&str> = a.keys().filter_map(Value::as_str).collect();
        assert_eq!(keys, ["b", "s", "n"]);
        let top: Vec<&str> = d.keys().filter_map(Value::as_str).collect();
        assert_eq!(top, ["a", "x.y", "top"]);
    }
}
