//! `%{…}` interpolation (`Hiera::Interpolate`): scope variables, `hiera()`,
//! `alias()`, `literal()`, the re-interpolation of token values, and the
//! recursion guard with its 3.10 quirks (§5 of the spec).
//!
//! Nested lookups go through the [`Resolver`] the caller passes in, so this
//! module stays pure; so does the lookup's [`Meter`], charged for every
//! token evaluated and every byte built.

use super::budget::Meter;
use super::error::{ErrorClass, HieraError, Result};
use super::key::{is_index, qualified_lookup, split_key};
use super::render::ruby::to_s;
use super::value::{Hash, Value};
use std::cell::RefCell;
use std::rc::Rc;

pub(crate) mod plain;

/// Hiera's `RecursiveGuard`: the stack of token contents being evaluated.
/// Shared by reference, like the Ruby object, between a context and the
/// clones made for nested lookups.
pub(crate) type Guard = Rc<RefCell<Vec<String>>>;

/// The `context` Hash Hiera threads through lookups and interpolation.
#[derive(Clone, Debug, Default)]
pub(crate) struct Context {
    /// The order override of the lookup that started it all; nested
    /// `hiera()`/`alias()` lookups inherit it.
    pub(crate) order_override: Option<Value>,
    /// Absent at the start of a lookup; each interpolated string then gets
    /// a fresh one, which the lookups nested inside it share.
    pub(crate) guard: Option<Guard>,
    /// Set while hierarchy levels and datadirs are interpolated: method
    /// calls there log a deprecation warning.
    pub(crate) is_interpolate_config: bool,
}

/// What interpolation needs from the lookup engine.
pub(crate) trait Resolver {
    /// A nested priority lookup (`hiera('k')`, `alias('k')`): Hiera's
    /// `Backend.lookup(key, nil, scope, order_override, :priority, context)`,
    /// returning nil when nothing is found.
    ///
    /// # Errors
    ///
    /// Whatever the nested lookup raises.
    fn nested_lookup(&mut self, key: &str, scope: &Hash, context: &mut Context) -> Result<Value>;

    /// `Hiera.warn`.
    fn warn(&mut self, message: &str);

    /// The budget of the lookup being interpolated for.
    fn meter(&mut self) -> &mut Meter;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Scope,
    Hiera,
    Literal,
    Alias,
}

/// `Hiera::Interpolate.interpolate`: a String has each token replaced by
/// its value's `to_s`; any other value is returned unchanged. A lone
/// `alias()` token whose value is not a String returns that value itself.
///
/// # Errors
///
/// The `Hiera::Interpolation*` errors, and errors of nested lookups.
pub(crate) fn interpolate(
    data: &Value,
    scope: &Hash,
    context: &Context,
    resolver: &mut dyn Resolver,
) -> Result<Value> {
    match data {
        Value::String(s) => interpolate_str(s, scope, context, resolver),
        other => Ok(other.clone()),
    }
}

/// [`interpolate`] for a String.
///
/// # Errors
///
/// As [`interpolate`].
pub(crate) fn interpolate_str(
    data: &str,
    scope: &Hash,
    context: &Context,
    resolver: &mut dyn Resolver,
) -> Result<Value> {
    let Some(first) = next_token(data, 0) else {
        return Ok(Value::str(data));
    };
    let guard = context.guard.as_ref();
    if let Some(out) = plain::expand(data, scope, guard, context.is_interpolate_config, resolver) {
        return Ok(Value::String(out));
    }
    interpolate_tokens(data, first, scope, context, resolver)
}

/// [`interpolate`] past the fast path, for a caller that has just tried
/// [`plain::expand`] with the same scope, guard and configuration flag
/// (it would answer `None` again: it charges, logs and builds nothing
/// when it declines).
///
/// # Errors
///
/// As [`interpolate`].
pub(crate) fn interpolate_general(
    data: &Value,
    scope: &Hash,
    context: &Context,
    resolver: &mut dyn Resolver,
) -> Result<Value> {
    match data {
        Value::String(s) => match next_token(s, 0) {
            Some(first) => interpolate_tokens(s, first, scope, context, resolver),
            None => Ok(Value::str(s)),
        },
        other => Ok(other.clone()),
    }
}

/// The general path of [`interpolate_str`], from the `first` token of
/// `data`.
fn interpolate_tokens(
    data: &str,
    first: (usize, usize),
    scope: &Hash,
    context: &Context,
    resolver: &mut dyn Resolver,
) -> Result<Value> {
    let mut context = context.clone();
    context.guard.get_or_insert_with(Default::default);
    let mut out = String::with_capacity(data.len());
    let mut copied = 0;
    let mut token = Some(first);
    while let Some((start, end)) = token {
        let literal = &data[copied..start];
        resolver.meter().bytes(literal.len())?;
        out.push_str(literal);
        let (value, method) = do_interpolation(
            &Value::str(&data[start..end]),
            scope,
            &mut context,
            resolver,
        )?;
        if method == Some(Method::Alias) && !matches!(value, Value::String(_)) {
            if only_interpolation(data) {
                // The value is a copy, as large as what it aliases.
                resolver.meter().value(&value)?;
                return Ok(value);
            }
            return Err(HieraError::new(
                ErrorClass::InterpolationInvalidValue,
                "Cannot call alias in the string context",
            ));
        }
        let text = match value {
            Value::String(s) => s,
            other => to_s(&other),
        };
        resolver.meter().bytes(text.len())?;
        if out.is_empty() {
            out = text;
        } else {
            out.push_str(&text);
        }
        copied = end;
        token = next_token(data, end);
    }
    let tail = &data[copied..];
    resolver.meter().bytes(tail.len())?;
    out.push_str(tail);
    Ok(Value::String(out))
}

/// True when a String contains a `%{…}` token, i.e. interpolation could
/// change it.
pub(crate) fn has_token(data: &str) -> bool {
    next_token(data, 0).is_some()
}

/// The next match of `/%\{([^\}]*)\}/` at or after `from`: (start, end).
fn next_token(data: &str, from: usize) -> Option<(usize, usize)> {
    // memchr: every String of every answer passes here, and `str::find`
    // with a two-byte pattern sets up a searcher per call, which costs
    // more than most Strings take to scan.
    let bytes = data.as_bytes();
    let mut at = from;
    let start = loop {
        let percent = at + memchr::memchr(b'%', bytes.get(at..)?)?;
        if bytes.get(percent + 1) == Some(&b'{') {
            break percent;
        }
        at = percent + 1;
    };
    // Without a `}` after this `%{`, no later `%{` can close either.
    let close = memchr::memchr(b'}', &bytes[start + 2..])?;
    Some((start, start + 2 + close + 1))
}

/// `RX_ONLY_INTERPOLATION = /^%\{([^\}]*)\}$/`, with Ruby's line anchors:
/// true when any line of `data` is one whole token.
fn only_interpolation(data: &str) -> bool {
    data.split('\n').any(|line| {
        line.len() >= 3
            && line.starts_with("%{")
            && line.ends_with('}')
            && !line[2..line.len() - 1].contains('}')
    })
}

/// Ruby's `String#strip` (whitespace and NUL at both ends).
fn ruby_strip(s: &str) -> &str {
    s.trim_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r', '\0'])
}

const EMPTY_INTERPOLATIONS: [&str; 6] = ["", "::", "\"\"", "''", "\"::\"", "'::'"];

/// `do_interpolation`: evaluates the FIRST token of `data` (if it is a
/// String with one) and returns its fully re-interpolated value, which
/// replaces the whole of `data` (trap 9 of §13).
fn do_interpolation(
    data: &Value,
    scope: &Hash,
    context: &mut Context,
    resolver: &mut dyn Resolver,
) -> Result<(Value, Option<Method>)> {
    let Value::String(text) = data else {
        return Ok((data.clone(), None));
    };
    let Some((start, end)) = next_token(text, 0) else {
        return Ok((data.clone(), None));
    };
    let token = &text[start..end];
    let variable = &token[2..token.len() - 1];
    if EMPTY_INTERPOLATIONS.contains(&ruby_strip(variable)) {
        return Ok((Value::str(""), None));
    }
    resolver.meter().step()?;
    let guard = context.guard.clone().unwrap_or_default();
    {
        let mut seen = guard.borrow_mut();
        if seen.iter().any(|s| s == variable) {
            return Err(HieraError::new(
                ErrorClass::InterpolationLoop,
                format!("Lookup recursion detected in [{}]", seen.join(", ")),
            ));
        }
        seen.push(variable.to_owned());
    }
    let (method, key) = method_and_key(variable, context, resolver)?;
    let value = match method {
        Method::Scope => scope_interpolate(token, &key, scope)?,
        Method::Hiera | Method::Alias => resolver.nested_lookup(&key, scope, context)?,
        // 3.10 returns from inside the guard's block here, so the entry is
        // never popped: the bug §5.6 describes, reproduced on purpose.
        Method::Literal => return Ok((Value::String(key), Some(method))),
    };
    let (value, _) = do_interpolation(&value, scope, context, resolver)?;
    guard.borrow_mut().pop();
    Ok((value, Some(method)))
}

/// `get_interpolation_method_and_key`.
fn method_and_key(
    variable: &str,
    context: &Context,
    resolver: &mut dyn Resolver,
) -> Result<(Method, String)> {
    let Some((name, arg)) = variable.split('\n').find_map(method_call) else {
        return Ok((Method::Scope, variable.to_owned()));
    };
    if context.is_interpolate_config {
        resolver.warn("Use of interpolation methods in hiera configuration file is deprecated");
    }
    let method = match name {
        "hiera" => Method::Hiera,
        "scope" => Method::Scope,
        "literal" => Method::Literal,
        "alias" => Method::Alias,
        _ => {
            return Err(HieraError::new(
                ErrorClass::InterpolationInvalidValue,
                format!("Invalid interpolation method '{name}'"),
            ));
        }
    };
    match arg.split('\n').find_map(quoted_key) {
        Some(key) => Ok((method, key.to_owned())),
        None => Err(HieraError::new(
            ErrorClass::InterpolationInvalidValue,
            format!("Argument to interpolation method '{name}' must be quoted, got '{arg}'"),
        )),
    }
}

/// One line against `RX_METHOD_AND_ARG = /^(\w+)\(([^)]*)\)$/`.
fn method_call(line: &str) -> Option<(&str, &str)> {
    let open = line.find('(')?;
    let name = &line[..open];
    let rest = line[open + 1..].strip_suffix(')')?;
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    (!name.is_empty() && name.chars().all(word) && !rest.contains(')')).then_some((name, rest))
}

/// One line against `QUOTED_KEY = /^(?:"([^"]+)"|'([^']+)')$/`.
fn quoted_key(line: &str) -> Option<&str> {
    ['"', '\''].into_iter().find_map(|q| {
        let inner = line.strip_prefix(q)?.strip_suffix(q)?;
        (!inner.is_empty() && !inner.contains(q)).then_some(inner)
    })
}

/// `scope_interpolate`: a (possibly dotted) variable read from the scope;
/// nil when absent.
fn scope_interpolate(token: &str, key: &str, scope: &Hash) -> Result<Value> {
    let segments = split_key(key).ok_or_else(|| {
        HieraError::new(
            ErrorClass::InterpolationInvalidValue,
            format!("Syntax error in interpolation expression: {token}"),
        )
    })?;
    // The scope is a Hash: the first segment is looked up in it directly
    // (copying the whole scope into a Value for each token made a token's
    // cost grow with the request's scope). An index segment raises the
    // same error for any Hash, so it goes the general way, on an empty one.
    let empty = Value::Hash(Hash::default());
    let found = match segments.split_first() {
        None => return Ok(Value::Hash(scope.clone())),
        Some((first, rest)) if !is_index(first) => match scope.get(&Value::str(*first)) {
            Some(v) => qualified_lookup(rest, v, Some(key))?,
            None => None,
        },
        Some(_) => qualified_lookup(&segments, &empty, Some(key))?,
    };
    if let Some(v) = found {
        return Ok(v.clone());
    }
    // Hiera retries against `extra_data`, always `{}` on lookup paths; that
    // retry can still raise for a numeric first segment.
    Ok(qualified_lookup(&segments, &empty, Some(key))?
        .cloned()
        .unwrap_or(Value::Nil))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hiera::budget::{Budget, Limit};
    use crate::rhash;

    /// A resolver over one flat Hash of data, with no hierarchy.
    struct Flat(Hash, Vec<String>, Meter);

    fn flat(data: Hash) -> Flat {
        Flat(
            data,
            vec![],
            Meter::new(crate::hiera::budget::Budget::UNLIMITED),
        )
    }

    impl Resolver for Flat {
        fn nested_lookup(
            &mut self,
            key: &str,
            scope: &Hash,
            context: &mut Context,
        ) -> Result<Value> {
            match self.0.get(&Value::str(key)).cloned() {
                Some(Value::String(s)) => interpolate_str(&s, scope, context, self),
                Some(other) => Ok(other),
                None => Ok(Value::Nil),
            }
        }
        fn warn(&mut self, message: &str) {
            self.1.push(message.to_owned());
        }
        fn meter(&mut self) -> &mut Meter {
            &mut self.2
        }
    }

    fn data() -> Hash {
        rhash! {
            "k" => "v",
            "n" => 42,
            "arr" => Value::Array(vec!["a".into(), "b".into()]),
            "self" => "%{hiera('self')}",
            "loop_a" => "%{hiera('loop_b')}",
            "loop_b" => "x-%{hiera('loop_a')}",
            "lit" => "%{literal('%')}{a}",
            "lit2" => "a%{literal('%')}{fqdn}b",
        }
    }

    fn scope() -> Hash {
        rhash! {
            "fqdn" => "n1",
            "::fqdn" => "top",
            "t" => Value::Bool(false),
            "nested" => Value::Hash(rhash! {"x" => Value::Array(vec!["p".into(), "q".into()])}),
            "rec" => "x %{int} y",
            "int" => 42,
            "sl1" => "%{sl2}",
            "sl2" => "%{sl1}",
        }
    }

    fn run(text: &str) -> Result<Value> {
        let mut r = flat(data());
        interpolate_str(text, &scope(), &Context::default(), &mut r)
    }

    #[test]
    fn interpolation_table() {
        let cases: &[(&str, Value)] = &[
            ("plain", "plain".into()),
            ("%{fqdn}", "n1".into()),
            ("%{::fqdn}", "top".into()),
            ("%{scope('fqdn')}-%{scope(\"fqdn\")}", "n1-n1".into()),
            ("%{missing}!", "!".into()),
            ("%{t}", "false".into()),
            ("%{nested.x.1}", "q".into()),
            ("%{}%{::}%{''}%{\"::\"}", "".into()),
            ("%%{}{x}", "%{x}".into()),
            ("%{hiera('k')}-%{hiera('k')}", "v-v".into()),
            ("%{hiera('n')}", "42".into()),
            ("%{hiera('arr')}", "[\"a\", \"b\"]".into()),
            (
                "%{alias('arr')}",
                Value::Array(vec!["a".into(), "b".into()]),
            ),
            ("%{alias('n')}", Value::Int(42)),
            ("%{alias('none')}", Value::Nil),
            ("pre %{alias('k')}", "pre v".into()),
            (
                "line\n%{alias('arr')}",
                Value::Array(vec!["a".into(), "b".into()]),
            ),
            ("%{literal('%')}{fqdn}", "%{fqdn}".into()),
            ("[%{rec}]", "[42]".into()),
            ("<%{hiera('lit2')}>", "<n1>".into()),
            ("%{fqdn", "%{fqdn".into()),
            ("%{a%{fqdn}", "".into()),
        ];
        for (text, want) in cases {
            assert_eq!(&run(text).unwrap(), want, "{text:?}");
        }
    }

    #[test]
    fn interpolation_errors() {
        let cases: &[(&str, ErrorClass, &str)] = &[
            (
                "%{hiera('self')}",
                ErrorClass::InterpolationLoop,
                "Lookup recursion detected in [hiera('self')]",
            ),
            (
                "%{hiera('loop_a')}",
                ErrorClass::InterpolationLoop,
                "Lookup recursion detected in [hiera('loop_a'), hiera('loop_b')]",
            ),
            (
                "%{sl1}",
                ErrorClass::InterpolationLoop,
                "Lookup recursion detected in [sl1, sl2]",
            ),
            (
                "x %{alias('arr')}",
                ErrorClass::InterpolationInvalidValue,
                "Cannot call alias in the string context",
            ),
            (
                "%{lookup('k')}",
                ErrorClass::InterpolationInvalidValue,
                "Invalid interpolation method 'lookup'",
            ),
            (
                "%{hiera(k)}",
                ErrorClass::InterpolationInvalidValue,
                "Argument to interpolation method 'hiera' must be quoted, got 'k'",
            ),
            (
                "%{ hiera('x') }",
                ErrorClass::InterpolationInvalidValue,
                "Syntax error in interpolation expression: %{ hiera('x') }",
            ),
            (
                "%{literal('%')}%{literal('%')}",
                ErrorClass::InterpolationLoop,
                "Lookup recursion detected in [literal('%')]",
            ),
            (
                "%{hiera('lit')}-%{hiera('lit')}",
                ErrorClass::InterpolationLoop,
                "Lookup recursion detected in [hiera('lit')]",
            ),
            (
                "%{fqdn.x}",
                ErrorClass::Exception,
                "Hiera type mismatch: Got String when a hash-like object was expected to access value using 'x' from key 'fqdn.x'",
            ),
        ];
        for (text, class, message) in cases {
            let err = run(text).unwrap_err();
            assert_eq!(
                (err.class, err.message.as_str()),
                (*class, *message),
                "{text:?}"
            );
        }
    }

    #[test]
    fn methods_in_config_warn() {
        let mut r = flat(data());
        let context = Context {
            is_interpolate_config: true,
            ..Context::default()
        };
        let got = interpolate_str("roles/%{hiera('k')}", &scope(), &context, &mut r).unwrap();
        assert_eq!(got, Value::str("roles/v"));
        assert_eq!(
            r.1,
            ["Use of interpolation methods in hiera configuration file is deprecated"]
        );
    }

    /// Ten tokens of the level below at each level: `e1` is "ab", `e2`
    /// ten `%{hiera('e1')}`, …: each level ten times the lookups below.
    fn fan_out() -> Hash {
        let mut data = rhash! {"e1" => "ab"};
        for level in 2..=6 {
            let token = format!("%{{hiera('e{}')}}", level - 1);
            data.insert(
                Value::str(format!("e{level}")),
                Value::str(token.repeat(10)),
            );
        }
        data
    }

    fn run_on(text: &str, data: Hash, budget: Budget) -> Result<Value> {
        let mut r = Flat(data, vec![], Meter::new(budget));
        interpolate_str(text, &scope(), &Context::default(), &mut r)
    }

    #[test]
    fn budgets_refuse_fan_out_and_count_exactly() {
        let unlimited = Budget::UNLIMITED;
        let steps = |steps| Budget { steps, ..unlimited };
        let bytes = |bytes| Budget { bytes, ..unlimited };
        let class = |r: Result<Value>| r.map_err(|e| e.class);
        // e2: its token, then ten of e1: 11 steps; 2 bytes ten times into
        // e2's String, and those 20 into the outer one.
        assert_eq!(
            run_on("%{hiera('e2')}", fan_out(), steps(11)).unwrap(),
            Value::str("ab".repeat(10))
        );
        assert_eq!(
            class(run_on("%{hiera('e2')}", fan_out(), steps(10))),
            Err(ErrorClass::StepBudgetExceeded)
        );
        assert!(run_on("%{hiera('e2')}", fan_out(), bytes(40)).is_ok());
        assert_eq!(
            class(run_on("%{hiera('e2')}", fan_out(), bytes(39))),
            Err(ErrorClass::ByteBudgetExceeded)
        );
        // 111,111 steps and a 2 MB answer: refused by either limit, well
        // before the work is done.
        let err = run_on("%{hiera('e6')}", fan_out(), Budget::DEFAULT).unwrap_err();
        assert_eq!(err.class, ErrorClass::StepBudgetExceeded, "{err}");
        let err = run_on("%{hiera('e6')}", fan_out(), bytes(100_000)).unwrap_err();
        assert_eq!(err.class, ErrorClass::ByteBudgetExceeded, "{err}");
        // Within the budget, the answer is the unlimited one.
        assert_eq!(
            run_on("x%{hiera('e4')}y", fan_out(), Budget::DEFAULT),
            run_on("x%{hiera('e4')}y", fan_out(), unlimited)
        );
        // alias() copies count what they copy.
        let data = rhash! {"arr" => Value::Array(vec![Value::str("abcd"); 4])};
        let err = run_on("%{alias('arr')}", data.clone(), bytes(64)).unwrap_err();
        assert_eq!(err.class, ErrorClass::ByteBudgetExceeded, "{err}");
        assert!(run_on("%{alias('arr')}", data, bytes(1024)).is_ok());
    }

    #[test]
    fn scope_tokens_read_the_scope_hash_in_place() {
        let cases: &[(&str, Value)] = &[
            (
                "%{nested}",
                Value::Hash(rhash! {"x" => Value::Array(vec!["p".into(), "q".into()])}),
            ),
            ("%{nested.x}", Value::Array(vec!["p".into(), "q".into()])),
            ("%{nested.y}", Value::Nil),
            ("%{nested.x.5}", Value::Nil),
            ("%{no.such}", Value::Nil),
        ];
        for (text, want) in cases {
            let key = &text[2..text.len() - 1];
            assert_eq!(
                scope_interpolate(text, key, &scope()).unwrap(),
                *want,
                "{text}"
            );
        }
        let err = scope_interpolate("%{0.a}", "0.a", &scope()).unwrap_err();
        assert_eq!(
            err.message,
            "Hiera type mismatch: Got Hash when Array was expected to access value using '0' from key '0.a'"
        );
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Pieces of data Strings: text, every kind of token, broken ones.
        fn piece() -> impl Strategy<Value = String> {
            prop_oneof![
                "[a-z %{}]{0,4}",
                (0..5u8).prop_map(|k| format!("%{{hiera('k{k}')}}")),
                (0..5u8).prop_map(|k| format!("%{{alias('k{k}')}}")),
                (0..5u8).prop_map(|k| format!("%{{k{k}}}")),
                (0..5u8).prop_map(|k| format!("%{{scope('k{k}')}}")),
                Just("%{literal('%')}{k1}".to_owned()),
                Just("%{lookup('k1')}".to_owned()),
                Just("%{".to_owned()),
            ]
        }

        fn text() -> impl Strategy<Value = String> {
            prop::collection::vec(piece(), 0..6).prop_map(|p| p.concat())
        }

        fn budget() -> impl Strategy<Value = Budget> {
            (0..300u64, 0..20_000u64).prop_map(|(steps, bytes)| Budget { steps, bytes })
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

            /// Interpolation over data that refers to itself in every way
            /// ends, never panics, and a budget only ever refuses: what it
            /// answers is what an unlimited lookup answers.
            #[test]
            fn budgets_only_refuse(
                values in prop::collection::vec(text(), 5),
                scoped in prop::collection::vec(text(), 5),
                start in text(),
                budget in budget(),
            ) {
                let mut data = Hash::default();
                let mut scope = Hash::default();
                for (k, (v, s)) in values.iter().zip(&scoped).enumerate() {
                    data.insert(Value::str(format!("k{k}")), Value::str(v.as_str()));
                    scope.insert(Value::str(format!("k{k}")), Value::str(s.as_str()));
                }
                let run = |budget| {
                    let mut r = Flat(data.clone(), vec![], Meter::new(budget));
                    interpolate_str(&start, &scope, &Context::default(), &mut r)
                };
                let limited = run(budget);
                let full = run(Budget::DEFAULT);
                let refused = |r: &Result<Value>| r.as_ref().is_err_and(|e| Limit::of(e).is_some());
                if !refused(&limited) && !refused(&full) {
                    prop_assert_eq!(limited, full);
                }
            }
        }
    }

    #[test]
    fn token_scan() {
        type Token = Option<(usize, usize)>;
        let cases: &[(&str, usize, Token)] = &[
            ("plain", 0, None),
            ("%{a}", 0, Some((0, 4))),
            ("50% off %{x} %{y}", 0, Some((8, 12))),
            ("50% off %{x} %{y}", 12, Some((13, 17))),
            ("%%{a}", 0, Some((1, 5))),
            ("%{unclosed", 0, None),
            ("é%{ü}", 0, Some((2, 7))),
            ("trailing %", 0, None),
            ("%{a}", 4, None),
        ];
        for (text, from, want) in cases {
            assert_eq!(next_token(text, *from), *want, "{text:?} from {from}");
        }
    }
}
