//! Structural diffs between two values (two versions of a document, or a
//! node's effective data at two generations): the key paths added,
//! removed and changed, in the syntax of [`super::keypath`], and an RFC
//! 6902 JSON Patch over the wire form ([`crate::wire`]) that turns the
//! first into the second exactly, Hash order and Ruby types included.
//!
//! Key paths compare as Ruby does (`eql?`: Integer 1 is not Float 1.0;
//! a Hash's order is not a change). A Hash with a key that is not a
//! String, and an Array whose length changed, are one changed path: a
//! key path cannot address inside them, or an index would shift.
//!
//! The patch uses `json-patch`'s operations (the tests apply it with
//! that crate); its own `diff` is not used because it ignores key order,
//! which a Ruby Hash keeps (see [`object_ops`]).

use super::keypath::join_segments;
use crate::hiera::{Hash, Value};
use crate::wire;
use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, Patch, PatchOperation, RemoveOperation, ReplaceOperation};
use serde_json::{Map, Value as Json};

/// What changed between two values, as key paths (`""`: the whole value,
/// when it is not a Hash on both sides), each list in the order met.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct KeyDiff {
    pub(crate) added: Vec<String>,
    pub(crate) removed: Vec<String>,
    pub(crate) changed: Vec<String>,
}

impl KeyDiff {
    /// Whether nothing changed.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "for nodes/changed and dry-runs")
    )]
    pub(crate) fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// Every path, sorted, once.
    pub(crate) fn all_paths(&self) -> Vec<String> {
        let mut all: Vec<String> = [&self.added, &self.removed, &self.changed]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        all.sort();
        all.dedup();
        all
    }
}

/// The key paths that differ between `a` and `b`.
#[cfg_attr(
    not(test),
    expect(dead_code, reason = "for nodes/changed and dry-runs")
)]
pub(crate) fn key_diff(a: &Value, b: &Value) -> KeyDiff {
    let mut out = KeyDiff::default();
    walk_keys(a, b, &mut Vec::new(), &mut out);
    out
}

/// [`key_diff`] of two Hashes (two documents), without copying them.
pub(crate) fn hash_diff(a: &Hash, b: &Hash) -> KeyDiff {
    let mut out = KeyDiff::default();
    if string_keys(a) && string_keys(b) {
        walk_hashes(a, b, &mut Vec::new(), &mut out);
    } else if a != b {
        out.changed.push(String::new());
    }
    out
}

fn walk_keys(a: &Value, b: &Value, path: &mut Vec<String>, out: &mut KeyDiff) {
    if a == b {
        return;
    }
    match (a, b) {
        (Value::Hash(x), Value::Hash(y)) if string_keys(x) && string_keys(y) => {
            walk_hashes(x, y, path, out);
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                path.push(i.to_string());
                walk_keys(v, w, path, out);
                path.pop();
            }
        }
        _ => out.changed.push(join_segments(path)),
    }
}

fn walk_hashes(x: &Hash, y: &Hash, path: &mut Vec<String>, out: &mut KeyDiff) {
    for (k, v) in x {
        let Value::String(name) = k else { continue };
        path.push(name.clone());
        match y.get(k) {
            Some(w) => walk_keys(v, w, path, out),
            None => out.removed.push(join_segments(path)),
        }
        path.pop();
    }
    for k in y.keys() {
        if let Value::String(name) = k {
            if !x.contains_key(k) {
                path.push(name.clone());
                out.added.push(join_segments(path));
                path.pop();
            }
        }
    }
}

fn string_keys(h: &Hash) -> bool {
    h.keys().all(|k| matches!(k, Value::String(_)))
}

/// The JSON Patch that turns the wire form of `a` into that of `b`.
pub(crate) fn patch(a: &Value, b: &Value) -> Patch {
    let mut ops = Vec::new();
    walk_json(
        &wire::to_json(a),
        &wire::to_json(b),
        &PointerBuf::new(),
        &mut ops,
    );
    Patch(ops)
}

/// Whether two JSON values are the same, key order included (serde_json's
/// `==` ignores it).
fn identical(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k, v), (l, w))| k == l && identical(v, w))
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| identical(v, w))
        }
        _ => a == b,
    }
}

/// A wire object that is a Hash of its own (not a tagged value).
fn plain(o: &Map<String, Json>) -> bool {
    !o.contains_key(wire::TAG)
}

fn walk_json(a: &Json, b: &Json, at: &PointerBuf, ops: &mut Vec<PatchOperation>) {
    if identical(a, b) {
        return;
    }
    let replace = |ops: &mut Vec<PatchOperation>| {
        ops.push(PatchOperation::Replace(ReplaceOperation {
            path: at.clone(),
            value: b.clone(),
        }));
    };
    match (a, b) {
        (Json::Object(x), Json::Object(y)) if plain(x) && plain(y) => object_ops(x, y, at, ops),
        (Json::Array(x), Json::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                walk_json(v, w, &at.with_trailing_token(i.to_string()), ops);
            }
        }
        _ => replace(ops),
    }
}

/// The operations that turn object `x` into `y`, at `at`. The keys both
/// start with keep their places and are compared one by one; from the
/// first key that differs on, `x`'s keys are removed and `y`'s added in
/// its order, values and all: an addition goes last, and an applier may
/// fill a removed key's place with the last key (serde_json's
/// `preserve_order` map does), so only this keeps the order exact, with
/// standard operations any applier runs alike.
fn object_ops(
    x: &Map<String, Json>,
    y: &Map<String, Json>,
    at: &PointerBuf,
    ops: &mut Vec<PatchOperation>,
) {
    let kept = x.keys().zip(y.keys()).take_while(|(k, l)| k == l).count();
    for k in x.keys().skip(kept) {
        ops.push(PatchOperation::Remove(RemoveOperation {
            path: at.with_trailing_token(k.as_str()),
        }));
    }
    for (k, v) in y.iter().skip(kept) {
        ops.push(PatchOperation::Add(AddOperation {
            path: at.with_trailing_token(k.as_str()),
            value: v.clone(),
        }));
    }
    for ((k, v), w) in x.iter().zip(y.values()).take(kept) {
        walk_json(v, w, &at.with_trailing_token(k.as_str()), ops);
    }
}

#[cfg(test)]
mod tests;
