//! Which level supplied each top-level key of a hash (or deep) merge's
//! answer, for `--explain`. Hiera 3's `:deep` merge lets the
//! lower-priority level win for scalars (docs/spec/hiera3-semantics.md),
//! so "supplied" is read off the answer, not the merge order: the
//! datasource whose own value for the key is the answer's.

use super::{Outcome, Step};
use crate::hiera::value::Value;

/// For each top-level key of `answer` (a Hash), in its order, the source
/// of the first of `steps` (one lookup's, in priority order; nested
/// lookups' steps, deeper than `depth`, are skipped) found with a Hash holding that key with
/// the answer's value; a key whose value no single level holds (a Hash
/// deep-merged from several) names the highest-priority level holding
/// it. Empty when `answer` is not a Hash.
pub(crate) fn suppliers(steps: &[Step], depth: usize, answer: &Value) -> Vec<(String, String)> {
    let Value::Hash(merged) = answer else {
        return Vec::new();
    };
    let found: Vec<(&str, &crate::hiera::value::Hash)> = steps
        .iter()
        .filter(|s| s.depth == depth)
        .filter_map(|s| match &s.outcome {
            Outcome::Found(Value::Hash(h)) => Some((s.source.as_str(), h)),
            _ => None,
        })
        .collect();
    merged
        .iter()
        .filter_map(|(k, v)| {
            let equal = found.iter().find(|(_, h)| h.get(k) == Some(v));
            let holding = || found.iter().find(|(_, h)| h.get(k).is_some());
            let (source, _) = equal.or_else(holding)?;
            Some((crate::hiera::render::ruby::to_s(k), (*source).to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{DataSource, Fetched, Hiera, NoLog, Resolution};
    use crate::hiera::config::{BackendKind, Config};
    use crate::hiera::value::{Hash, HashedKey, Value};
    use proptest::prelude::*;
    use std::borrow::Cow;

    /// Level `lN` holds `levels[N]` as key `k`'s value (none: no key).
    struct Layers(Vec<Option<Value>>);

    impl DataSource<'static> for Layers {
        fn fetch(
            &self,
            _: BackendKind,
            _: &str,
            source: &str,
            _: &HashedKey<'_>,
        ) -> crate::hiera::Result<Fetched<'static>> {
            let n: usize = source[1..].parse().unwrap();
            Ok(match &self.0[n] {
                Some(v) => Fetched::Found(Cow::Owned(v.clone())),
                None => Fetched::NoKey,
            })
        }
    }

    fn sym(s: &str) -> Value {
        Value::Symbol(s.to_owned())
    }

    fn config(levels: usize, behavior: &str) -> Config {
        let mut raw = Hash::default();
        raw.insert(sym("backends"), Value::Array(vec![Value::str("yaml")]));
        raw.insert(
            sym("hierarchy"),
            Value::Array((0..levels).map(|n| Value::str(format!("l{n}"))).collect()),
        );
        raw.insert(sym("merge_behavior"), sym(behavior));
        Config::load(Value::Hash(raw)).unwrap().0
    }

    /// The answer and the `keys` of the explained hash lookup of `k`.
    fn explained(layers: &Layers, behavior: &str) -> (Value, Vec<(String, String)>) {
        let config = config(layers.0.len(), behavior);
        let mut hiera = Hiera::new(&config, layers, &NoLog).explain();
        let answer = hiera
            .lookup("k", None, &Hash::default(), None, &Resolution::Hash)
            .unwrap()
            .into_value();
        let keys = hiera
            .steps()
            .iter()
            .rev()
            .find(|s| s.depth == 0)
            .and_then(|s| s.keys.clone())
            .unwrap_or_default();
        (answer, keys)
    }

    fn hash(pairs: &[(&str, Value)]) -> Value {
        Value::Hash(
            pairs
                .iter()
                .map(|(k, v)| (Value::str(*k), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn a_native_merge_names_the_highest_level_holding_each_key() {
        let layers = Layers(vec![
            Some(hash(&[("a", Value::Int(1))])),
            None,
            Some(hash(&[("a", Value::Int(2)), ("b", Value::Int(3))])),
        ]);
        let (_, keys) = explained(&layers, "native");
        assert_eq!(
            keys,
            vec![
                ("a".to_owned(), "l0".to_owned()),
                ("b".to_owned(), "l2".to_owned())
            ]
        );
    }

    /// Hiera 3's `:deep` keeps the lower-priority level's scalar.
    #[test]
    fn a_deep_merge_names_the_level_whose_scalar_the_answer_holds() {
        let layers = Layers(vec![
            Some(hash(&[("a", Value::Int(1))])),
            Some(hash(&[("a", Value::Int(2))])),
        ]);
        let (answer, keys) = explained(&layers, "deep");
        assert_eq!(answer, hash(&[("a", Value::Int(2))]));
        assert_eq!(keys, vec![("a".to_owned(), "l1".to_owned())]);
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            (0i64..3).prop_map(Value::Int),
            "[xy]".prop_map(Value::String),
            proptest::collection::vec(("[pq]", 0i64..3), 0..3).prop_map(|pairs| Value::Hash(
                pairs
                    .into_iter()
                    .map(|(k, v)| (Value::String(k), Value::Int(v)))
                    .collect()
            )),
        ]
    }

    fn layer() -> impl Strategy<Value = Option<Value>> {
        proptest::option::of(
            proptest::collection::vec(("[a-d]", leaf()), 0..4).prop_map(|pairs| {
                Value::Hash(
                    pairs
                        .into_iter()
                        .map(|(k, v)| (Value::String(k), v))
                        .collect(),
                )
            }),
        )
    }

    proptest! {
        /// By brute force over generated layers: every top-level key of
        /// the answer is named once, by a level holding it, and where the
        /// answer's value is a scalar, the named level's own value for
        /// the key is the answer's.
        #[test]
        fn each_named_level_holds_the_answers_value(
            levels in proptest::collection::vec(layer(), 1..5),
            behavior in prop_oneof![Just("native"), Just("deep"), Just("deeper")],
        ) {
            let layers = Layers(levels);
            let (answer, keys) = explained(&layers, behavior);
            let Value::Hash(merged) = &answer else {
                prop_assert!(keys.is_empty());
                return Ok(());
            };
            prop_assert_eq!(keys.len(), merged.len());
            for ((k, v), (named_key, source)) in merged.iter().zip(&keys) {
                prop_assert_eq!(&Value::String(named_key.clone()), k);
                let n: usize = source[1..].parse().unwrap();
                let Some(Value::Hash(own)) = &layers.0[n] else {
                    return Err(TestCaseError::fail(format!("{source} holds no Hash")));
                };
                let own = own.get(k);
                prop_assert!(own.is_some(), "{} does not hold {:?}", source, k);
                if !matches!(v, Value::Hash(_)) {
                    prop_assert_eq!(own, Some(v), "{} for {:?}", source, k);
                }
            }
        }
    }
}
