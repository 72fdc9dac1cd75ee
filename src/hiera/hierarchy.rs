//! The hierarchy: which data sources a lookup visits, in which order, and
//! where their files are (`Backend.datasources`, `datafile_in`; §6).

use super::interpolate::plain::{Piece, Template};
use super::value::Value;

/// A hierarchy as lookups walk it, again and again (the configured
/// `:hierarchy:`, or levels a client registered or sent): written as it
/// was, with the [`Template`] of each of its levels worked out once, so
/// that a walk only reads the scope variables a level names and joins
/// them with its text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Hierarchy {
    written: Value,
    /// One for each level [`levels`] walks (without an order override),
    /// in that order.
    templates: Box<[Template]>,
}

impl Hierarchy {
    pub(crate) fn new(written: Value) -> Hierarchy {
        let templates = levels(&written, None).map(Template::of).collect();
        Hierarchy { written, templates }
    }

    /// The hierarchy as written.
    pub(crate) fn written(&self) -> &Value {
        &self.written
    }

    /// The bytes a hierarchy of Strings holds: each level's text, its
    /// Value and its template (an empty level holds no text but still
    /// takes those), so that a bound on what is held bounds the memory.
    pub(crate) fn held_bytes(&self) -> usize {
        let texts = match &self.written {
            Value::Array(levels) => levels
                .iter()
                .map(|l| size_of::<Value>() + string_len(l))
                .sum(),
            other => size_of::<Value>() + string_len(other),
        };
        let templates = self.templates.iter().map(|t| {
            size_of::<Template>()
                + match t {
                    Template::Scope(pieces) => pieces.len() * size_of::<Piece>(),
                    Template::Plain | Template::General => 0,
                }
        });
        texts + templates.sum::<usize>()
    }
}

fn string_len(level: &Value) -> usize {
    match level {
        Value::String(s) => s.len(),
        _ => 0,
    }
}

/// The levels a lookup walks: a hierarchy as written (the configuration's
/// `:hierarchy:`), or one whose templates were worked out once.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Walked<'v> {
    Written(&'v Value),
    Compiled(&'v Hierarchy),
}

/// [`levels`], each with its template if the hierarchy came compiled; the
/// order override's levels have none.
pub(crate) fn walk<'v>(
    hierarchy: Walked<'v>,
    order_override: Option<&'v Value>,
) -> impl Iterator<Item = (&'v Value, Option<&'v Template>)> {
    let (first, compiled) = match hierarchy {
        Walked::Written(written) => (Some(levels(written, order_override)), None),
        Walked::Compiled(h) => (
            order_override.map(|o| levels(o, None)),
            Some(levels(&h.written, None).zip(h.templates.iter())),
        ),
    };
    let first = first.into_iter().flatten().map(|level| (level, None));
    first.chain(compiled.into_iter().flatten().map(|(l, t)| (l, Some(t))))
}

/// The level templates of a lookup, highest priority first: the order
/// override (if any) before the configured `:hierarchy:`, nested Arrays
/// flattened, as `Backend.datasources` does. Walked once per lookup: a
/// hierarchy without nested Arrays (the usual one) is read in place.
pub(crate) fn levels<'v>(hierarchy: &'v Value, order_override: Option<&'v Value>) -> Levels<'v> {
    let flat = |v: &'v Value| match v {
        Value::Array(items) => items
            .iter()
            .all(|i| !matches!(i, Value::Array(_)))
            .then_some(items.as_slice()),
        other => Some(std::slice::from_ref(other)),
    };
    let first = order_override.map_or(Some(&[][..]), flat);
    if let (Some(first), Some(rest)) = (first, flat(hierarchy)) {
        return Levels::Flat(first.iter().chain(rest));
    }
    let mut out = Vec::new();
    if let Some(o) = order_override {
        flatten_into(o, &mut out);
    }
    flatten_into(hierarchy, &mut out);
    Levels::Nested(out.into_iter())
}

/// The iterator [`levels`] returns.
pub(crate) enum Levels<'v> {
    Flat(std::iter::Chain<std::slice::Iter<'v, Value>, std::slice::Iter<'v, Value>>),
    Nested(std::vec::IntoIter<&'v Value>),
}

impl<'v> Iterator for Levels<'v> {
    type Item = &'v Value;

    fn next(&mut self) -> Option<&'v Value> {
        match self {
            Levels::Flat(items) => items.next(),
            Levels::Nested(items) => items.next(),
        }
    }
}

fn flatten_into<'v>(v: &'v Value, out: &mut Vec<&'v Value>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| flatten_into(i, out)),
        other => out.push(other),
    }
}

/// `source == "" or source =~ /(^\/|\/\/|\/$)/`: an interpolated level that
/// Hiera skips. `^`/`$` are Ruby line anchors; a level that is not a
/// String never matches (the walk asks only of Strings).
pub(crate) fn is_bad_text(s: &str) -> bool {
    // Only the `/`s are looked at (every level of every lookup comes
    // here): one that starts or ends a line, or follows another `/`.
    let bytes = s.as_bytes();
    bytes.is_empty()
        || memchr::memchr_iter(b'/', bytes).any(|i| {
            i == 0
                || matches!(bytes[i - 1], b'/' | b'\n')
                || matches!(bytes.get(i + 1), None | Some(b'\n'))
        })
}

/// `File.join(datadir, "#{source}.#{extension}")`.
pub(crate) fn datafile_path(datadir: &str, source: &str, extension: &str) -> String {
    let sep = if datadir.ends_with('/') { "" } else { "/" };
    format!("{datadir}{sep}{source}.{extension}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_levels() {
        let cases: &[(&str, bool)] = &[
            ("", true),
            ("nodes/", true),
            ("/web", true),
            ("a//b", true),
            ("pre-", false),
            ("common", false),
            ("ok\n/x", true),
            ("x/\nok", true),
            ("a/b\nc/d", false),
            ("/", true),
            ("a/b/c", false),
            ("\n", false),
        ];
        for (level, bad) in cases {
            assert_eq!(is_bad_text(level), *bad, "{level:?}");
        }
    }

    #[test]
    fn level_order_and_paths() {
        let h = Value::Array(vec!["a".into(), Value::Array(vec!["b".into()])]);
        let o = Value::str("first");
        let want: [Value; 3] = ["first".into(), "a".into(), "b".into()];
        let walked = |h: &Value, o: Option<&Value>| levels(h, o).cloned().collect::<Vec<_>>();
        assert_eq!(walked(&h, Some(&o)), want);
        // Flat hierarchies are read in place; the same levels either way.
        let flat = Value::Array(vec!["a".into(), "b".into()]);
        assert_eq!(walked(&flat, Some(&o)), want);
        assert_eq!(walked(&flat, None), want[1..]);
        let nested_override = Value::Array(vec![Value::Array(vec!["first".into()])]);
        assert_eq!(walked(&flat, Some(&nested_override)), want);
        assert_eq!(walked(&Value::str("one"), None), [Value::str("one")]);
        assert!(walked(&Value::Array(vec![]), None).is_empty());
        // A compiled hierarchy walks the same levels, each with its own
        // template (the override's without).
        for h in [
            &h,
            &flat,
            &Value::str("one"),
            &Value::Nil,
            &Value::Array(vec![]),
        ] {
            let compiled = Hierarchy::new(h.clone());
            for o in [None, Some(&o), Some(&nested_override)] {
                let walked: Vec<_> = walk(Walked::Compiled(&compiled), o).collect();
                let plain: Vec<_> = levels(h, o).collect();
                assert_eq!(walked.iter().map(|(l, _)| *l).collect::<Vec<_>>(), plain);
                let overridden = o.map_or(0, |o| levels(o, None).count());
                for (at, (level, template)) in walked.iter().enumerate() {
                    let want = (at >= overridden).then(|| Template::of(level));
                    assert_eq!(template.cloned(), want, "{h:?} {o:?} {at}");
                }
                let uncompiled: Vec<_> = walk(Walked::Written(h), o).collect();
                assert!(uncompiled.iter().all(|(_, t)| t.is_none()));
                assert_eq!(uncompiled.len(), plain.len());
            }
        }
        assert_eq!(datafile_path("data", "x/y", "yaml"), "data/x/y.yaml");
        assert_eq!(datafile_path("data/", "x", "json"), "data/x.json");
        assert_eq!(datafile_path("", "x", "yaml"), "/x.yaml");
    }
}
