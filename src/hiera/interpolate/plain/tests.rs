//! The fast path against the general path: the same Value or error, the
//! same warnings, the same meter, over generated templates and scopes.

use super::*;
use crate::hiera::budget::{Budget, Meter};
use crate::hiera::error::Result;
use crate::hiera::interpolate::{Context, interpolate_str};
use crate::rhash;
use proptest::prelude::*;

/// A resolver over one flat Hash of data (`hiera()`/`alias()` read it),
/// remembering its warnings.
struct Flat {
    data: Hash,
    warnings: Vec<String>,
    meter: Meter,
}

impl Resolver for Flat {
    fn nested_lookup(&mut self, key: &str, scope: &Hash, context: &mut Context) -> Result<Value> {
        match self.data.get(&Value::str(key)).cloned() {
            Some(Value::String(s)) => interpolate_str(&s, scope, context, self),
            Some(other) => Ok(other),
            None => Ok(Value::Nil),
        }
    }
    fn warn(&mut self, message: &str) {
        self.warnings.push(message.to_owned());
    }
    fn meter(&mut self) -> &mut Meter {
        &mut self.meter
    }
}

/// Everything one interpolation shows: its answer (or error's class and
/// message), its warnings and what it spent.
type Seen = (
    std::result::Result<Value, (crate::hiera::ErrorClass, String)>,
    Vec<String>,
    String,
);

fn run(text: &str, scope: &Hash, data: &Hash, context: &Context, budget: Budget) -> Seen {
    let mut r = Flat {
        data: data.clone(),
        warnings: vec![],
        meter: Meter::new(budget),
    };
    let got = interpolate_str(text, scope, context, &mut r).map_err(|e| (e.class, e.message));
    (got, r.warnings, format!("{:?}", r.meter))
}

fn shim_scope() -> Hash {
    rhash! {"::fqdn" => "node-1.domain.tld", "calling_class" => "nova::api", "calling_module" => "nova"}
}

/// The fast path answers for the shapes it is for, and only for them.
#[test]
fn fast_path_takes_plain_scope_variables() {
    let scope = rhash! {
        "::fqdn" => "n1", "fqdn" => "f", "n" => 42, "t" => Value::Bool(true),
        "nil" => Value::Nil, "arr" => Value::Array(vec!["a".into()]),
        "tok" => "%{fqdn}", "open" => "50%{ off", "sym" => Value::Symbol("s".into()),
    };
    let taken: &[(&str, &str)] = &[
        ("override/node/%{::fqdn}", "override/node/n1"),
        ("globals%{disable_globals_yaml}", "globals"),
        ("%{fqdn}-%{scope('fqdn')}-%{scope(\"::fqdn\")}", "f-f-n1"),
        ("%{n}/%{t}/%{nil}/%{arr}/%{sym}", "42/true//[\"a\"]/s"),
        ("x%{}y%{::}%{''}%{ }", "xy"),
        ("%{open}", "50%{ off"),
        ("%{fqdn}%{fqdn}%{fqdn", "ff%{fqdn"),
        ("%%{fqdn}}", "%f}"),
    ];
    for (template, want) in taken {
        let mut r = Flat {
            data: Hash::default(),
            warnings: vec![],
            meter: Meter::new(Budget::UNLIMITED),
        };
        assert_eq!(
            expand(template, &scope, None, false, &mut r).as_deref(),
            Some(*want),
            "{template:?}"
        );
    }
    let general = [
        "%{tok}",
        "%{hiera('k')}",
        "%{alias('k')}",
        "%{literal('%')}",
        "%{a.b}",
        "%{'fqdn'}",
        "%{0}",
        "%{scope(fqdn)}",
        "%{lookup('k')}",
        "%{fqdn\n}",
        "%{fqdn} %{hiera('k')}",
    ];
    for template in general {
        let mut r = Flat {
            data: Hash::default(),
            warnings: vec![],
            meter: Meter::new(Budget::UNLIMITED),
        };
        assert_eq!(
            expand(template, &scope, None, false, &mut r),
            None,
            "{template:?}"
        );
        assert!(r.warnings.is_empty());
        assert_eq!(
            format!("{:?}", r.meter),
            format!("{:?}", Meter::new(Budget::UNLIMITED))
        );
    }
    // A variable on the recursion guard, or a budget without room: the
    // general path (and its error).
    let guard: Guard = Guard::default();
    guard.borrow_mut().push("fqdn".to_owned());
    let mut r = Flat {
        data: Hash::default(),
        warnings: vec![],
        meter: Meter::new(Budget::UNLIMITED),
    };
    assert_eq!(
        expand("%{::fqdn}", &scope, Some(&guard), true, &mut r).as_deref(),
        Some("n1")
    );
    assert_eq!(
        expand("a/%{fqdn}", &scope, Some(&guard), true, &mut r),
        None
    );
    let tight = Budget {
        steps: 1,
        bytes: 1_000,
    };
    r.meter = Meter::new(tight);
    assert_eq!(expand("%{fqdn}%{fqdn}", &scope, None, false, &mut r), None);
    // Every level of the shim's hierarchy is taken.
    r.meter = Meter::new(Budget::DEFAULT);
    for level in crate::bench::generate::HIERARCHY {
        let got = expand(level, &shim_scope(), None, true, &mut r);
        assert!(!has_token(level) || got.is_some(), "{level}");
    }
}

/// Pieces of templates and of scope values: text, every kind of token,
/// broken ones.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z/ %{}.]{0,4}",
        (0..4u8).prop_map(|k| format!("%{{v{k}}}")),
        (0..4u8).prop_map(|k| format!("%{{::v{k}}}")),
        (0..4u8).prop_map(|k| format!("%{{scope('v{k}')}}")),
        (0..4u8).prop_map(|k| format!("%{{scope(\"::v{k}\")}}")),
        (0..4u8).prop_map(|k| format!("%{{hiera('d{k}')}}")),
        (0..4u8).prop_map(|k| format!("%{{alias('d{k}')}}")),
        Just("%{literal('%')}".to_owned()),
        Just("%{literal('%')}{v1}".to_owned()),
        prop::sample::select(vec![
            "%{}",
            "%{::}",
            "%{''}",
            "%{\"::\"}",
            "%{ }",
            "%{\n}",
            "%{",
            "}",
            "%{v1.x}",
            "%{0}",
            "%{:}",
            "%{::0}",
            "%{1a}",
            "%{'v1'}",
            "%{scope(v1)}",
            "%{lookup('d1')}",
            "%{ v1 }",
            "%{v1\n}",
            "%{hiera('v1')}",
            "\n",
            "%{nope}",
            "%{::nope}",
        ])
        .prop_map(str::to_owned),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..6).prop_map(|p| p.concat())
}

/// A scope or data value: mostly text (which may hold tokens), and every
/// other kind of value.
fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => text().prop_map(Value::String),
        1 => Just(Value::Nil),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => any::<i64>().prop_map(Value::Int),
        1 => Just(Value::Float(1.5)),
        1 => Just(Value::Symbol("sym".into())),
        1 => Just(Value::Array(vec!["a".into(), Value::Int(1)])),
        1 => Just(Value::Hash(rhash! {"x" => Value::Array(vec!["p".into()])})),
    ]
}

/// Four variables, each under its plain name, its `::` name or both
/// (absent ones are unknown variables), and four data keys.
fn scope_and_data() -> impl Strategy<Value = (Hash, Hash)> {
    let entries = prop::collection::vec((0..4u8, value()), 0..8);
    let data = prop::collection::vec(value(), 4);
    (entries, data).prop_map(|(entries, data)| {
        let mut scope = Hash::default();
        for (name, v) in entries {
            let name = match name {
                0 | 1 => format!("v{name}"),
                n => format!("::v{}", n - 2),
            };
            scope.insert(Value::str(name), v);
        }
        let data = data
            .into_iter()
            .enumerate()
            .map(|(k, v)| (Value::str(format!("d{k}")), v))
            .collect();
        (scope, data)
    })
}

fn budget() -> impl Strategy<Value = Budget> {
    prop_oneof![
        Just(Budget::UNLIMITED),
        (0..12u64, 0..200u64).prop_map(|(steps, bytes)| Budget { steps, bytes }),
    ]
}

/// A context as interpolation meets it: fresh, or inside a configuration
/// lookup, or with a guard already holding a variable.
fn context() -> impl Strategy<Value = Context> {
    (any::<bool>(), prop::option::of(prop::option::of(0..4u8))).prop_map(|(config, guard)| {
        Context {
            order_override: None,
            guard: guard.map(|held| {
                let guard = Guard::default();
                if let Some(k) = held {
                    guard.borrow_mut().push(format!("v{k}"));
                }
                guard
            }),
            is_interpolate_config: config,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// With or without the fast path, interpolation gives the same Value or
    /// error, logs the same warnings and spends the same budget.
    #[test]
    fn fast_and_general_paths_agree(
        template in text(),
        (scope, data) in scope_and_data(),
        context in context(),
        budget in budget(),
    ) {
        let fresh = |c: &Context| Context {
            guard: c.guard.as_ref().map(|g| std::rc::Rc::new(g.as_ref().clone())),
            ..c.clone()
        };
        let fast = run(&template, &scope, &data, &fresh(&context), budget);
        let general =
            without_fast_path(|| run(&template, &scope, &data, &fresh(&context), budget));
        prop_assert_eq!(fast, general, "{:?} in {:?}", template, scope);
    }
}

/// What [`expand`] or a [`Template`] of the same String shows: its answer,
/// warnings and what it spent.
fn fast(
    template: Option<&Template>,
    text: &str,
    scope: &Hash,
    guard: Option<&Guard>,
    budget: Budget,
) -> (Option<String>, Vec<String>, String) {
    let mut r = Flat {
        data: Hash::default(),
        warnings: vec![],
        meter: Meter::new(budget),
    };
    let got = match template {
        // Into a buffer holding an earlier level's name, as a walk
        // expands its levels into one.
        Some(template) => {
            let mut out = String::from("an/earlier/level/%{::fqdn}");
            (template.expand_into(text, scope, guard, true, &mut r, &mut out)).map(|()| out)
        }
        None => expand(text, scope, guard, true, &mut r),
    };
    (got, r.warnings, format!("{:?}", r.meter))
}

/// Templates made of the shim's levels: text, variables, and nothing for
/// empty tokens; a level with a token the fast path declines is General.
#[test]
fn templates_classify_once() {
    let scope = shim_scope();
    assert_eq!(Template::of(&Value::str("globals")), Template::Plain);
    assert_eq!(Template::of(&Value::str("50%{ off")), Template::Plain);
    assert_eq!(Template::of(&Value::Int(1)), Template::General);
    assert_eq!(
        Template::of(&Value::str("a/%{hiera('k')}/%{::fqdn}")),
        Template::General
    );
    assert_eq!(
        Template::of(&Value::str("n/%{::fqdn}%{}/%{scope('calling_class')}")),
        Template::Scope(
            vec![
                Piece::Text(0..2),
                Piece::Variable {
                    variable: 4..10,
                    key: 4..10,
                    hash: ValueState.hash_one(Value::str("::fqdn")),
                    method: false
                },
                Piece::Text(14..15),
                Piece::Variable {
                    variable: 17..39,
                    key: 24..37,
                    hash: ValueState.hash_one(Value::str("calling_class")),
                    method: true
                },
            ]
            .into()
        )
    );
    for level in crate::bench::generate::HIERARCHY {
        let template = Template::of(&Value::str(level));
        assert_ne!(template, Template::General, "{level}");
        let compiled = fast(Some(&template), level, &scope, None, Budget::DEFAULT);
        let want = match has_token(level) {
            true => fast(None, level, &scope, None, Budget::DEFAULT),
            false => (Some(level.to_string()), vec![], compiled.2.clone()),
        };
        assert_eq!(compiled, want, "{level}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// A String's template expands as [`expand`] expands the String: the
    /// same answer (or the same refusal, having done nothing), the same
    /// warnings and charge, whatever the scope, guard and budget.
    #[test]
    fn templates_expand_as_the_fast_path(
        text in text(),
        (scope, _) in scope_and_data(),
        context in context(),
        budget in budget(),
    ) {
        let template = Template::of(&Value::str(text.as_str()));
        let guard = context.guard.as_ref();
        let compiled = fast(Some(&template), &text, &scope, guard, budget);
        if has_token(&text) {
            prop_assert_eq!(compiled, fast(None, &text, &scope, guard, budget));
        } else {
            prop_assert_eq!(template, Template::Plain);
            prop_assert_eq!(compiled.0, Some(text));
        }
    }
}
