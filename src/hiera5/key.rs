//! Lookup keys: the dotted, quoted key syntax and digging into a found
//! value. Ported from puppet/pops/lookup/sub_lookup.rb (`split_key`,
//! `sub_lookup`) and lookup_key.rb.

use super::error::{Error, Result};
use crate::hiera::Value;
use std::sync::LazyLock;

/// One step into a value: a Hash key, or an Array index (a segment that
/// is an unquoted integer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Segment {
    Key(String),
    Index(i64),
}

impl std::fmt::Display for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Segment::Key(k) => f.write_str(k),
            Segment::Index(i) => write!(f, "{i}"),
        }
    }
}

/// A key as `lookup` reads it: the root key a data file is asked for,
/// the module it belongs to (`mod::name`), and the segments to dig.
#[derive(Clone, Debug)]
pub(crate) struct LookupKey {
    pub(crate) text: String,
    pub(crate) root: String,
    pub(crate) module: Option<String>,
    pub(crate) segments: Vec<Segment>,
}

impl LookupKey {
    /// # Errors
    /// [`Error::KeySyntax`] for a key that does not split (`a..b`, `"a`).
    pub(crate) fn new(key: &str) -> Result<LookupKey> {
        let mut segments =
            split_key(key).ok_or_else(|| Error::KeySyntax(format!("key: '{key}'")))?;
        let root = match segments.remove(0) {
            Segment::Key(k) => k,
            Segment::Index(i) => i.to_string(),
        };
        let module = root.find("::").map(|at| root[..at].to_owned());
        Ok(LookupKey {
            text: key.to_owned(),
            root,
            module,
            segments,
        })
    }
}

/// `split_key`: the segments of a key, or `None` for a syntax error.
pub(crate) fn split_key(key: &str) -> Option<Vec<Segment>> {
    if !key.contains(['\'', '"', '.']) {
        return Some(vec![Segment::Key(key.to_owned())]);
    }
    static PIECE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r#"\s*"[^"]+"\s*|\s*'[^']+'\s*|[^'".]+"#).expect("valid")
    });
    // Ruby's `split` with a capturing pattern: the text between matches
    // and the matches, trailing empty strings dropped.
    let mut pieces: Vec<&str> = Vec::new();
    let mut at = 0;
    for m in PIECE.find_iter(key) {
        pieces.push(&key[at..m.start()]);
        pieces.push(m.as_str());
        at = m.end();
    }
    pieces.push(&key[at..]);
    while pieces.last().is_some_and(|p| p.is_empty()) {
        pieces.pop();
    }
    if pieces.is_empty() || !pieces.remove(0).is_empty() || pieces.is_empty() {
        return None;
    }
    let count = pieces.len();
    pieces.retain(|p| *p != ".");
    if pieces.len() * 2 != count + 1 {
        return None;
    }
    Some(pieces.into_iter().map(segment).collect())
}

fn segment(piece: &str) -> Segment {
    let piece = piece.trim();
    if piece.starts_with(['"', '\'']) {
        return Segment::Key(piece[1..piece.len() - 1].to_owned());
    }
    let digits = piece.strip_prefix(['+', '-']).unwrap_or(piece);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(i) = piece.trim_start_matches('+').parse() {
            return Segment::Index(i);
        }
    }
    Segment::Key(piece.to_owned())
}

/// `sub_lookup`: digs `value` by `segments`.
pub(crate) fn dig(key: &str, segments: &[Segment], mut value: Value) -> Result<Option<Value>> {
    for segment in segments {
        value = match (segment, value) {
            (_, Value::Nil) => return Ok(None),
            (Segment::Index(i), Value::Array(mut items)) => {
                let Some(at) = usize::try_from(*i).ok().filter(|at| *at < items.len()) else {
                    return Ok(None);
                };
                items.swap_remove(at)
            }
            (segment, Value::Hash(mut h)) => {
                let k = match segment {
                    Segment::Key(k) => Value::str(k.as_str()),
                    Segment::Index(i) => Value::Int(*i),
                };
                match h.swap_remove(&k) {
                    Some(v) => v,
                    None => return Ok(None),
                }
            }
            (segment, other) => {
                return Err(Error::NotDiggable {
                    class: other.class_name().to_owned(),
                    segment: segment.to_string(),
                    key: key.to_owned(),
                });
            }
        };
    }
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_as_puppet_splits_them() {
        let k = |s: &str| Segment::Key(s.into());
        let cases: &[(&str, Option<Vec<Segment>>)] = &[
            ("plain", Some(vec![k("plain")])),
            ("a.b", Some(vec![k("a"), k("b")])),
            ("a.0", Some(vec![k("a"), Segment::Index(0)])),
            ("\"a.b\"", Some(vec![k("a.b")])),
            ("a.'b.c'.d", Some(vec![k("a"), k("b.c"), k("d")])),
            ("mod::x.y", Some(vec![k("mod::x"), k("y")])),
            ("a..b", None),
            (".a", None),
            ("\"a", None),
        ];
        for (key, want) in cases {
            assert_eq!(&split_key(key), want, "{key}");
        }
    }

    #[test]
    fn a_module_key_names_its_module() {
        let key = LookupKey::new("ntp::servers.0").unwrap();
        assert_eq!(
            (key.root.as_str(), key.module.as_deref()),
            ("ntp::servers", Some("ntp"))
        );
    }
}
