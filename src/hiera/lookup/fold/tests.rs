//! Hash lookups over stored, final levels (merged once at the end, or not
//! at all, or answered by a memo) answer exactly what merging each level's
//! value as it is found answers: the fold the oracle tests check against
//! Hiera 3.10.

use super::super::super::config::Config;
use super::super::super::merge::{MergeSpec, merge_answer_traced, resolve_array};
use super::super::super::value::{Hash, HashedKey, Value};
use super::super::{Answer, DataSource, Fetched, Hiera, NoLog, Resolution};
use crate::configdb::memo::AnswerMemo;
use crate::hiera::config::BackendKind;
use crate::hiera::merge::Behavior;
use proptest::prelude::*;
use std::borrow::Cow;

/// Levels `l0`, `l1`… each holding maybe a document; a level marked
/// `copied` hands its values out owned (as if interpolated), which makes
/// the fold merge as it goes from there on.
struct Levels<'d> {
    docs: &'d [(Option<Hash>, bool)],
    memo: Option<&'d AnswerMemo>,
}

impl<'d> DataSource<'d> for Levels<'d> {
    fn fetch(
        &self,
        _: BackendKind,
        _: &str,
        source: &str,
        key: &HashedKey<'_>,
    ) -> crate::hiera::Result<Fetched<'d>> {
        let i: usize = source.trim_start_matches('l').parse().unwrap();
        Ok(match &self.docs[i] {
            (None, _) => Fetched::NoData,
            (Some(doc), copied) => match doc.get(key.value()) {
                None => Fetched::NoKey,
                Some(v) if *copied => Fetched::Found(Cow::Owned(v.clone())),
                Some(v) => Fetched::Final(Cow::Borrowed(v)),
            },
        })
    }

    fn merged(&self, behavior: Behavior, layers: &[&'d Value]) -> Option<&'d Value> {
        self.memo?.merged(behavior, layers)
    }

    fn keep_merged(
        &self,
        behavior: Behavior,
        layers: &[&'d Value],
        merged: Value,
    ) -> Cow<'d, Value> {
        match self.memo {
            Some(memo) => memo.keep_merged(behavior, layers, merged),
            None => Cow::Owned(merged),
        }
    }

    fn resolved(&self, layers: &[&'d Value]) -> Option<&'d Value> {
        self.memo?.resolved(layers)
    }

    fn keep_resolved(&self, layers: &[&'d Value], resolved: Value) -> Cow<'d, Value> {
        match self.memo {
            Some(memo) => memo.keep_resolved(layers, resolved),
            None => Cow::Owned(resolved),
        }
    }
}

fn sym(s: &str) -> Value {
    Value::Symbol(s.to_owned())
}

fn config(levels: usize, behavior: &str, backends: usize) -> Config {
    let mut raw = Hash::default();
    let names = ["yaml", "json"][..backends]
        .iter()
        .map(|b| Value::str(*b))
        .collect();
    raw.insert(sym("backends"), Value::Array(names));
    raw.insert(
        sym("hierarchy"),
        Value::Array((0..levels).map(|i| Value::str(format!("l{i}"))).collect()),
    );
    raw.insert(sym("merge_behavior"), Value::str(behavior));
    Config::load(Value::Hash(raw)).unwrap().0
}

/// What Hiera answers: each level's value merged into the answer as it is
/// found, then each backend's answer into the lookup's (`merge_answer`).
fn eager(
    docs: &[(Option<Hash>, bool)],
    behavior: &str,
    backends: usize,
) -> Result<Option<Value>, String> {
    let spec = MergeSpec::from_config(Some(&Value::str(behavior)), None).unwrap();
    let mut trace = String::new();
    let key = Value::str("k");
    let mut answer: Option<Hash> = None;
    for _ in 0..backends {
        let mut acc: Option<Hash> = None;
        for doc in docs.iter().filter_map(|(d, _)| d.as_ref()) {
            match doc.get(&key) {
                None => {}
                Some(Value::Hash(h)) => {
                    let merged = merge_answer_traced(
                        h.clone(),
                        acc.take().unwrap_or_default(),
                        &spec,
                        &mut trace,
                    );
                    acc = Some(merged.map_err(|e| e.message)?);
                }
                Some(other) => {
                    return Err(format!(
                        "Hiera type mismatch for key 'k': expected Hash and got {}",
                        other.class_name()
                    ));
                }
            }
        }
        if let Some(acc) = acc {
            let merged =
                merge_answer_traced(acc, answer.take().unwrap_or_default(), &spec, &mut trace);
            answer = Some(merged.map_err(|e| e.message)?);
        }
    }
    Ok(answer.map(Value::Hash))
}

/// What Hiera answers to an array lookup: each backend's Array of the
/// values found (`Array` or `String`, else a type mismatch), then
/// `flatten.uniq.compact` of the backends' Arrays.
fn eager_array(docs: &[(Option<Hash>, bool)], backends: usize) -> Result<Option<Value>, String> {
    let key = Value::str("k");
    let mut answer: Option<Vec<Value>> = None;
    for _ in 0..backends {
        let mut found: Option<Vec<Value>> = None;
        for doc in docs.iter().filter_map(|(d, _)| d.as_ref()) {
            match doc.get(&key) {
                None => {}
                Some(v @ (Value::Array(_) | Value::String(_))) => {
                    found.get_or_insert_default().push(v.clone());
                }
                Some(other) => {
                    return Err(format!(
                        "Hiera type mismatch for key 'k': expected Array and got {}",
                        other.class_name()
                    ));
                }
            }
        }
        if let Some(found) = found {
            answer.get_or_insert_default().push(Value::Array(found));
        }
    }
    Ok(answer.map(|a| Value::Array(resolve_array(a))))
}

fn looked_up(
    docs: &[(Option<Hash>, bool)],
    behavior: &str,
    backends: usize,
    memo: Option<&AnswerMemo>,
) -> Result<Option<Value>, String> {
    looked_up_as(docs, behavior, backends, memo, &Resolution::Hash)
}

fn looked_up_as(
    docs: &[(Option<Hash>, bool)],
    behavior: &str,
    backends: usize,
    memo: Option<&AnswerMemo>,
    resolution: &Resolution,
) -> Result<Option<Value>, String> {
    let config = config(docs.len(), behavior, backends);
    let source = Levels { docs, memo };
    let mut hiera = Hiera::new(&config, &source, &NoLog);
    match hiera.lookup("k", None, &Hash::default(), None, resolution) {
        Ok(Answer::Found(v)) => Ok(Some(v.into_owned())),
        Ok(Answer::NotFound) => Ok(None),
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(e.message),
    }
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        (0..4i64).prop_map(Value::Int),
        "[a-c]{0,2}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-d]", inner), 0..4).prop_map(|kv| {
                Value::Hash(kv.into_iter().map(|(k, v)| (Value::String(k), v)).collect())
            }),
        ]
    })
}

/// A level's document: maybe the key, usually a Hash.
fn document() -> impl Strategy<Value = Option<Hash>> {
    let hash = prop::collection::vec(("[a-d]", value()), 0..4)
        .prop_map(|kv| Value::Hash(kv.into_iter().map(|(k, v)| (Value::String(k), v)).collect()));
    let found = prop_oneof![6 => hash, 1 => value()];
    prop::option::weighted(0.8, prop::option::weighted(0.8, found)).prop_map(|doc| {
        doc.map(|found| {
            let mut h = Hash::default();
            if let Some(v) = found {
                h.insert(Value::str("k"), v);
            }
            h
        })
    })
}

proptest! {
    #[test]
    fn final_levels_merge_as_hiera_merges_them(
        docs in prop::collection::vec((document(), prop::bool::weighted(0.2)), 1..5),
        behavior in prop_oneof![Just("native"), Just("deep"), Just("deeper")],
        backends in 1..=2usize,
    ) {
        let want = eager(&docs, behavior, backends);
        prop_assert_eq!(&looked_up(&docs, behavior, backends, None), &want);
        let memo = AnswerMemo::new(1 << 20);
        // Twice: the first lookup keeps the merge, the second answers it.
        prop_assert_eq!(&looked_up(&docs, behavior, backends, Some(&memo)), &want);
        prop_assert_eq!(&looked_up(&docs, behavior, backends, Some(&memo)), &want);
    }

    #[test]
    fn array_lookups_of_final_levels_answer_as_hiera(
        docs in prop::collection::vec((array_document(), prop::bool::weighted(0.2)), 1..5),
        backends in 1..=2usize,
    ) {
        let want = eager_array(&docs, backends);
        let array = |memo| looked_up_as(&docs, "native", backends, memo, &Resolution::Array);
        prop_assert_eq!(&array(None), &want);
        let memo = AnswerMemo::new(1 << 20);
        // Twice: the first lookup keeps the answer, the second answers it.
        prop_assert_eq!(&array(Some(&memo)), &want);
        prop_assert_eq!(&array(Some(&memo)), &want);
    }
}

/// A level's document for array lookups: maybe the key, usually an Array
/// (with nested Arrays, nils and repeats for `flatten.uniq.compact`) or a
/// String.
fn array_document() -> impl Strategy<Value = Option<Hash>> {
    let array = prop::collection::vec(value(), 0..5).prop_map(Value::Array);
    let found = prop_oneof![5 => array, 2 => "[a-c]{0,2}".prop_map(Value::String), 1 => value()];
    prop::option::weighted(0.8, prop::option::weighted(0.8, found)).prop_map(|doc| {
        doc.map(|found| {
            let mut h = Hash::default();
            if let Some(v) = found {
                h.insert(Value::str("k"), v);
            }
            h
        })
    })
}

#[test]
fn an_array_lookup_of_final_levels_is_kept_and_answered_borrowed() {
    let items = Value::Array(vec![
        Value::str("a"),
        Value::Array(vec![Value::str("b"), Value::Nil, Value::str("a")]),
    ]);
    let mut h = Hash::default();
    h.insert(Value::str("k"), items);
    let docs = [(Some(h), false)];
    let memo = AnswerMemo::new(1 << 20);
    let config = config(docs.len(), "native", 1);
    let source = Levels {
        docs: &docs,
        memo: Some(&memo),
    };
    let lookup = || {
        Hiera::new(&config, &source, &NoLog)
            .lookup("k", None, &Hash::default(), None, &Resolution::Array)
            .unwrap()
    };
    let (first, second) = (lookup(), lookup());
    let (Answer::Found(Cow::Borrowed(a)), Answer::Found(Cow::Borrowed(b))) = (&first, &second)
    else {
        panic!("not kept: {first:?} {second:?}");
    };
    assert!(
        std::ptr::eq(*a, *b),
        "the second lookup answers the kept one"
    );
    assert_eq!(crate::wire::to_string(a), r#"["a","b"]"#);
}

fn answer<'d>(config: &Config, source: &Levels<'d>) -> Answer<'d> {
    let mut hiera = Hiera::new(config, source, &NoLog);
    hiera
        .lookup("k", None, &Hash::default(), None, &Resolution::Hash)
        .unwrap()
}

#[test]
fn a_merge_of_final_levels_is_kept_and_answered_borrowed() {
    let doc = |v: &str| {
        let mut inner = Hash::default();
        inner.insert(Value::str(v), Value::str(v));
        let mut h = Hash::default();
        h.insert(Value::str("k"), Value::Hash(inner));
        (Some(h), false)
    };
    let docs = [doc("a"), doc("b"), (None, false), doc("c")];
    let memo = AnswerMemo::new(1 << 20);
    let config = config(docs.len(), "deeper", 1);
    let source = Levels {
        docs: &docs,
        memo: Some(&memo),
    };
    let first = answer(&config, &source);
    let second = answer(&config, &source);
    let (Answer::Found(Cow::Borrowed(a)), Answer::Found(Cow::Borrowed(b))) = (&first, &second)
    else {
        panic!("not kept: {first:?} {second:?}");
    };
    assert!(
        std::ptr::eq(*a, *b),
        "the second lookup answers the kept merge"
    );
    assert_eq!(crate::wire::to_string(a), r#"{"c":"c","b":"b","a":"a"}"#);
    // One level holding the key: its own stored value, nothing merged.
    let one = [doc("a")];
    let source = Levels {
        docs: &one,
        memo: None,
    };
    let config = config_one();
    let got = answer(&config, &source);
    let Answer::Found(Cow::Borrowed(v)) = got else {
        panic!("{got:?}")
    };
    assert!(std::ptr::eq(
        v,
        one[0].0.as_ref().unwrap().get(&Value::str("k")).unwrap()
    ));
}

fn config_one() -> Config {
    config(1, "deep", 1)
}
