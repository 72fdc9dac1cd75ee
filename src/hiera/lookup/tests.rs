//! The walk over the hierarchy: what each kind of data source is asked,
//! and what the lookup answers.

use super::{Answer, DataSource, Fetched, Hiera, NoLog, Outcome, Resolution};
use crate::hiera::config::{BackendKind, Config};
use crate::hiera::value::{Hash, Value};
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
        _: &Value,
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
