//! The hierarchy: which data sources a lookup visits, in which order, and
//! where their files are (`Backend.datasources`, `datafile_in`; §6).

use super::value::Value;

/// The level templates of a lookup, highest priority first: the order
/// override (if any) before the configured `:hierarchy:`, nested Arrays
/// flattened, as `Backend.datasources` does.
pub(crate) fn levels<'v>(
    hierarchy: &'v Value,
    order_override: Option<&'v Value>,
) -> Vec<&'v Value> {
    let mut out = Vec::new();
    if let Some(o) = order_override {
        flatten_into(o, &mut out);
    }
    flatten_into(hierarchy, &mut out);
    out
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
    let Value::String(s) = source else {
        return false;
    };
    // One byte pass (every level of every lookup comes here): a `/` that
    // starts or ends a line, or follows another `/`.
    let bytes = s.as_bytes();
    bytes.is_empty()
        || bytes.iter().enumerate().any(|(i, &b)| {
            b == b'/'
                && (i == 0
                    || matches!(bytes[i - 1], b'/' | b'\n')
                    || matches!(bytes.get(i + 1), None | Some(b'\n')))
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
        assert_eq!(levels(&h, Some(&o)), want.iter().collect::<Vec<_>>());
        assert_eq!(datafile_path("data", "x/y", "yaml"), "data/x/y.yaml");
        assert_eq!(datafile_path("data/", "x", "json"), "data/x.json");
        assert_eq!(datafile_path("", "x", "yaml"), "/x.yaml");
    }
}
