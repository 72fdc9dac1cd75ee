//! The effective-value fold: how the layers of one resource combine into
//! the document a lookup sees at a level path.
//!
//! Order: start empty; for the root and then each level value of the path,
//! merge that slot's `values`, then its `overrides`. Later (more specific)
//! layers win.
//!
//! Decision: the merge is **deep** for Hashes, and whole for everything
//! else:
//! - Hash into Hash: merged key by key, recursively; the more specific
//!   layer wins at each key; keys keep the less specific layer's order and
//!   new keys follow in the more specific layer's order (Ruby's
//!   `Hash#merge` order).
//! - Anything else (Array, scalar, a Hash over a non-Hash or the reverse):
//!   the more specific value replaces the other whole.
//! - An explicit `nil` in a more specific layer sets the key to `nil`.
//!
//! Why deep: `hierad config override --key nova.debug --value true` stores
//! `{nova: {debug: true}}` as an override; with tuning-box's shallow
//! top-level update that document would replace all of `nova` and lose its
//! siblings. Deep merging makes a one-key override change one key.
//! Why Arrays whole: a union (Hiera's `deeper`) could never remove an
//! element, so an override could not shorten a list. Why `nil` counts: an
//! override must be able to clear a value (`--type null`); the `deeper`
//! rule of ignoring nil would make that impossible. The price: a layer
//! cannot remove a key or replace a whole sub-Hash at once; clear it with
//! `nil`, or change the lower layer.

use crate::hiera::{Hash, Value};
use std::sync::Arc;

/// Merges `layer` into `base`, `layer` winning (the rules above).
pub(crate) fn deep_merge(base: &mut Hash, layer: &Hash) {
    for (key, value) in layer {
        match (base.get_mut(key), value) {
            (Some(Value::Hash(lower)), Value::Hash(upper)) => deep_merge(lower, upper),
            (Some(slot), _) => *slot = value.clone(),
            (None, _) => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// `layer` merged over `base`, sharing rather than copying when one side
/// is empty: most nodes add nothing to most resources, and then every one
/// of them holds the same `Arc` as the level below.
pub(crate) fn merge_shared(base: &Arc<Hash>, layer: &Arc<Hash>) -> Arc<Hash> {
    if layer.is_empty() {
        Arc::clone(base)
    } else if base.is_empty() {
        Arc::clone(layer)
    } else {
        let mut merged = Hash::clone(base);
        deep_merge(&mut merged, layer);
        Arc::new(merged)
    }
}

/// Folds layers given from least to most specific (for each slot: values,
/// then overrides).
pub(crate) fn fold<'a>(layers: impl IntoIterator<Item = &'a Hash>) -> Hash {
    let mut out = Hash::default();
    for layer in layers {
        deep_merge(&mut out, layer);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    fn h(pairs: Hash) -> Value {
        Value::Hash(pairs)
    }

    fn keys(h: &Hash) -> Vec<&str> {
        h.keys().filter_map(Value::as_str).collect()
    }

    #[test]
    fn fold_table() {
        let arr = |items: &[i64]| Value::Array(items.iter().map(|&i| i.into()).collect());
        // (what, layers least → most specific, expected)
        let cases: Vec<(&str, Vec<Hash>, Hash)> = vec![
            ("no layers", vec![], Hash::default()),
            ("one layer", vec![rhash! {"a" => 1}], rhash! {"a" => 1}),
            (
                "disjoint keys union",
                vec![rhash! {"a" => 1}, rhash! {"b" => 2}],
                rhash! {"a" => 1, "b" => 2},
            ),
            (
                "scalar replaced",
                vec![rhash! {"a" => 1}, rhash! {"a" => 2}],
                rhash! {"a" => 2},
            ),
            (
                "nested hash keeps siblings",
                vec![
                    rhash! {"nova" => h(rhash! {"debug" => false, "workers" => 4})},
                    rhash! {"nova" => h(rhash! {"debug" => true})},
                ],
                rhash! {"nova" => h(rhash! {"debug" => true, "workers" => 4})},
            ),
            (
                "three deep",
                vec![
                    rhash! {"a" => h(rhash! {"b" => h(rhash! {"c" => 1, "d" => 2})})},
                    rhash! {"a" => h(rhash! {"b" => h(rhash! {"c" => 3})})},
                ],
                rhash! {"a" => h(rhash! {"b" => h(rhash! {"c" => 3, "d" => 2})})},
            ),
            (
                "arrays replaced whole",
                vec![rhash! {"l" => arr(&[1, 2, 3])}, rhash! {"l" => arr(&[4])}],
                rhash! {"l" => arr(&[4])},
            ),
            (
                "explicit nil sets nil",
                vec![rhash! {"a" => 1}, rhash! {"a" => Value::Nil}],
                rhash! {"a" => Value::Nil},
            ),
            (
                "nil replaced by a value",
                vec![rhash! {"a" => Value::Nil}, rhash! {"a" => 1}],
                rhash! {"a" => 1},
            ),
            (
                "hash over scalar replaces",
                vec![rhash! {"a" => 1}, rhash! {"a" => h(rhash! {"b" => 1})}],
                rhash! {"a" => h(rhash! {"b" => 1})},
            ),
            (
                "scalar over hash replaces",
                vec![rhash! {"a" => h(rhash! {"b" => 1})}, rhash! {"a" => "flat"}],
                rhash! {"a" => "flat"},
            ),
            (
                "empty hash over hash keeps it",
                vec![
                    rhash! {"a" => h(rhash! {"b" => 1})},
                    rhash! {"a" => h(Hash::default())},
                ],
                rhash! {"a" => h(rhash! {"b" => 1})},
            ),
            (
                // root values, root overrides, node values, node overrides:
                // a root override loses to node values (tuning-box order).
                "values then overrides per level",
                vec![
                    rhash! {"k" => "root value", "r" => 1},
                    rhash! {"k" => "root override"},
                    rhash! {"k" => "node value"},
                    rhash! {},
                ],
                rhash! {"k" => "node value", "r" => 1},
            ),
            (
                "node override wins",
                vec![
                    rhash! {"k" => "root value"},
                    rhash! {"k" => "root override"},
                    rhash! {"k" => "node value"},
                    rhash! {"k" => "node override"},
                ],
                rhash! {"k" => "node override"},
            ),
        ];
        for (what, layers, want) in cases {
            let got = fold(layers.iter());
            assert_eq!(got, want, "{what}");
            assert_eq!(keys(&got), keys(&want), "{what}: key order");
        }
    }

    #[test]
    fn key_order_follows_ruby_merge() {
        let got = fold([rhash! {"z" => 1, "a" => 1}, rhash! {"m" => 2, "z" => 2}].iter());
        assert_eq!(keys(&got), ["z", "a", "m"]);
    }

    #[test]
    fn shares_when_a_side_is_empty() {
        let empty = Arc::new(Hash::default());
        let data = Arc::new(rhash! {"a" => 1});
        assert!(Arc::ptr_eq(&merge_shared(&data, &empty), &data));
        assert!(Arc::ptr_eq(&merge_shared(&empty, &data), &data));
        let more = Arc::new(rhash! {"b" => 2});
        let merged = merge_shared(&data, &more);
        assert_eq!(*merged, rhash! {"a" => 1, "b" => 2});
        assert_eq!(*data, rhash! {"a" => 1}, "inputs untouched");
    }
}
