//! The walk over the hierarchy: what each kind of data source is asked,
//! and what the lookup answers.

use super::{Answer, DataSource, Fetched, Hiera, NoLog, Outcome, Resolution};
use crate::hiera::config::{BackendKind, Config};
use crate::hiera::hierarchy::Hierarchy;
use crate::hiera::value::{Hash, HashedKey, Value};
use std::borrow::Cow;
use std::cell::RefCell;

/// Every level holds `k`, whose value is the level's name; `pure` says
/// what [`DataSource::pure`] answers. Remembers the levels asked.
struct Everywhere {
    pure: bool,
    asked: RefCell<Vec<String>>,
}

impl DataSource<'static> for Everywhere {
    fn fetch(
        &self,
        _: BackendKind,
        _: &str,
        source: &str,
        _: &HashedKey<'_>,
    ) -> crate::hiera::Result<Fetched<'static>> {
        self.asked.borrow_mut().push(source.to_owned());
        Ok(Fetched::Final(Cow::Owned(Value::str(source))))
    }

    fn pure(&self) -> bool {
        self.pure
    }
}

fn sym(s: &str) -> Value {
    Value::Symbol(s.to_owned())
}

const GOOD: [&str; 3] = ["good", "a/b", "x/y/z"];

/// Bad levels (empty, a leading, trailing or double `/`, on any line)
/// between good ones.
fn config() -> Config {
    let levels = [
        "", "/x", "good", "a//b", "c/", "ok\n/x", "a/b", "x/\nok", "x/y/z",
    ];
    let mut raw = Hash::default();
    raw.insert(sym("backends"), Value::Array(vec![Value::str("yaml")]));
    raw.insert(
        sym("hierarchy"),
        Value::Array(levels.iter().map(|l| Value::str(*l)).collect()),
    );
    Config::load(Value::Hash(raw)).unwrap().0
}

/// Bad levels never answer, whether they are checked before their data
/// is read (any source) or only once they hold the key (a pure source,
/// when nothing is explained); an explained lookup names each one.
#[test]
fn bad_levels_never_answer() {
    let config = config();
    for pure in [false, true] {
        for resolution in [Resolution::Priority, Resolution::Array] {
            for explain in [false, true] {
                let data = Everywhere {
                    pure,
                    asked: RefCell::default(),
                };
                let mut hiera = Hiera::new(&config, &data, &NoLog);
                if explain {
                    hiera = hiera.explain();
                }
                let answer = hiera
                    .lookup("k", None, &Hash::default(), None, &resolution)
                    .unwrap();
                let want = match resolution {
                    Resolution::Array => Value::Array(GOOD.map(Value::str).to_vec()),
                    _ => Value::str(GOOD[0]),
                };
                let case = format!("pure {pure}, {resolution:?}, explain {explain}");
                assert_eq!(answer, Answer::Found(Cow::Owned(want)), "{case}");
                let asked = data.asked.borrow();
                if !pure || explain {
                    assert!(asked.iter().all(|l| GOOD.contains(&&**l)), "{case}");
                }
                let bad = hiera
                    .steps()
                    .iter()
                    .filter(|s| s.outcome == Outcome::BadDefinition)
                    .count();
                // A priority lookup stops at the first good level.
                let walked = match resolution {
                    Resolution::Array => 6,
                    _ => 2,
                };
                assert_eq!(bad, if explain { walked } else { 0 }, "{case}");
            }
        }
    }
}

/// Differential tests of the interpolation fast path (interpolate::plain)
/// at the level of whole lookups: hierarchy levels and datadirs made of
/// every kind of token, data that looks itself up, debug logs and
/// `--explain` steps.
mod fast_path {
    use super::*;
    use crate::hiera::budget::{Budget, Meter};
    use crate::hiera::interpolate::plain::without_fast_path;
    use crate::hiera::lookup::Log;
    use crate::rhash;
    use proptest::prelude::*;

    /// Answers `data[key]` at every level whose name has an odd length
    /// (a String value prefixed with the level's name).
    struct Odd(Hash);

    impl DataSource<'static> for Odd {
        fn fetch(
            &self,
            _: BackendKind,
            datadir: &str,
            source: &str,
            key: &HashedKey<'_>,
        ) -> crate::hiera::Result<Fetched<'static>> {
            if source.len() % 2 == 0 {
                return Ok(Fetched::NoKey);
            }
            Ok(match self.0.get(key.value()) {
                Some(Value::String(s)) => {
                    Fetched::Found(Cow::Owned(Value::str(format!("{datadir}:{source}:{s}"))))
                }
                Some(other) => Fetched::Found(Cow::Owned(other.clone())),
                None => Fetched::NoKey,
            })
        }
    }

    /// Every message, in order.
    #[derive(Default)]
    struct Kept(RefCell<Vec<String>>);

    impl Log for Kept {
        fn debug(&self, message: &str) {
            self.0.borrow_mut().push(format!("debug {message}"));
        }
        fn warn(&self, message: &str) {
            self.0.borrow_mut().push(format!("warn {message}"));
        }
    }

    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z/]{0,3}",
            (0..3u8).prop_map(|k| format!("%{{v{k}}}")),
            (0..3u8).prop_map(|k| format!("%{{::v{k}}}")),
            (0..3u8).prop_map(|k| format!("%{{scope('v{k}')}}")),
            (0..3u8).prop_map(|k| format!("%{{hiera('d{k}')}}")),
            (0..3u8).prop_map(|k| format!("%{{alias('d{k}')}}")),
            prop::sample::select(vec![
                "%{}",
                "%{::}",
                "%{literal('%')}",
                "%{v1.x}",
                "%{",
                "/",
                "%{nope}",
            ])
            .prop_map(str::to_owned),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(piece(), 0..4).prop_map(|p| p.concat())
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            4 => text().prop_map(Value::String),
            1 => Just(Value::Nil),
            1 => any::<i64>().prop_map(Value::Int),
            1 => Just(Value::Array(vec!["a".into(), Value::Int(1)])),
        ]
    }

    /// (hierarchy, datadir, scope, data)
    fn world() -> impl Strategy<Value = (Vec<String>, String, Hash, Hash)> {
        (
            prop::collection::vec(text(), 1..6),
            text(),
            prop::collection::vec((0..6u8, value()), 0..6),
            prop::collection::vec(value(), 3),
        )
            .prop_map(|(levels, datadir, entries, data)| {
                let mut scope = Hash::default();
                for (name, v) in entries {
                    let name = match name {
                        0..=2 => format!("v{name}"),
                        n => format!("::v{}", n - 3),
                    };
                    scope.insert(Value::str(name), v);
                }
                let data = data
                    .into_iter()
                    .enumerate()
                    .map(|(k, v)| (Value::str(format!("d{k}")), v))
                    .collect();
                (levels, datadir, scope, data)
            })
    }

    fn config(levels: &[String], datadir: &str, json: bool) -> Config {
        let backend = if json { "json" } else { "yaml" };
        let raw = rhash! {
            sym("backends") => Value::Array(vec![Value::str(backend)]),
            sym("hierarchy") => Value::Array(levels.iter().map(|l| Value::str(l.as_str())).collect()),
            sym(backend) => Value::Hash(rhash! {sym("datadir") => Value::str(datadir)}),
        };
        Config::load(Value::Hash(raw)).unwrap().0
    }

    /// Everything a lookup shows: its answer or error, its steps, its log
    /// and what it spent.
    fn seen(
        config: &Config,
        (scope, data): (&Hash, &Hash),
        (resolution, debug, explain, budget): (&Resolution, bool, bool, Budget),
        (order, compiled): (Option<&Value>, Option<&Hierarchy>),
    ) -> String {
        let source = Odd(data.clone());
        let kept = Kept::default();
        let log: &dyn Log = if debug { &kept } else { &NoLog };
        let mut hiera = Hiera::new(config, &source, log).budget(Meter::new(budget));
        if let Some(compiled) = compiled {
            hiera = hiera.hierarchy(compiled);
        }
        if explain {
            hiera = hiera.explain();
        }
        let answer = hiera.lookup("d0", None, scope, order, resolution);
        format!(
            "{answer:?}\n{:?}\n{:?}\n{:?}",
            hiera.steps(),
            kept.0.borrow(),
            hiera.meter()
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        #[test]
        fn lookups_agree_with_and_without_the_fast_path(
            (levels, datadir, scope, data) in world(),
            json in any::<bool>(),
            array in any::<bool>(),
            debug in any::<bool>(),
            explain in any::<bool>(),
            tight in any::<bool>(),
            order in prop::option::of(text()),
        ) {
            let order = order.map(Value::String);
            let order = order.as_ref();
            let config = config(&levels, &datadir, json);
            let resolution = if array { Resolution::Array } else { Resolution::Priority };
            let budget = if tight { Budget { steps: 6, bytes: 300 } } else { Budget::DEFAULT };
            let how = (&resolution, debug, explain, budget);
            let fast = seen(&config, (&scope, &data), how, (order, None));
            let general = without_fast_path(|| seen(&config, (&scope, &data), how, (order, None)));
            // The same hierarchy compiled (its templates worked out once,
            // as a registered one is): the same answers, logs and charge.
            let compiled = Hierarchy::new(config.hierarchy.clone());
            let templates = seen(&config, (&scope, &data), how, (order, Some(&compiled)));
            prop_assert_eq!(&fast, &general);
            prop_assert_eq!(&templates, &general);
            // With the fast path off, compiled levels take the general path.
            let off = without_fast_path(|| {
                seen(&config, (&scope, &data), how, (order, Some(&compiled)))
            });
            prop_assert_eq!(off, general);
        }
    }
}
