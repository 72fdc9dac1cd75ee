//! The hierarchy: which data sources a lookup visits, in which order, and
//! where their files are (`Backend.datasources`, `datafile_in`; §6).

use super::value::Value;

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
/// Hiera skips. `^`/`$` are Ruby line anchors; non-Strings never match.
pub(crate) fn is_bad_level(source: &Value) -> bool {
    matches!(source, Value::String(s) if is_bad_text(s))
}

/// [`is_bad_level`] for a level that is a String.
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
        let cases: &[(Value, bool)] = &[
            ("".into(), true),
            ("nodes/".into(), true),
            ("/web".into(), true),
            ("a//b".into(), true),
            ("pre-".into(), false),
            ("common".into(), false),
            ("ok\n/x".into(), true),
            ("x/\nok".into(), true),
            ("a/b\nc/d".into(), false),
            ("/".into(), true),
            ("a/b/c".into(), false),
            ("\n".into(), false),
            (Value::Nil, false),
            (Value::Int(1), false),
        ];
        for (level, bad) in cases {
            assert_eq!(is_bad_level(level), *bad, "{level:?}");
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
        assert_eq!(datafile_path("data", "x/y", "yaml"), "data/x/y.yaml");
        assert_eq!(datafile_path("data/", "x", "json"), "data/x.json");
        assert_eq!(datafile_path("", "x", "yaml"), "/x.yaml");
    }
}
