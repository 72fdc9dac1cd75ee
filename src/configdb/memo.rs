//! What one snapshot remembers of the answers made from its stored, final
//! values: work done once per snapshot, not per request.
//!
//! - **Merged Hashes**, keyed by the identity (address) of the stored
//!   values merged, in order, and the merge behaviour: a hash lookup whose
//!   levels hold final values (nothing to interpolate) under a plain merge
//!   (see `MergeSpec::plain`) is a function of those values alone, so the
//!   merge of the same values is the same Hash whatever the request, its
//!   scope or its hierarchy. This is a memo keyed by data, not the answer
//!   cache (which is keyed by the request's bytes).
//! - **Array lookups' answers** over final values (`flatten.uniq.compact`
//!   of the values found), keyed the same way: a function of those values
//!   alone as well.
//! - **Answer bodies** (`{"found":true,"value":…}`), keyed by the identity
//!   of the value answered, for Hashes and Arrays whose body is at least
//!   [`MIN_BODY`] bytes: a stored final value or a kept merge.
//!
//! Addresses identify values only while the values live and do not change:
//! the memo belongs to one snapshot (made empty with every new one) and is
//! only ever asked about values borrowed from that snapshot, which neither
//! moves nor changes them while it lives.
//!
//! Bounded: at most `budget` bytes (the answer bodies' lengths plus an
//! estimate of each kept Hash's heap, [`heap_bytes`]) and [`SLOTS`] merges
//! per snapshot; past either, answers are made per request as before.
//! A budget of 0 turns the memo off.
//!
//! Beside the answers, values derived once per environment ([`derived`]:
//! a Hiera 5 environment's parsed hiera.yaml), outside the budget.

mod derived;

use crate::hiera::Value;
use crate::hiera::merge::Behavior;
use bytes::Bytes;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

/// Merges kept per snapshot at most.
pub(crate) const SLOTS: usize = 4096;

/// Bodies shorter than this are made per request: their entry (about
/// 100 bytes) would cost more than a third of what it keeps. Longer ones
/// cost more to write than to find: the small Hashes of a full priority
/// lookup took some 2,700 instructions a request to write, and were kept
/// only from 4 KiB (bench/LOG.md, "The access lines written in batches").
pub(crate) const MIN_BODY: usize = 256;

/// The memo's default budget in bytes.
pub(crate) const DEFAULT_BUDGET: usize = 64 * 1024 * 1024;

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Which stored values were merged, and how: `None` is an array
/// lookup's `flatten.uniq.compact`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct MergeKey {
    behavior: Option<Behavior>,
    layers: Vec<usize>,
}

impl MergeKey {
    fn of(behavior: Option<Behavior>, layers: &[&Value]) -> MergeKey {
        MergeKey {
            behavior,
            layers: layers.iter().map(|v| address(v)).collect(),
        }
    }
}

fn address(v: &Value) -> usize {
    std::ptr::from_ref(v) as usize
}

#[derive(Debug, Default)]
struct Books {
    /// Bytes spent of the budget.
    used: usize,
    /// Merge → its slot.
    merged: Map<MergeKey, usize>,
    bodies: Map<usize, Bytes>,
}

/// One snapshot's memo (see the module's documentation).
#[derive(Debug)]
pub(crate) struct AnswerMemo {
    budget: usize,
    books: Mutex<Books>,
    /// The kept merges: each set once, never moved nor dropped before the
    /// memo, so references to them live as long as the memo.
    slots: OnceLock<Box<[OnceLock<Value>]>>,
    derived: derived::Derived,
}

impl Default for AnswerMemo {
    fn default() -> AnswerMemo {
        AnswerMemo::new(DEFAULT_BUDGET)
    }
}

impl AnswerMemo {
    /// An empty memo spending at most `budget` bytes (0: off).
    pub(crate) fn new(budget: usize) -> AnswerMemo {
        AnswerMemo {
            budget,
            books: Mutex::default(),
            slots: OnceLock::new(),
            derived: derived::Derived::default(),
        }
    }

    /// The `T` derived from environment `env` of this memo's snapshot,
    /// made by `make` once ([`derived`]).
    pub(crate) fn derived<T: std::any::Any + Send + Sync>(
        &self,
        env: i64,
        make: impl FnOnce() -> T,
    ) -> std::sync::Arc<T> {
        self.derived.get_or_make(env, make)
    }

    /// The budget it was made with.
    pub(crate) fn budget(&self) -> usize {
        self.budget
    }

    fn books(&self) -> std::sync::MutexGuard<'_, Books> {
        self.books.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The kept merge of `layers` (stored values of this memo's snapshot)
    /// under `behavior`.
    pub(crate) fn merged(&self, behavior: Behavior, layers: &[&Value]) -> Option<&Value> {
        self.kept(Some(behavior), layers)
    }

    /// The kept answer of an array lookup that found `layers` (stored
    /// values of this memo's snapshot).
    pub(crate) fn resolved(&self, layers: &[&Value]) -> Option<&Value> {
        self.kept(None, layers)
    }

    /// Keeps `resolved`, an array lookup's answer over `layers`, as
    /// [`AnswerMemo::keep_merged`] keeps merges.
    pub(crate) fn keep_resolved(&self, layers: &[&Value], resolved: Value) -> Cow<'_, Value> {
        self.keep(None, layers, resolved)
    }

    fn kept(&self, behavior: Option<Behavior>, layers: &[&Value]) -> Option<&Value> {
        if self.budget == 0 {
            return None;
        }
        let key = MergeKey::of(behavior, layers);
        let slot = *self.books().merged.get(&key)?;
        self.slots.get()?.get(slot)?.get()
    }

    /// Keeps `merged`, the merge of `layers` under `behavior`, if the
    /// budget allows: then it is answered borrowed from the memo.
    pub(crate) fn keep_merged(
        &self,
        behavior: Behavior,
        layers: &[&Value],
        merged: Value,
    ) -> Cow<'_, Value> {
        self.keep(Some(behavior), layers, merged)
    }

    fn keep(&self, behavior: Option<Behavior>, layers: &[&Value], merged: Value) -> Cow<'_, Value> {
        if self.budget == 0 {
            return Cow::Owned(merged);
        }
        let key = MergeKey::of(behavior, layers);
        let cost = heap_bytes(&merged);
        let slot = {
            let mut books = self.books();
            let slot = books.merged.len();
            if books.merged.contains_key(&key)
                || slot >= SLOTS
                || books.used.saturating_add(cost) > self.budget
            {
                return Cow::Owned(merged);
            }
            books.used += cost;
            books.merged.insert(key, slot);
            slot
        };
        let slots = self
            .slots
            .get_or_init(|| (0..SLOTS).map(|_| OnceLock::new()).collect());
        match slots[slot].set(merged) {
            Ok(()) => slots[slot]
                .get()
                .map_or_else(|| unreachable!("the slot was just set"), Cow::Borrowed),
            Err(merged) => Cow::Owned(merged),
        }
    }

    /// The answer body of `value`, made by `encode` once and then kept
    /// when it is a Hash or an Array of at least [`MIN_BODY`] bytes.
    /// `value` must be borrowed from this memo's snapshot (a stored value
    /// or a kept merge: what a lookup over it answers borrowed), never a
    /// value made for one request, whose address a later one could reuse.
    pub(crate) fn body(&self, value: &Value, encode: impl FnOnce(&Value) -> Bytes) -> Bytes {
        if self.budget == 0 || !matches!(value, Value::Hash(_) | Value::Array(_)) {
            return encode(value);
        }
        let id = address(value);
        if let Some(body) = self.books().bodies.get(&id) {
            return body.clone();
        }
        let body = encode(value);
        if body.len() >= MIN_BODY {
            let mut books = self.books();
            if !books.bodies.contains_key(&id)
                && books.used.saturating_add(body.len()) <= self.budget
            {
                books.used += body.len();
                books.bodies.insert(id, body.clone());
            }
        }
        body
    }

    /// Bytes of the budget spent so far.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.books().used
    }
}

/// Roughly the heap a value holds (an IndexMap's index counted as two
/// words per entry; allocator overhead left out): what a kept merge costs.
pub(crate) fn heap_bytes(v: &Value) -> usize {
    let cell = std::mem::size_of::<Value>();
    match v {
        Value::String(s) | Value::Symbol(s) => s.capacity(),
        Value::Array(a) => a.capacity() * cell + a.iter().map(heap_bytes).sum::<usize>(),
        Value::Hash(h) => {
            h.capacity() * (2 * cell + 2 * std::mem::size_of::<usize>())
                + h.iter()
                    .map(|(k, v)| heap_bytes(k) + heap_bytes(v))
                    .sum::<usize>()
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    fn big(n: usize) -> Value {
        Value::Array((0..n).map(|i| Value::str(format!("item {i:06}"))).collect())
    }

    #[test]
    fn bodies_of_large_hashes_and_arrays_are_made_once() {
        let memo = AnswerMemo::new(1 << 20);
        let (large, small) = (big(1000), big(3));
        let made = std::cell::Cell::new(0);
        let encode = |v: &Value| {
            made.set(made.get() + 1);
            Bytes::from(crate::wire::to_string(v))
        };
        let first = memo.body(&large, encode);
        assert_eq!(memo.body(&large, encode), first);
        assert_eq!(made.get(), 1, "kept");
        memo.body(&small, encode);
        memo.body(&small, encode);
        assert_eq!(made.get(), 3, "small bodies are made each time");
        assert_eq!(memo.used(), first.len());
    }

    #[test]
    fn the_budget_bounds_what_is_kept() {
        let layers_a = [
            Value::Hash(rhash! {"a" => 1}),
            Value::Hash(rhash! {"b" => 2}),
        ];
        let layers = [&layers_a[0], &layers_a[1]];
        let merged = Value::Hash(rhash! {"a" => 1, "b" => 2});
        // Off: nothing kept, nothing answered.
        let off = AnswerMemo::new(0);
        assert!(matches!(
            off.keep_merged(Behavior::Deeper, &layers, merged.clone()),
            Cow::Owned(_)
        ));
        assert!(off.merged(Behavior::Deeper, &layers).is_none());
        // Too small a budget: answered owned, not kept.
        let tiny = AnswerMemo::new(8);
        assert!(matches!(
            tiny.keep_merged(Behavior::Deeper, &layers, merged.clone()),
            Cow::Owned(_)
        ));
        assert!(tiny.merged(Behavior::Deeper, &layers).is_none());
        let large = big(1000);
        let body = tiny.body(&large, |v| Bytes::from(crate::wire::to_string(v)));
        assert!(body.len() > 8);
        assert_eq!(tiny.used(), 0);
        // Kept under its behaviour and layers, in their order only.
        let memo = AnswerMemo::new(1 << 20);
        let kept = memo.keep_merged(Behavior::Deeper, &layers, merged.clone());
        let Cow::Borrowed(kept) = kept else {
            panic!("not kept")
        };
        assert!(std::ptr::eq(
            memo.merged(Behavior::Deeper, &layers).unwrap(),
            kept
        ));
        assert!(memo.merged(Behavior::Deep, &layers).is_none());
        assert!(
            memo.merged(Behavior::Deeper, &[layers[1], layers[0]])
                .is_none()
        );
        assert_eq!(memo.used(), heap_bytes(&merged));
    }
}
