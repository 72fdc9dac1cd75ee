//! The value model: what a Ruby object loaded from Hiera data can be.
//!
//! Hiera answers are Ruby objects, and their differences are observable in
//! every output format, so the model keeps them all apart: nil, true/false,
//! Integer (arbitrary size), Float, String, Symbol, Array and an
//! insertion-ordered Hash whose keys may be any value.
//!
//! Equality and hashing follow Ruby's `eql?`/`hash`, which is what `Hash`
//! keys and `Array#uniq`/`Array#|` use: `1` and `1.0` differ, containers
//! compare structurally. One deliberate divergence: NaN equals itself here
//! (Rust maps need a reflexive equality); Ruby would keep two NaN keys.

use indexmap::IndexMap;
use indexmap::map::RawEntryApiV1;
use num_bigint::BigInt;
use std::hash::{BuildHasher, Hash as StdHash, Hasher};
use std::sync::{Arc, LazyLock};

/// An ordered Ruby Hash. Hashed with foldhash (randomly seeded per
/// process): SipHash over every key of every level of every lookup was a
/// tenth of the server's instructions.
pub type Hash = IndexMap<Value, Value, ValueState>;

/// The hasher of every [`Hash`](type@Hash): foldhash, seeded at random
/// once per process rather than once per Hash, so that a key hashed once
/// ([`HashedKey`]) is found in any Hash by that hash (a lookup asks a
/// document at each of a dozen levels for one key). Iteration order is
/// insertion order whatever the hasher.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValueState;

impl BuildHasher for ValueState {
    type Hasher = foldhash::fast::FoldHasher<'static>;

    #[inline]
    fn build_hasher(&self) -> Self::Hasher {
        static STATE: LazyLock<foldhash::fast::RandomState> = LazyLock::new(Default::default);
        STATE.build_hasher()
    }
}

/// A key with its hash, worked out once for all the Hashes it is looked
/// up in.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HashedKey<'k> {
    value: &'k Value,
    hash: u64,
}

impl<'k> HashedKey<'k> {
    pub(crate) fn new(value: &'k Value) -> HashedKey<'k> {
        HashedKey {
            value,
            hash: ValueState.hash_one(value),
        }
    }

    pub(crate) fn value(&self) -> &'k Value {
        self.value
    }

    /// Where the key is in `hash`, and its value: `hash.get_full(key)`
    /// without hashing the key again.
    #[inline]
    pub(crate) fn find_in<'h>(&self, hash: &'h Hash) -> Option<(usize, &'h Value)> {
        let at = hash
            .raw_entry_v1()
            .index_from_hash(self.hash, |k| k == self.value)?;
        hash.get_index(at).map(|(_, v)| (at, v))
    }
}

/// An ordered set of values (`uniq`, `|`), hashed as [`Hash`](type@Hash) is.
pub(crate) type ValueSet = indexmap::IndexSet<Value, foldhash::fast::RandomState>;

/// A Ruby object as Hiera sees it.
#[derive(Clone, Debug)]
pub enum Value {
    Nil,
    Bool(bool),
    /// An Integer that fits in 64 bits.
    Int(i64),
    /// An Integer that does not fit in 64 bits (Ruby's Bignum). Never holds a
    /// value that fits `Int`: constructors normalise, so equality stays
    /// structural.
    BigInt(Arc<BigInt>),
    Float(f64),
    String(String),
    /// A Ruby Symbol (`:name` in YAML); its name without the colon.
    Symbol(String),
    Array(Vec<Value>),
    Hash(Hash),
}

impl Value {
    /// An Integer from a big integer, normalised to `Int` when it fits.
    pub fn integer(n: BigInt) -> Value {
        match i64::try_from(&n) {
            Ok(small) => Value::Int(small),
            Err(_) => Value::BigInt(Arc::new(n)),
        }
    }

    /// A String value.
    pub fn str(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    /// The Ruby class name, as it appears in Hiera's error messages.
    pub(crate) fn class_name(&self) -> &'static str {
        match self {
            Value::Nil => "NilClass",
            Value::Bool(true) => "TrueClass",
            Value::Bool(false) => "FalseClass",
            Value::Int(_) | Value::BigInt(_) => "Integer",
            Value::Float(_) => "Float",
            Value::String(_) => "String",
            Value::Symbol(_) => "Symbol",
            Value::Array(_) => "Array",
            Value::Hash(_) => "Hash",
        }
    }

    /// Ruby truthiness: everything but nil and false.
    pub(crate) fn is_truthy(&self) -> bool {
        !matches!(self, Value::Nil | Value::Bool(false))
    }

    pub(crate) fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_hash(&self) -> Option<&Hash> {
        match self {
            Value::Hash(h) => Some(h),
            _ => None,
        }
    }

    pub(crate) fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// How many levels of Arrays and Hashes the value nests, Hash keys
    /// included (a scalar: 0; `{"a" => [1]}`: 2), but at most `cap + 1`:
    /// checking a value against a limit recurses no deeper than the limit,
    /// however deep the value.
    pub(crate) fn depth_upto(&self, cap: usize) -> usize {
        if !matches!(self, Value::Array(_) | Value::Hash(_)) {
            return 0;
        }
        let Some(below) = cap.checked_sub(1) else {
            return 1;
        };
        let deepest = match self {
            Value::Array(items) => items.iter().map(|v| v.depth_upto(below)).max(),
            Value::Hash(h) => h
                .iter()
                .flat_map(|(k, v)| [k, v])
                .map(|v| v.depth_upto(below))
                .max(),
            _ => None,
        };
        1 + deepest.unwrap_or(0)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Int(n)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Value {
        Value::Array(a)
    }
}

impl From<Hash> for Value {
    fn from(h: Hash) -> Value {
        Value::Hash(h)
    }
}

/// Ruby's `eql?`: same class and same value; Integer 1 is not Float 1.0.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::BigInt(a), Value::BigInt(b)) => a == b,
            // `==` makes 0.0 eql -0.0 as in Ruby; NaN is made reflexive.
            (Value::Float(a), Value::Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Symbol(a), Value::Symbol(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => a == b,
            // Ruby Hash equality ignores order.
            (Value::Hash(a), Value::Hash(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k) == Some(v))
            }
            _ => false,
        }
    }
}

impl Eq for Value {}

impl StdHash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Value::Nil => {}
            Value::Bool(b) => b.hash(state),
            Value::Int(n) => n.hash(state),
            Value::BigInt(n) => n.hash(state),
            Value::Float(f) => {
                // 0.0 and -0.0 are equal, so they must hash alike; all NaNs too.
                let canonical = if *f == 0.0 {
                    0.0f64
                } else if f.is_nan() {
                    f64::NAN
                } else {
                    *f
                };
                canonical.to_bits().hash(state)
            }
            Value::String(s) | Value::Symbol(s) => s.hash(state),
            Value::Array(a) => a.hash(state),
            Value::Hash(h) => {
                // Order-independent, to agree with the order-blind equality.
                h.len().hash(state);
                let mut sum: u64 = 0;
                for (k, v) in h {
                    // The outer hasher brings the seed; this one only mixes.
                    let mut inner = foldhash::fast::FixedState::default().build_hasher();
                    k.hash(&mut inner);
                    v.hash(&mut inner);
                    sum = sum.wrapping_add(inner.finish());
                }
                sum.hash(state)
            }
        }
    }
}

/// A `&str` that finds the [`Value::String`] key it spells in a
/// [`Hash`](type@Hash), without building that Value (and its String).
pub(crate) struct StrKey<'s>(pub(crate) &'s str);

impl StdHash for StrKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // As `Value::String(s)` hashes (String::new() allocates nothing,
        // and ManuallyDrop leaves no drop to call).
        let string = std::mem::ManuallyDrop::new(Value::String(String::new()));
        std::mem::discriminant(&*string).hash(state);
        self.0.hash(state);
    }
}

impl indexmap::Equivalent<Value> for StrKey<'_> {
    fn equivalent(&self, key: &Value) -> bool {
        matches!(key, Value::String(s) if s == self.0)
    }
}

/// Builds an ordered Hash from key/value pairs, for tests and fixtures.
#[macro_export]
macro_rules! rhash {
    ($($k:expr => $v:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut h = $crate::hiera::value::Hash::default();
        $( h.insert($crate::hiera::value::Value::from($k), $crate::hiera::value::Value::from($v)); )*
        h
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_keys_find_strings_only() {
        let mut h = rhash! {"a" => 1, "::b" => 2};
        h.insert(Value::Symbol("s".into()), Value::Int(3));
        assert_eq!(h.get(&StrKey("a")), Some(&Value::Int(1)));
        assert_eq!(h.get(&StrKey("::b")), Some(&Value::Int(2)));
        assert_eq!(h.get(&StrKey("s")), None);
        assert_eq!(h.get(&StrKey("c")), None);
    }

    #[test]
    fn eql_semantics() {
        let cases: &[(Value, Value, bool)] = &[
            (Value::Int(1), Value::Float(1.0), false),
            (Value::Float(0.0), Value::Float(-0.0), true),
            (Value::str("a"), Value::Symbol("a".into()), false),
            (Value::Nil, Value::Bool(false), false),
            (
                Value::Hash(rhash! {"a" => 1, "b" => 2}),
                Value::Hash(rhash! {"b" => 2, "a" => 1}),
                true,
            ),
            (
                Value::Array(vec![1.into(), 2.into()]),
                Value::Array(vec![2.into(), 1.into()]),
                false,
            ),
        ];
        for (a, b, want) in cases {
            assert_eq!(a == b, *want, "{a:?} eql {b:?}");
        }
    }

    #[test]
    fn depth_counts_containers_and_keys_up_to_a_cap() {
        let nest = |n: usize| (0..n).fold(Value::Int(1), |v, _| Value::Array(vec![v]));
        let mut keyed = Hash::default();
        keyed.insert(nest(3), Value::Nil);
        let cases: Vec<(Value, usize, usize)> = vec![
            (Value::Nil, 5, 0),
            (Value::Hash(Hash::default()), 5, 1),
            (
                Value::Hash(rhash! {"a" => Value::Array(vec![1.into()])}),
                5,
                2,
            ),
            (Value::Hash(keyed), 9, 4),
            (nest(10), 100, 10),
            (nest(10), 10, 10),
            (nest(10), 9, 10),
            (nest(10), 4, 5),
            (nest(1_000), 64, 65),
            (nest(3), 0, 1),
        ];
        for (v, cap, want) in cases {
            assert_eq!(v.depth_upto(cap), want, "cap {cap}");
        }
    }

    #[test]
    fn big_integers_normalise() {
        let small = Value::integer(BigInt::from(42));
        assert!(matches!(small, Value::Int(42)));
        let big: BigInt = "12345678901234567890".parse().unwrap();
        assert!(matches!(Value::integer(big), Value::BigInt(_)));
    }

    /// A key hashed once is found in every Hash, old or new, large or
    /// small, where `get_full` finds it, and nowhere else (equal keys of
    /// different spellings too: 0.0 and -0.0).
    #[test]
    fn hashed_keys_find_what_get_finds() {
        let keys = [
            Value::str("a"),
            Value::str("network_metadata"),
            Value::Symbol("a".into()),
            Value::Int(1),
            Value::Float(0.0),
            Value::Float(-0.0),
            Value::Nil,
            Value::Array(vec![Value::str("a")]),
        ];
        let mut hashes = vec![Hash::default()];
        for n in 0..4 {
            let mut h = Hash::default();
            for (i, k) in keys.iter().enumerate().filter(|(i, _)| i % 4 != n) {
                h.insert(k.clone(), Value::Int(i as i64));
            }
            for filler in 0..n * 40 {
                h.insert(Value::str(format!("f{filler}")), Value::Nil);
            }
            hashes.push(h);
        }
        for key in &keys {
            let hashed = HashedKey::new(key);
            assert_eq!(hashed.value(), key);
            for h in &hashes {
                let want = h.get_full(key).map(|(at, _, v)| (at, v));
                assert_eq!(hashed.find_in(h), want, "{key:?} in {h:?}");
            }
        }
        let built: Hash = keys.iter().map(|k| (k.clone(), Value::Nil)).collect();
        assert_eq!(
            HashedKey::new(&Value::Float(-0.0))
                .find_in(&built)
                .map(|f| f.0),
            Some(4)
        );
    }
}
