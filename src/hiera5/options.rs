//! `lookup_options`: per key or by regexp, their `merge` and their
//! `convert_to`. Ported from puppet/pops/lookup/lookup_adapter.rb
//! (`validate_lookup_options`, `compile_patterns`,
//! `extract_lookup_options_for_key`, `convert_result`).

use super::error::{Error, Result};
use crate::hiera::render::ruby;
use crate::hiera::{Hash, Value};

/// The `lookup_options` a layer stack gave, ready to be asked per key.
#[derive(Clone, Debug, Default)]
pub(crate) struct Compiled {
    keys: Hash,
    patterns: Vec<(regex::Regex, Value)>,
}

impl Compiled {
    /// `compile_patterns`: keys starting with `^` are regular expressions.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a pattern the regex crate does not read.
    pub(crate) fn new(options: &Hash) -> Result<Compiled> {
        let mut compiled = Compiled::default();
        for (k, v) in options {
            match k.as_str() {
                Some(pattern) if pattern.starts_with('^') => {
                    // Ruby's regexps and the regex crate's differ at the
                    // edges (look-around, backreferences): such a pattern
                    // is refused by name rather than read otherwise.
                    let re = pattern_regex(pattern).map_err(|e| {
                        Error::Unsupported(format!(
                            "lookup_options pattern {pattern:?} is a regexp hierad cannot read: {e}"
                        ))
                    })?;
                    compiled.patterns.push((re, v.clone()));
                }
                _ => {
                    compiled.keys.insert(k.clone(), v.clone());
                }
            }
        }
        Ok(compiled)
    }

    /// The options for `root_key`: its own entry, else the first pattern
    /// that matches it.
    pub(crate) fn for_key(&self, root_key: &str) -> Option<&Value> {
        if let Some(v) = self.keys.get(&Value::str(root_key)).filter(|v| !v.is_nil()) {
            return Some(v);
        }
        self.patterns
            .iter()
            .find(|(re, _)| re.is_match(root_key))
            .map(|(_, v)| v)
    }
}

/// Compiled patterns kept at most: an environment has a handful.
const PATTERNS: usize = 1024;

/// The regex of a `lookup_options` pattern, compiled once per process:
/// every lookup compiles its `lookup_options` again, and compiling a
/// pattern cost more than the rest of a lookup (bench/hiera5-lookup.sh).
/// A function of the pattern's text alone; past [`PATTERNS`] patterns,
/// each is compiled per call.
fn pattern_regex(pattern: &str) -> std::result::Result<regex::Regex, regex::Error> {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex, PoisonError};
    static KEPT: LazyLock<Mutex<HashMap<String, regex::Regex>>> = LazyLock::new(Mutex::default);
    let kept = || KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(re) = kept().get(pattern) {
        return Ok(re.clone());
    }
    #[cfg(test)]
    tests::COMPILED.with(|n| n.set(n.get() + 1));
    let re = regex::Regex::new(pattern)?;
    let mut kept = kept();
    if kept.len() < PATTERNS {
        kept.insert(pattern.to_owned(), re.clone());
    }
    Ok(re)
}

/// `validate_lookup_options`: a Hash, whose keys in a module's data start
/// with the module's name.
///
/// # Errors
/// Puppet's texts for a non-Hash and for keys of another module.
pub(crate) fn validate(options: Value, module: Option<&str>) -> Result<Hash> {
    let Value::Hash(options) = options else {
        return Err(Error::Options(
            "value of lookup_options must be a hash".into(),
        ));
    };
    let Some(module) = module else {
        return Ok(options);
    };
    let prefix = format!("{module}::");
    for key in options.keys() {
        let key = key.as_str().unwrap_or_default();
        if let Some(pattern) = key.strip_prefix('^') {
            if !pattern.starts_with(&prefix) {
                return Err(Error::Options(format!(
                    "all lookup_options patterns must match a key starting with module name '{module}'"
                )));
            }
        } else if !key.starts_with(&prefix) {
            return Err(Error::Options(format!(
                "all lookup_options keys must start with module name '{module}'"
            )));
        }
    }
    Ok(options)
}

/// `convert_result`: `new(Type, value, *args)` for the types hierad
/// converts to. Puppet's type system is not ported: `Array`, `String`,
/// `Integer`, `Float` and `Boolean` of the common values are; anything
/// else is refused by name.
///
/// # Errors
/// [`Error::Convert`] naming the key, for a type or value not converted.
pub(crate) fn convert(key: &str, convert_to: &Value, value: Value) -> Result<Value> {
    let (ty, args) = match convert_to {
        Value::Array(items) if !items.is_empty() => (&items[0], &items[1..]),
        other => (other, &[][..]),
    };
    let refuse = |message: String| {
        Error::Unsupported(format!(
            "The convert_to lookup_option for key '{key}': {message}"
        ))
    };
    let Some(ty) = ty.as_str() else {
        return Err(refuse(format!(
            "hierad converts to a type named by a String, not {}",
            ruby::inspect(ty)
        )));
    };
    if !args.is_empty() {
        return Err(refuse(format!(
            "hierad does not convert with arguments ({ty})"
        )));
    }
    let cannot = || {
        refuse(format!(
            "hierad does not convert {} to {ty}",
            value.class_name()
        ))
    };
    Ok(match (ty, &value) {
        ("Array", Value::Array(_)) => value,
        ("Array", Value::Hash(h)) => Value::Array(
            h.iter()
                .map(|(k, v)| Value::Array(vec![k.clone(), v.clone()]))
                .collect(),
        ),
        ("Array", Value::String(s)) => {
            Value::Array(s.chars().map(|c| Value::str(c.to_string())).collect())
        }
        ("String", Value::String(_)) => value,
        ("String", Value::Int(_) | Value::BigInt(_) | Value::Bool(_)) => {
            Value::str(ruby::to_s(&value))
        }
        ("Integer", Value::Int(_) | Value::BigInt(_)) => value,
        ("Integer", Value::String(s)) => match s.trim().parse::<i64>() {
            Ok(n) => Value::Int(n),
            Err(_) => return Err(cannot()),
        },
        ("Float", Value::Float(_)) => value,
        ("Float", Value::Int(n)) => Value::Float(*n as f64),
        ("Boolean", Value::Bool(_)) => value,
        ("Boolean", Value::String(s)) => match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" => Value::Bool(true),
            "false" | "no" | "n" => Value::Bool(false),
            _ => return Err(cannot()),
        },
        _ => return Err(cannot()),
    })
}

/// `StringConverter#convert(convert_to)` as `--explain` prints it once
/// the type is parsed: `[Integer]` (arguments are refused by [`convert`]).
pub(crate) fn convert_args(convert_to: &Value) -> String {
    let ty = match convert_to {
        Value::Array(items) if !items.is_empty() => &items[0],
        other => other,
    };
    format!("[{}]", ruby::to_s(ty))
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Patterns this thread compiled.
        pub(super) static COMPILED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn a_pattern_is_compiled_once() {
        let options = |v: &str| {
            let mut h = Hash::default();
            h.insert(Value::str("^only_this_test_.*$"), Value::str(v));
            h
        };
        let before = COMPILED.with(std::cell::Cell::get);
        let first = Compiled::new(&options("unique")).unwrap();
        let again = Compiled::new(&options("deep")).unwrap();
        assert_eq!(COMPILED.with(std::cell::Cell::get) - before, 1);
        assert_eq!(
            first.for_key("only_this_test_x"),
            Some(&Value::str("unique"))
        );
        assert_eq!(again.for_key("only_this_test_x"), Some(&Value::str("deep")));
        assert_eq!(again.for_key("other"), None);
    }

    #[test]
    fn a_key_entry_wins_over_patterns() {
        let mut h = Hash::default();
        h.insert(Value::str("^a.*"), Value::str("pattern"));
        h.insert(Value::str("ab"), Value::str("key"));
        let c = Compiled::new(&h).unwrap();
        assert_eq!(c.for_key("ab"), Some(&Value::str("key")));
        assert_eq!(c.for_key("ax"), Some(&Value::str("pattern")));
        assert_eq!(c.for_key("b"), None);
    }

    #[test]
    fn module_options_name_their_module() {
        let mut h = Hash::default();
        h.insert(Value::str("other::x"), Value::Nil);
        let err = validate(Value::Hash(h), Some("mod")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "all lookup_options keys must start with module name 'mod'"
        );
    }

    #[test]
    fn convert_to_array_splits_a_string() {
        let got = convert("k", &Value::str("Array"), Value::str("ab")).unwrap();
        assert_eq!(got, Value::Array(vec![Value::str("a"), Value::str("b")]));
    }
}
