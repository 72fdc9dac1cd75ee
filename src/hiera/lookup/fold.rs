//! An answer accumulating over the levels of a backend, or over the
//! backends of `Backend.lookup`: the same three-way rule at both depths.
//!
//! A hash lookup whose values are all stored and final (borrowed from the
//! data source: nothing to interpolate, see [`super::is_final`]) under a
//! plain merge ([`MergeSpec::plain`]) does not copy them as it goes: they
//! are kept as references and merged once, at the end, or not at all when
//! only one level holds the key (a Hash merged into `{}` is that Hash), or
//! answered by the data source's memo of that same merge
//! ([`DataSource::merged`]). Merging then or as they come gives the same
//! Hash: plain merges cannot fail and print nothing, so nothing tells the
//! two apart.

use super::super::error::{ErrorClass, HieraError, Result};
use super::super::merge::{MergeSpec, merge_answer_traced, resolve_array};
use super::super::value::{Hash, Value};
use super::{DataSource, Resolution};
use std::borrow::Cow;

pub(super) struct Fold<'r, 'd> {
    resolution: &'r Resolution,
    /// The configured merge, unless the resolution type brings its own.
    spec: &'r MergeSpec,
    found: bool,
    /// Array lookups: each level's value as found (borrowed if stored
    /// and final), highest priority first.
    array: Vec<Cow<'d, Value>>,
    /// Hash lookups: stored, final Hashes not merged yet, highest priority
    /// first; only while `hash` is `None`.
    layers: Vec<&'d Value>,
    hash: Option<Hash>,
    answer: Option<Cow<'d, Value>>,
}

impl<'r, 'd> Fold<'r, 'd> {
    pub(super) fn new(resolution: &'r Resolution, configured: &'r MergeSpec) -> Fold<'r, 'd> {
        let spec = match resolution {
            Resolution::HashWith(spec) => spec,
            _ => configured,
        };
        Fold {
            resolution,
            spec,
            found: false,
            array: Vec::new(),
            layers: Vec::new(),
            hash: None,
            answer: None,
        }
    }

    /// Adds a value found for `key` (type-checked as Hiera does); `true`
    /// when the lookup is decided (priority: the first find wins).
    pub(super) fn add(
        &mut self,
        key: &str,
        value: Cow<'d, Value>,
        trace: &mut String,
    ) -> Result<bool> {
        self.found = true;
        match self.resolution {
            Resolution::Array => {
                check_array(key, &value)?;
                self.array.push(value);
                Ok(false)
            }
            Resolution::Hash | Resolution::HashWith(_) => {
                if !matches!(*value, Value::Hash(_)) {
                    return Err(type_mismatch(key, "Hash", &value));
                }
                let value = match value {
                    Cow::Borrowed(v) if self.hash.is_none() && self.spec.plain().is_some() => {
                        self.layers.push(v);
                        return Ok(false);
                    }
                    other => other,
                };
                let mut acc = self.merge_layers(trace)?;
                let Value::Hash(h) = value.into_owned() else {
                    unreachable!("checked above")
                };
                acc = merge_answer_traced(h, acc, self.spec, trace)?;
                self.hash = Some(acc);
                Ok(false)
            }
            Resolution::Priority | Resolution::Other(_) => {
                self.answer = Some(value);
                Ok(true)
            }
        }
    }

    /// The answer so far as a Hash: the put-off layers merged in, in the
    /// order they came, as an eager fold would have merged them.
    fn merge_layers(&mut self, trace: &mut String) -> Result<Hash> {
        let acc = self.hash.take().unwrap_or_default();
        merge_all(acc, &std::mem::take(&mut self.layers), self.spec, trace)
    }

    /// The answer, if anything was found; `resolve` applies the array
    /// lookup's final `flatten.uniq.compact` (done once, in `Backend.lookup`).
    pub(super) fn finish(
        mut self,
        resolve: bool,
        data: &dyn DataSource<'d>,
        trace: &mut String,
    ) -> Result<Option<Cow<'d, Value>>> {
        if !self.found {
            return Ok(None);
        }
        Ok(Some(match self.resolution {
            Resolution::Array if resolve => resolve_layers(self.array, data),
            // One backend's levels: the lookup's `flatten` makes a single
            // value found the same as the one-item Array Hiera returns
            // here, so a stored value stays borrowed.
            Resolution::Array => match <[_; 1]>::try_from(self.array) {
                Ok([one]) => one,
                Err(all) => {
                    Cow::Owned(Value::Array(all.into_iter().map(Cow::into_owned).collect()))
                }
            },
            Resolution::Hash | Resolution::HashWith(_) => {
                match (self.spec.plain(), &*self.layers) {
                    (Some(_), [one]) if self.hash.is_none() => Cow::Borrowed(*one),
                    (Some(behavior), layers @ [_, _, ..]) if self.hash.is_none() => {
                        match data.merged(behavior, layers) {
                            Some(kept) => Cow::Borrowed(kept),
                            None => {
                                let merged = merge_all(Hash::default(), layers, self.spec, trace)?;
                                data.keep_merged(behavior, layers, Value::Hash(merged))
                            }
                        }
                    }
                    _ => Cow::Owned(Value::Hash(self.merge_layers(trace)?)),
                }
            }
            _ => self.answer.unwrap_or(Cow::Owned(Value::Nil)),
        }))
    }
}

/// An array lookup's answer: `flatten.uniq.compact` of the values found,
/// highest priority first. When they are all stored and final, that is a
/// function of those values alone, kept by `data` if it keeps such
/// answers ([`DataSource::resolved`]), as merges of final Hashes are.
fn resolve_layers<'d>(found: Vec<Cow<'d, Value>>, data: &dyn DataSource<'d>) -> Cow<'d, Value> {
    let layers: Option<Vec<&'d Value>> = found
        .iter()
        .map(|v| match v {
            Cow::Borrowed(v) => Some(*v),
            Cow::Owned(_) => None,
        })
        .collect();
    let Some(layers) = layers else {
        let found = found.into_iter().map(Cow::into_owned).collect();
        return Cow::Owned(Value::Array(resolve_array(found)));
    };
    if let Some(kept) = data.resolved(&layers) {
        return Cow::Borrowed(kept);
    }
    let copies = layers.iter().map(|v| (*v).clone()).collect();
    data.keep_resolved(&layers, Value::Array(resolve_array(copies)))
}

/// `layers` (Hashes, highest priority first) merged into `acc` one after
/// the other, as the lookup merges each level's value as it finds it.
fn merge_all(
    mut acc: Hash,
    layers: &[&Value],
    spec: &MergeSpec,
    trace: &mut String,
) -> Result<Hash> {
    for layer in layers {
        let Value::Hash(h) = layer else {
            unreachable!("only Hashes are put off")
        };
        acc = merge_answer_traced(h.clone(), acc, spec, trace)?;
    }
    Ok(acc)
}

fn check_array(key: &str, value: &Value) -> Result<()> {
    match value {
        Value::Array(_) | Value::String(_) => Ok(()),
        other => Err(type_mismatch(key, "Array", other)),
    }
}

fn type_mismatch(key: &str, expected: &str, got: &Value) -> HieraError {
    HieraError::new(
        ErrorClass::Exception,
        format!(
            "Hiera type mismatch for key '{key}': expected {expected} and got {}",
            got.class_name()
        ),
    )
}

#[cfg(test)]
mod tests;
