//! The hierarchy: which data sources a lookup visits, in which order, and
//! where their files are (`Backend.datasources`, `datafile_in`; §6).

use super::value::Value;

/// The level templates of a lookup, highest priority first: the order
/// override (if any) before the configured `:hierarchy:`, nested Arrays
/// flattened, as `Backend.datasources` does.
pub fn levels(hierarchy: &Value, order_override: Option<&Value>) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(o) = order_override {
        flatten_into(o, &mut out);
    }
    flatten_into(hierarchy, &mut out);
    out
}

fn flatten_into(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| flatten_into(i, out)),
        other => out.push(other.clone()),
    }
}

/// `source == "" or source =~ /(^\/|\/\/|\/$)/`: an interpolated level that
/// Hiera skips. `^`/`$` are Ruby line anchors; non-Strings never match.
pub fn is_bad_level(source: &Value) -> bool {
    let Value::String(s) = source else {
        return false;
    };
    s.is_empty()
        || s.contains("//")
        || s.split('\n')
            .any(|line| line.starts_with('/') || line.ends_with('/'))
}

/// `File.join(datadir, "#{source}.#{extension}")`.
pub fn datafile_path(datadir: &str, source: &str, extension: &str) -> String {
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
        assert_eq!(
            levels(&h, Some(&o)),
            ["first".into(), "a".into(), "b".into()] as [Value; 3]
        );
        assert_eq!(datafile_path("data", "x/y", "yaml"), "data/x/y.yaml");
        assert_eq!(datafile_path("data/", "x", "json"), "data/x.json");
        assert_eq!(datafile_path("", "x", "yaml"), "/x.yaml");
    }
}
