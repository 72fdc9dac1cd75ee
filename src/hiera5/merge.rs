//! The merge strategies of `lookup`: first, unique, hash and deep with
//! its options. Ported from puppet/pops/merge_strategy.rb; the deep merge
//! itself is the deep_merge gem's, which the Hiera 3 core already has.

use super::error::{Error, Result};
use crate::hiera::merge::{Behavior, DeepMergeOptions, MergeSpec, deep_merge};
use crate::hiera::value::ValueSet;
use crate::hiera::{Hash, Value};

/// How the values found for a key combine.
#[derive(Clone, Debug, Default)]
pub enum Strategy {
    /// The first value found (also Puppet's `default`).
    #[default]
    First,
    /// Every value flattened into one Array, duplicates dropped.
    Unique,
    /// Hashes merged by their top-level keys, higher priority winning.
    Hash,
    /// deep_merge with Puppet's options, and those options as given but
    /// `strategy` (what `--explain` shows; `None` when there are none).
    Deep(Box<MergeSpec>, Option<Box<Hash>>),
}

/// The options `deep` takes (its `options_t` Struct).
const DEEP_OPTIONS: [&str; 4] = [
    "knockout_prefix",
    "merge_debug",
    "merge_hash_arrays",
    "sort_merged_arrays",
];

impl Strategy {
    /// `MergeStrategy.strategy(merge)`: a name, or a Hash with `strategy`
    /// and the strategy's options.
    ///
    /// # Errors
    /// Puppet's texts for a Hash without `strategy`, an unknown name, and
    /// options the strategy does not take.
    pub fn from_value(merge: &Value) -> Result<Strategy> {
        let (name, options) = match merge {
            Value::Hash(h) => match h.get(&Value::str("strategy")) {
                Some(name) => (name, (h.len() > 1).then_some(h)),
                None => {
                    return Err(Error::Strategy(
                        "The hash given as 'merge' must contain the name of a strategy in string form for the key 'strategy'".into(),
                    ));
                }
            },
            other => (other, None),
        };
        let name = match name {
            Value::String(s) | Value::Symbol(s) => s.as_str(),
            other => return Err(unknown(&crate::hiera::render::ruby::to_s(other))),
        };
        let strategy = match name {
            "first" | "default" => Strategy::First,
            "unique" => Strategy::Unique,
            "hash" => Strategy::Hash,
            "deep" => return deep(options),
            other => return Err(unknown(other)),
        };
        if let Some(extra) = options.and_then(|h| h.keys().find(|k| k.as_str() != Some("strategy")))
        {
            return Err(Error::Strategy(format!(
                "The merge options has wrong type, unrecognized key '{}'",
                crate::hiera::render::ruby::to_s(extra)
            )));
        }
        Ok(strategy)
    }

    /// `--merge NAME` with `--knock-out-prefix`, `--sort-merged-arrays`
    /// and `--merge-hash-arrays` (which only `deep` takes).
    ///
    /// # Errors
    /// As [`Strategy::from_value`].
    pub fn from_flags(
        name: &str,
        knockout_prefix: Option<&str>,
        sort_merged_arrays: bool,
        merge_hash_arrays: bool,
    ) -> Result<Strategy> {
        Strategy::from_value(&Strategy::flags_value(
            name,
            knockout_prefix,
            sort_merged_arrays,
            merge_hash_arrays,
        ))
    }

    /// The `merge` [`Strategy::from_flags`] reads: a name, or for `deep`
    /// a Hash with the flags' options (what a server is sent).
    pub fn flags_value(
        name: &str,
        knockout_prefix: Option<&str>,
        sort_merged_arrays: bool,
        merge_hash_arrays: bool,
    ) -> Value {
        if name != "deep" {
            return Value::str(name);
        }
        let mut h = Hash::default();
        h.insert(Value::str("strategy"), Value::str("deep"));
        h.insert(
            Value::str("sort_merged_arrays"),
            Value::Bool(sort_merged_arrays),
        );
        h.insert(
            Value::str("merge_hash_arrays"),
            Value::Bool(merge_hash_arrays),
        );
        if let Some(prefix) = knockout_prefix {
            h.insert(Value::str("knockout_prefix"), Value::str(prefix));
        }
        Value::Hash(h)
    }

    /// `MergeStrategy#lookup`: combines what `variants` finds, in order;
    /// `find(i)` is `None` where variant `i` has no value.
    ///
    /// # Errors
    /// What `find` fails with, and merges of values the strategy refuses.
    pub(crate) fn lookup(
        &self,
        variants: usize,
        mut find: impl FnMut(usize) -> Result<Option<Value>>,
    ) -> Result<Option<Value>> {
        if let Strategy::First = self {
            for i in 0..variants {
                if let Some(v) = find(i)? {
                    return Ok(Some(v));
                }
            }
            return Ok(None);
        }
        if variants == 1 {
            return Ok(find(0)?.map(|v| self.merge_single(v)));
        }
        let mut memo: Option<Value> = None;
        for i in 0..variants {
            if let Some(value) = find(i)? {
                memo = Some(match memo {
                    None => self.convert_value(value),
                    Some(higher) => self.merge(higher, value)?,
                });
            }
        }
        Ok(memo)
    }

    /// `MergeStrategy.key` and `options_wo_strategy`, as `--explain`
    /// names a merge.
    pub(crate) fn explained(&self) -> (&'static str, Option<Hash>) {
        match self {
            Strategy::First => ("first", None),
            Strategy::Unique => ("unique", None),
            Strategy::Hash => ("hash", None),
            Strategy::Deep(_, options) => ("deep", options.as_deref().cloned()),
        }
    }

    fn convert_value(&self, value: Value) -> Value {
        match self {
            Strategy::Unique => Value::Array(flatten(value)),
            _ => value,
        }
    }

    fn merge_single(&self, value: Value) -> Value {
        match (self, value) {
            (Strategy::Unique, Value::Array(items)) => Value::Array(uniq(items)),
            (_, value) => value,
        }
    }

    /// `merge(e1, e2)`: `e1` is the higher priority.
    ///
    /// # Errors
    /// A value of a type the strategy cannot merge.
    pub(crate) fn merge(&self, e1: Value, e2: Value) -> Result<Value> {
        match self {
            Strategy::First => Ok(e1),
            Strategy::Unique => {
                for (which, v) in [("first", &e1), ("second", &e2)] {
                    if matches!(v, Value::Hash(_) | Value::Nil) {
                        return Err(wrong_type(which, "a value of type Scalar or Array", v));
                    }
                }
                let mut all = flatten(e1);
                all.extend(flatten(e2));
                Ok(Value::Array(uniq(all)))
            }
            Strategy::Hash => match (e1, e2) {
                (Value::Hash(higher), Value::Hash(mut lower)) => {
                    for (k, v) in higher {
                        lower.insert(k, v);
                    }
                    Ok(Value::Hash(lower))
                }
                (Value::Hash(_), other) => Err(wrong_type("second", "a Hash value", &other)),
                (other, _) => Err(wrong_type("first", "a Hash value", &other)),
            },
            Strategy::Deep(spec, _) => {
                deep_merge(e1, e2, spec, None).map_err(|e| Error::Merge(e.message))
            }
        }
    }
}

fn deep(options: Option<&Hash>) -> Result<Strategy> {
    // Puppet passes every option but `strategy` to deep_merge by Symbol,
    // after `preserve_unmergeables: false`.
    let mut symbols = Hash::default();
    symbols.insert(
        Value::Symbol("preserve_unmergeables".into()),
        Value::Bool(false),
    );
    for (k, v) in options.into_iter().flatten() {
        let Some(name) = k.as_str().filter(|n| *n != "strategy") else {
            continue;
        };
        if !DEEP_OPTIONS.contains(&name) {
            return Err(Error::Strategy(format!(
                "The merge options has wrong type, unrecognized key '{name}'"
            )));
        }
        symbols.insert(Value::Symbol(name.to_owned()), v.clone());
    }
    let given: Hash = options
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != Some("strategy"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let options = DeepMergeOptions::from_hash(&symbols);
    Ok(Strategy::Deep(
        Box::new(MergeSpec::new(Behavior::Deeper, options)),
        (!given.is_empty()).then(|| Box::new(given)),
    ))
}

fn unknown(name: &str) -> Error {
    Error::Strategy(format!("Unknown merge strategy: '{name}'"))
}

/// `TypeAsserter`'s text: what was expected, and the Puppet type
/// inferred for what was got, generalized as Puppet words it.
fn wrong_type(which: &str, expected: &str, got: &Value) -> Error {
    let got = match got {
        Value::Array(_) => "Tuple",
        Value::Hash(_) => "Struct",
        Value::Nil => "Undef",
        Value::String(_) => "String",
        Value::Int(_) | Value::BigInt(_) => "Integer",
        Value::Float(_) => "Float",
        Value::Bool(_) => "Boolean",
        other => other.class_name(),
    };
    Error::Merge(format!(
        "The {which} element of the merge has wrong type, expects {expected}, got {got}"
    ))
}

/// Ruby's `Array#flatten` of an Array, `[e]` of anything else.
fn flatten(value: Value) -> Vec<Value> {
    fn into(value: Value, out: &mut Vec<Value>) {
        match value {
            Value::Array(items) => items.into_iter().for_each(|v| into(v, out)),
            other => out.push(other),
        }
    }
    let mut out = Vec::new();
    match value {
        Value::Array(_) => into(value, &mut out),
        other => out.push(other),
    }
    out
}

/// Ruby's `Array#uniq`: first occurrences, by `eql?`.
fn uniq(items: Vec<Value>) -> Vec<Value> {
    let set: ValueSet = items.into_iter().collect();
    set.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(items: &[i64]) -> Value {
        Value::Array(items.iter().map(|i| Value::Int(*i)).collect())
    }

    #[test]
    fn unique_flattens_and_keeps_first_occurrences() {
        let got = Strategy::Unique.merge(
            arr(&[1, 2]),
            Value::Array(vec![arr(&[2, 3]), Value::Int(4)]),
        );
        assert_eq!(got.unwrap(), arr(&[1, 2, 3, 4]));
    }

    #[test]
    fn merge_names_and_hashes_are_read_as_puppet_reads_them() {
        assert!(matches!(
            Strategy::from_value(&Value::str("deep")),
            Ok(Strategy::Deep(..))
        ));
        let err = Strategy::from_value(&Value::str("deeper")).unwrap_err();
        assert_eq!(err.to_string(), "Unknown merge strategy: 'deeper'");
        let err = Strategy::from_value(&Value::Hash(Hash::default())).unwrap_err();
        assert!(err.to_string().contains("for the key 'strategy'"), "{err}");
    }
}
