//! Hash merges of hash lookups (`-h`, hiera_hash) and the array resolution
//! of array lookups (`-a`): Hiera's `Backend.merge_answer` with the native,
//! deep and deeper behaviours and every deep_merge 1.1.1 option, and
//! `resolve_answer`'s `[answer].flatten.uniq.compact`. Pure: a
//! `merge_debug` trace is returned as text, never printed.

mod deep;
mod prefix;
mod ruby;

use super::error::{ErrorClass, HieraError, Result};
use super::value::{Hash, Value, ValueSet};
use deep::{Indent, Merger};
use prefix::Knockout;

/// How two levels' Hashes combine (hiera.yaml `:merge_behavior:`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) enum Behavior {
    /// `lower.merge(higher)`: top-level keys only, higher wins.
    #[default]
    Native,
    /// deep_merge with `preserve_unmergeables: true`: the *lower* level wins
    /// scalars and type conflicts (unless it holds nil/false).
    Deep,
    /// deep_merge with `preserve_unmergeables: false`: the higher level wins.
    Deeper,
}

impl Behavior {
    /// Hiera's `case behavior when :deeper,'deeper' ... when :deep,'deep'`:
    /// a Symbol or String; anything else (unknown names, nil) is native.
    pub(crate) fn from_value(v: Option<&Value>) -> Behavior {
        match v {
            Some(Value::Symbol(s) | Value::String(s)) if s == "deeper" => Behavior::Deeper,
            Some(Value::Symbol(s) | Value::String(s)) if s == "deep" => Behavior::Deep,
            _ => Behavior::Native,
        }
    }
}

/// deep_merge 1.1.1's options, typed the way it reads them: each is
/// `options[:name]`, so a value counts by Ruby truthiness, and the values
/// that are used as objects keep the object.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct DeepMergeOptions {
    /// `:knockout_prefix`, any truthy value. Array items equal (`==`) to it
    /// clear the lower array; its `to_s` becomes the regex `/^prefix/`.
    pub(crate) knockout_prefix: Option<Value>,
    /// `:preserve_unmergeables` as given (its truthiness); `None` leaves the
    /// behaviour's default (deep: true, deeper: false).
    pub(crate) preserve_unmergeables: Option<bool>,
    pub(crate) merge_hash_arrays: bool,
    pub(crate) sort_merged_arrays: bool,
    /// `:unpack_arrays`, any truthy value; a non-String raises `TypeError`
    /// at the first array merge, as Ruby's `join`/`split` do.
    pub(crate) unpack_arrays: Option<Value>,
    pub(crate) overwrite_arrays: bool,
    pub(crate) extend_existing_arrays: bool,
    pub(crate) merge_debug: bool,
    /// `:debug_indent`, deep_merge's internal option, which a user can set
    /// too: it prefixes trace lines, and a non-String fails on recursion.
    pub(crate) debug_indent: Option<Value>,
}

impl DeepMergeOptions {
    /// Reads the options from a Hash by **Symbol** keys only, as deep_merge's
    /// `options[:knockout_prefix]` does: String keys are ignored.
    pub(crate) fn from_hash(h: &Hash) -> DeepMergeOptions {
        let get = |name: &str| h.get(&Value::Symbol(name.to_owned()));
        let truthy_value = |name: &str| get(name).filter(|v| v.is_truthy()).cloned();
        let flag = |name: &str| get(name).is_some_and(Value::is_truthy);
        DeepMergeOptions {
            knockout_prefix: truthy_value("knockout_prefix"),
            preserve_unmergeables: get("preserve_unmergeables").map(Value::is_truthy),
            merge_hash_arrays: flag("merge_hash_arrays"),
            sort_merged_arrays: flag("sort_merged_arrays"),
            unpack_arrays: truthy_value("unpack_arrays"),
            overwrite_arrays: flag("overwrite_arrays"),
            extend_existing_arrays: flag("extend_existing_arrays"),
            merge_debug: flag("merge_debug"),
            debug_indent: truthy_value("debug_indent"),
        }
    }
}

/// A merge behaviour with its options, ready to merge with.
#[derive(Clone, Debug, Default)]
pub struct MergeSpec {
    behavior: Behavior,
    options: DeepMergeOptions,
    /// The `/^prefix/` regex, compiled once.
    knockout: Option<Knockout>,
    /// Hiera passes a non-Hash `:deep_merge_options:` to `Hash#merge`, which
    /// raises `TypeError` on every deep/deeper merge (never for native).
    options_error: Option<HieraError>,
}

impl MergeSpec {
    /// The behaviour, when merging with it can neither fail nor print a
    /// `merge_debug` trace whatever the Hashes: native (which ignores
    /// every option), or deep/deeper with deep_merge's default options.
    /// Such merges can be put off, kept, or skipped when one side is
    /// empty (a Hash merged into `{}` is that Hash) without any difference
    /// a caller could see.
    pub(crate) fn plain(&self) -> Option<Behavior> {
        let plain = self.behavior == Behavior::Native
            || (self.options_error.is_none() && self.options == DeepMergeOptions::default());
        plain.then_some(self.behavior)
    }

    pub(crate) fn new(behavior: Behavior, options: DeepMergeOptions) -> MergeSpec {
        let knockout = options.knockout_prefix.clone().map(Knockout::new);
        MergeSpec {
            behavior,
            options,
            knockout,
            options_error: None,
        }
    }

    /// What hiera.yaml's `:merge_behavior:` and `:deep_merge_options:` mean
    /// (`None` when the key is absent).
    ///
    /// # Errors
    /// None today. Problems with the options are raised by
    /// [`merge_answer_traced`], at the merge where Ruby raises them, since a
    /// native or never-merging lookup must not fail; the `Result` keeps room
    /// for config-time checks.
    pub fn from_config(
        merge_behavior: Option<&Value>,
        deep_merge_options: Option<&Value>,
    ) -> Result<MergeSpec> {
        let behavior = Behavior::from_value(merge_behavior);
        // `Config[:deep_merge_options] || {}`
        Ok(match deep_merge_options {
            Some(Value::Hash(h)) => MergeSpec::new(behavior, DeepMergeOptions::from_hash(h)),
            Some(v) if v.is_truthy() => MergeSpec {
                options_error: Some(HieraError::new(
                    ErrorClass::TypeError,
                    format!(
                        "no implicit conversion of {} into Hash",
                        type_name_in_error(v)
                    ),
                )),
                ..MergeSpec::new(behavior, DeepMergeOptions::default())
            },
            _ => MergeSpec::new(behavior, DeepMergeOptions::default()),
        })
    }

    /// A Hash resolution type (API only): `:behavior` (Symbol or String;
    /// missing means native) and the other entries as options. A `:strategy`
    /// key, which hiera.rb's documentation mentions, is just an unknown option.
    ///
    /// # Errors
    /// None today; see [`MergeSpec::from_config`].
    pub fn from_resolution_hash(rt: &Hash) -> Result<MergeSpec> {
        let behavior = Behavior::from_value(rt.get(&Value::Symbol("behavior".into())));
        Ok(MergeSpec::new(behavior, DeepMergeOptions::from_hash(rt)))
    }
}

fn type_name_in_error(v: &Value) -> &'static str {
    match v {
        Value::Bool(true) => "true",
        other => other.class_name(),
    }
}

/// Hiera's `Backend.merge_answer(lower, higher, resolution_type)`: merges the
/// accumulated, higher-priority answer into a lower level's Hash, and
/// appends deep_merge's `merge_debug` trace (what Ruby writes to stdout
/// with `puts`/`print`) to `trace`, byte for byte. On error the trace holds
/// what Ruby printed before raising, possibly ending in an unfinished line.
///
/// The lookup fold calls it once per level that has the key, visiting levels
/// highest priority first and starting from an empty answer:
///
/// ```text
/// answer = {}
/// for each level value V (a Hash):  answer = merge_answer(V, answer, spec)?
/// ```
///
/// and once more per backend result (`merge_answer(backend_answer, {}, spec)`
/// first, then with the next backend's), as `Backend.lookup` does.
///
/// Contract, matching Ruby's in-place `deep_merge!(higher, lower)`:
/// - `higher` (the accumulated answer) is the *source*. It is consumed:
///   Ruby mutates it and drops it. Its knockout markers (`"--x"` items and
///   bare `"--"`) are applied to `lower` and do not survive into the
///   result, which is how a marker is "consumed by the first merge into a
///   lower level", even a level lacking that sub-key. Merges into `{}` are
///   no-ops except for the trace, so a key found at one level keeps its
///   markers, duplicates and order.
/// - `lower` is the *destination*: the result is `lower` with `higher`
///   merged in (key order: `lower`'s keys, then new keys of `higher`).
/// - Native is `lower.merge(higher)`, ignoring every option.
///
/// # Errors
/// For deep and deeper merges, in Ruby's order: `TypeError` for a non-Hash
/// `:deep_merge_options`; `DeepMerge::InvalidParameter` for an empty String
/// knockout prefix or a knockout prefix with preserve_unmergeables; then
/// errors met while merging: `ArgumentError` from `sort_merged_arrays`,
/// `TypeError` from a non-String `unpack_arrays`, a non-String
/// `:debug_indent`, or a knockout prefix that is a bad regex (see
/// `prefix.rs`).
pub fn merge_answer_traced(
    lower: Hash,
    higher: Hash,
    spec: &MergeSpec,
    trace: &mut String,
) -> Result<Hash> {
    merge(lower, higher, spec, Some(trace))
}

fn merge(
    mut lower: Hash,
    higher: Hash,
    spec: &MergeSpec,
    trace: Option<&mut String>,
) -> Result<Hash> {
    if spec.behavior == Behavior::Native {
        for (k, v) in higher {
            lower.insert(k, v);
        }
        return Ok(lower);
    }
    match deep_merge(Value::Hash(higher), Value::Hash(lower), spec, trace)? {
        Value::Hash(h) => Ok(h),
        // A Hash merged into a Hash stays a Hash.
        other => unreachable!("deep_merge of two Hashes gave {other:?}"),
    }
}

/// deep_merge's `deep_merge!(source, dest, options)` over any two values,
/// as Puppet's deep merge strategy calls it (puppet/pops/merge_strategy.rb):
/// `source` wins. A native `spec` merges as deeper does.
///
/// # Errors
/// As [`merge_answer_traced`] for deep merges.
pub(crate) fn deep_merge(
    source: Value,
    dest: Value,
    spec: &MergeSpec,
    trace: Option<&mut String>,
) -> Result<Value> {
    let default_preserve = spec.behavior == Behavior::Deep;
    if let Some(err) = &spec.options_error {
        return Err(err.clone());
    }
    let opts = &spec.options;
    let overwrite = !opts.preserve_unmergeables.unwrap_or(default_preserve);
    if let Some(prefix) = &opts.knockout_prefix {
        if matches!(prefix, Value::String(s) if s.is_empty()) {
            return Err(invalid_parameter(
                "knockout_prefix cannot be an empty string in deep_merge!",
            ));
        }
        if !overwrite {
            return Err(invalid_parameter(
                "overwrite_unmergeable must be true if knockout_prefix is specified in deep_merge!",
            ));
        }
    }
    let mut merger = Merger {
        opts,
        knockout: spec.knockout.as_ref(),
        overwrite,
        trace: if opts.merge_debug { trace } else { None },
    };
    merger.merge(source, dest, Indent::TOP)
}

fn invalid_parameter(message: &str) -> HieraError {
    HieraError::new(ErrorClass::DeepMergeInvalidParameter, message)
}

/// `resolve_answer` for array lookups: `[answer].flatten.uniq.compact` —
/// recursive flatten, first occurrence kept (`eql?`: `1` and `1.0` differ),
/// nils removed.
pub fn resolve_array(answer: Vec<Value>) -> Vec<Value> {
    fn flatten_into(values: Vec<Value>, out: &mut ValueSet) {
        for v in values {
            match v {
                Value::Array(inner) => flatten_into(inner, out),
                Value::Nil => {}
                other => {
                    out.insert(other);
                }
            }
        }
    }
    let mut seen = ValueSet::with_capacity_and_hasher(answer.len(), Default::default());
    flatten_into(answer, &mut seen);
    seen.into_iter().collect()
}

#[cfg(test)]
mod tests;
