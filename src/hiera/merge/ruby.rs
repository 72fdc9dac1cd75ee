//! The Ruby 3.1 core behaviours deep_merge leans on and the value model does
//! not give: `==`, `<=>`, `Array#sort!` (with glibc's comparison order),
//! `Array#|`, `Array#join` and `String#split`; `to_s`/`inspect` come from
//! [`crate::hiera::render::ruby`].

use super::super::error::{ErrorClass, HieraError, Result};
use super::super::render::ruby as render;
use super::super::value::{Hash, Value, ValueSet};
use num_bigint::BigInt;
use std::cmp::Ordering;

/// Ruby's `rb_equal(a, b)` (`a == b` after an identity check): numbers
/// compare by value across Integer and Float, containers element-wise.
///
/// NaN equals NaN here: every NaN in Hiera data is Psych's single
/// `Float::NAN` object, so Ruby's identity check makes them equal. Callers
/// that model a direct `Float#==` call use [`float_eq_direct`].
pub(crate) fn rb_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) if x.is_nan() && y.is_nan() => true,
        (Value::Int(_) | Value::BigInt(_) | Value::Float(_), _) => {
            numeric_cmp(a, b) == Some(Ordering::Equal)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| rb_equal(p, q))
        }
        (Value::Hash(x), Value::Hash(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| rb_equal(v, w)))
        }
        _ => a == b,
    }
}

/// `a == b` called directly on a Float, where no identity check happens:
/// NaN is unequal to itself.
pub(crate) fn float_eq_direct(a: &Value) -> bool {
    !matches!(a, Value::Float(f) if f.is_nan())
}

/// Numeric comparison across Integer and Float, exact as Ruby's; `None`
/// for NaN or a non-number.
fn numeric_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Int(_) | Value::BigInt(_), Value::Int(_) | Value::BigInt(_)) => {
            Some(to_bigint(a).cmp(&to_bigint(b)))
        }
        (Value::Int(_) | Value::BigInt(_), Value::Float(f)) => int_float_cmp(&to_bigint(a), *f),
        (Value::Float(f), Value::Int(_) | Value::BigInt(_)) => {
            int_float_cmp(&to_bigint(b), *f).map(Ordering::reverse)
        }
        _ => None,
    }
}

fn to_bigint(v: &Value) -> BigInt {
    match v {
        Value::Int(n) => BigInt::from(*n),
        Value::BigInt(n) => (**n).clone(),
        _ => BigInt::from(0),
    }
}

/// Integer against Float without rounding the Integer (Ruby compares exactly).
fn int_float_cmp(i: &BigInt, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f.is_infinite() {
        return Some(if f > 0.0 {
            Ordering::Less
        } else {
            Ordering::Greater
        });
    }
    let whole = f.trunc();
    // An integral f64 converts to a BigInt exactly.
    let whole_int = num_traits::FromPrimitive::from_f64(whole).unwrap_or_else(|| BigInt::from(0));
    match i.cmp(&whole_int) {
        Ordering::Equal => 0.0f64.partial_cmp(&(f - whole)),
        other => Some(other),
    }
}

/// Ruby's `a <=> b` for the values Hiera data holds; `None` where Ruby
/// answers nil.
pub(crate) fn spaceship(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(_) | Value::BigInt(_) | Value::Float(_), _) => numeric_cmp(a, b),
        (Value::String(x), Value::String(y)) | (Value::Symbol(x), Value::Symbol(y)) => {
            Some(x.as_bytes().cmp(y.as_bytes()))
        }
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                match spaceship(p, q)? {
                    Ordering::Equal => {}
                    other => return Some(other),
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        // Object#<=>: 0 when `==`, else nil (Hash, nil, true, false).
        _ if rb_equal(a, b) => Some(Ordering::Equal),
        _ => None,
    }
}

/// Whether Ruby holds this value as an immediate ("special constant"), which
/// decides how `rb_cmperr` names it. Symbols are taken to be static (a
/// Symbol inside an array can only come from the Ruby API, written in code).
fn is_special_const(v: &Value) -> bool {
    const FIXNUM_MAX: i64 = (1 << 62) - 1;
    const FIXNUM_MIN: i64 = -(1 << 62);
    match v {
        Value::Nil | Value::Bool(_) | Value::Symbol(_) => true,
        Value::Int(n) => (FIXNUM_MIN..=FIXNUM_MAX).contains(n),
        _ => false,
    }
}

/// Ruby's `rb_cmperr`: `comparison of X with Y failed`, X the class of the
/// left operand, Y the right one's inspect for immediates and Floats, else
/// its class.
fn comparison_failed(x: &Value, y: &Value) -> HieraError {
    let right = if is_special_const(y) || matches!(y, Value::Float(_)) {
        inspect(y)
    } else {
        y.class_name().to_owned()
    };
    HieraError::new(
        ErrorClass::ArgumentError,
        format!("comparison of {} with {} failed", x.class_name(), right),
    )
}

/// Ruby's `sort_2` comparator: `a <=> b`, raising when it answers nil.
fn sort_compare(a: &Value, b: &Value) -> Result<Ordering> {
    spaceship(a, b).ok_or_else(|| comparison_failed(a, b))
}

/// `Array#sort!`. Ruby 3.1 on glibc sorts with `qsort_r`, a top-down merge
/// sort (left half `n / 2`); the order of comparisons decides which pair
/// raises first, and the merge's stability decides where equal elements
/// (`1` and `1.0`) land, so the same algorithm is used here.
pub(crate) fn sort(values: Vec<Value>) -> Result<Vec<Value>> {
    if values.len() <= 1 {
        return Ok(values);
    }
    let mut values = values;
    let right = values.split_off(values.len() / 2);
    let left = sort(values)?;
    let right = sort(right)?;
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    while let (Some(l), Some(r)) = (left.peek(), right.peek()) {
        if sort_compare(l, r)? != Ordering::Greater {
            out.extend(left.next());
        } else {
            out.extend(right.next());
        }
    }
    out.extend(left);
    out.extend(right);
    Ok(out)
}

/// `dest | source`: `dest`'s elements then `source`'s, each kept at its
/// first occurrence (`eql?`).
pub(crate) fn union(mut dest: Vec<Value>, source: Vec<Value>) -> Vec<Value> {
    // Ruby scans linearly up to 16 elements; a hash set past that.
    if dest.len() + source.len() <= 16 {
        // Deduplicate `dest` in place (kept items slide to the front), then
        // append the new source items: no new allocation in the common case.
        let mut kept = 0;
        for i in 0..dest.len() {
            if !dest[..kept].contains(&dest[i]) {
                dest.swap(kept, i);
                kept += 1;
            }
        }
        dest.truncate(kept);
        for v in source {
            if !dest.contains(&v) {
                dest.push(v);
            }
        }
        dest
    } else {
        let mut set: ValueSet =
            ValueSet::with_capacity_and_hasher(dest.len() + source.len(), Default::default());
        for v in dest.into_iter().chain(source) {
            set.insert(v);
        }
        set.into_iter().collect()
    }
}

/// `uniq` keeping first occurrences (`eql?`).
pub(crate) fn uniq(values: Vec<Value>) -> Vec<Value> {
    union(values, Vec::new())
}

/// How Ruby names a value in "no implicit conversion of X" and "wrong
/// argument type X" messages.
fn type_name_in_error(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Bool(true) => "true",
        Value::Bool(false) => "false",
        other => other.class_name(),
    }
}

/// `array.join(sep).split(sep)`, what `unpack_arrays` does to each array.
///
/// # Errors
/// `TypeError` for a non-String separator, from `join` (non-empty array) or
/// `split` (empty array), as Ruby raises them.
pub(crate) fn join_split(array: &[Value], sep: &Value) -> Result<Vec<Value>> {
    let Value::String(sep) = sep else {
        let message = if array.is_empty() {
            format!(
                "wrong argument type {} (expected Regexp)",
                type_name_in_error(sep)
            )
        } else {
            format!(
                "no implicit conversion of {} into String",
                type_name_in_error(sep)
            )
        };
        return Err(HieraError::new(ErrorClass::TypeError, message));
    };
    let mut joined = String::new();
    join_into(array, sep, &mut joined);
    Ok(split(&joined, sep).into_iter().map(Value::String).collect())
}

/// `Array#join`: nested arrays are joined in place with the same separator,
/// other elements through `to_s`.
fn join_into(array: &[Value], sep: &str, out: &mut String) {
    for (i, v) in array.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        match v {
            Value::Array(inner) => join_into(inner, sep, out),
            other => out.push_str(&render::to_s(other)),
        }
    }
}

/// `String#split(sep)` with a String separator and no limit: `" "` splits on
/// runs of ASCII whitespace ignoring leading ones, `""` splits into
/// characters, anything else literally; trailing empty fields are dropped.
pub(crate) fn split(s: &str, sep: &str) -> Vec<String> {
    let mut fields: Vec<String> = if s.is_empty() {
        Vec::new()
    } else if sep == " " {
        s.split([' ', '\t', '\n', '\u{b}', '\u{c}', '\r'])
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect()
    } else if sep.is_empty() {
        s.chars().map(String::from).collect()
    } else {
        s.split(sep).map(str::to_owned).collect()
    };
    while fields.last().is_some_and(String::is_empty) {
        fields.pop();
    }
    fields
}

/// Ruby's `to_s`.
pub(crate) fn to_s(v: &Value) -> String {
    render::to_s(v)
}

/// Ruby's `inspect`.
pub(crate) fn inspect(v: &Value) -> String {
    render::inspect(v)
}

/// `inspect` of a Hash, for deep_merge's trace lines.
pub(crate) fn inspect_hash(h: &Hash) -> String {
    render::inspect(&Value::Hash(h.clone()))
}

/// `inspect` of an Array, for deep_merge's trace lines.
pub(crate) fn inspect_array(a: &[Value]) -> String {
    render::inspect(&Value::Array(a.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    fn arr(items: Vec<Value>) -> Value {
        Value::Array(items)
    }

    #[test]
    fn sort_raises_like_ruby() {
        type Case = (Vec<Value>, std::result::Result<Vec<Value>, &'static str>);
        let cases: Vec<Case> = vec![
            (
                vec![3.into(), Value::Float(1.5), 2.into()],
                Ok(vec![Value::Float(1.5), 2.into(), 3.into()]),
            ),
            (
                vec![1.into(), "a".into()],
                Err("comparison of Integer with String failed"),
            ),
            (
                vec![Value::Nil, 1.into()],
                Err("comparison of NilClass with 1 failed"),
            ),
            (
                vec![1.into(), Value::Nil],
                Err("comparison of Integer with nil failed"),
            ),
            (
                vec!["a".into(), Value::Float(1.5)],
                Err("comparison of String with 1.5 failed"),
            ),
            (
                vec![
                    Value::Hash(rhash! {"a" => 1}),
                    Value::Hash(rhash! {"b" => 1}),
                ],
                Err("comparison of Hash with Hash failed"),
            ),
            (
                vec![arr(vec![1.into()]), arr(vec!["a".into()])],
                Err("comparison of Array with Array failed"),
            ),
            (
                vec!["a".into(), Value::Int((1 << 62) - 1)],
                Err("comparison of String with 4611686018427387903 failed"),
            ),
            (
                vec!["a".into(), Value::Int(1 << 62)],
                Err("comparison of String with Integer failed"),
            ),
            // Stable: 1 and 1.0 compare equal and keep their order.
            (
                vec![Value::Float(1.0), 1.into(), 0.into()],
                Ok(vec![0.into(), Value::Float(1.0), 1.into()]),
            ),
        ];
        for (input, want) in cases {
            let got = sort(input.clone());
            match want {
                Ok(v) => {
                    let got = got.unwrap();
                    assert_eq!(format!("{got:?}"), format!("{v:?}"), "{input:?}");
                }
                Err(msg) => assert_eq!(got.unwrap_err().message, msg, "{input:?}"),
            }
        }
    }

    #[test]
    fn split_and_join() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(split("a,b,,", ","), s(&["a", "b"]));
        assert_eq!(split(",a", ","), s(&["", "a"]));
        assert_eq!(split("", ","), s(&[]));
        assert_eq!(split(" a  b ", " "), s(&["a", "b"]));
        assert_eq!(split("ab", ""), s(&["a", "b"]));
        let joined = join_split(
            &[
                "1,2".into(),
                Value::Nil,
                arr(vec![3.into(), arr(vec![])]),
                Value::Hash(rhash! {"k" => 1}),
            ],
            &",".into(),
        )
        .unwrap();
        assert_eq!(
            joined,
            vec![
                "1".into(),
                "2".into(),
                "".into(),
                "3".into(),
                "".into(),
                "{\"k\"=>1}".into()
            ]
        );
        let err = join_split(&["a".into()], &Value::Int(1)).unwrap_err();
        assert_eq!(err.message, "no implicit conversion of Integer into String");
        let err = join_split(&[], &Value::Bool(true)).unwrap_err();
        assert_eq!(err.message, "wrong argument type true (expected Regexp)");
    }

    #[test]
    fn equality_and_union() {
        assert!(rb_equal(&1.into(), &Value::Float(1.0)));
        assert!(rb_equal(
            &arr(vec![1.into()]),
            &arr(vec![Value::Float(1.0)])
        ));
        assert!(!rb_equal(&"1".into(), &1.into()));
        assert!(rb_equal(&Value::Float(f64::NAN), &Value::Float(f64::NAN)));
        assert!(!float_eq_direct(&Value::Float(f64::NAN)));
        let got = union(
            vec!["a".into(), "b".into(), "a".into()],
            vec![1.into(), Value::Float(1.0), "b".into(), 1.into()],
        );
        assert_eq!(
            format!("{got:?}"),
            format!(
                "{:?}",
                vec![Value::from("a"), "b".into(), 1.into(), Value::Float(1.0)]
            )
        );
        let big: Vec<Value> = (0..40).map(|i| Value::Int(i % 7)).collect();
        assert_eq!(uniq(big), (0..7).map(Value::Int).collect::<Vec<_>>());
    }
}
