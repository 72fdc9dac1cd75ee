//! deep_merge 1.1.1's `DeepMerge.deep_merge!(source, dest, options)`, the
//! algorithm behind Hiera's `deep` and `deeper` merges, with its
//! `merge_debug` trace.
//!
//! Ruby mutates objects in place and sometimes merges an object *with
//! itself*; both are observable. Values here are owned trees moved through
//! the merge, and the two aliasing situations deep_merge creates are
//! modelled explicitly:
//!
//! - a source value whose key is absent (or nil/false) in `dest` is merged
//!   into its own shallow `dup` ([`Merger::merge_dup`]): a Hash then merges
//!   every child with itself, an Array merges with a distinct copy of itself;
//! - after a Hash source replaces a non-Hash `dest`, `dest` *is* the source,
//!   so its later keys merge with themselves ([`Merger::merge_self`]), where
//!   a bare knockout marker clears the array it sits in and `delete_if`
//!   runs while the same array shrinks under it.
//!
//! One aliasing case is not modelled: `extend_existing_arrays` pushes the
//! same source Hash once per key; Ruby keeps one object in those slots, so a
//! later merge that mutates one slot (consuming knockout markers under
//! `merge_hash_arrays`) changes them all, while here they are copies.

use super::super::error::{ErrorClass, HieraError, Result};
use super::super::value::{Hash, Value};
use super::DeepMergeOptions;
use super::prefix::Knockout;
use super::ruby::{self, inspect};
use std::fmt::Write as _;

/// The merge of one `deep_merge!` call tree: its options and trace sink.
pub(super) struct Merger<'a> {
    pub(crate) opts: &'a DeepMergeOptions,
    pub(crate) knockout: Option<&'a Knockout>,
    /// `!options[:preserve_unmergeables]`.
    pub(crate) overwrite: bool,
    /// Where `puts`/`print` output goes when `merge_debug` is on.
    pub(crate) trace: Option<&'a mut String>,
}

/// `options[:debug_indent]` for one call: the caller's text plus two spaces
/// per level of recursion. Kept as a depth so that the common, untraced
/// merge builds no strings.
#[derive(Clone, Copy)]
pub(super) struct Indent {
    depth: usize,
}

impl Indent {
    pub(crate) const TOP: Indent = Indent { depth: 0 };
}

/// Which object an array merge's `dest` is.
enum ArrayDest {
    /// A different object (the lower level's value, or anything else).
    Other(Value),
    /// A shallow `dup` of the source: a new array holding the same elements.
    Dup,
    /// The source array itself.
    Same,
}

/// The state of an array merge once `dest` may have been replaced.
enum Arrays {
    /// `source` and `dest` are different objects. `shared` when `dest` is a
    /// shallow dup of `source`, so element i of both is one object.
    Two {
        source: Vec<Value>,
        dest: Value,
        shared: bool,
    },
    /// `source` and `dest` are one array.
    One(Vec<Value>),
}

impl Merger<'_> {
    fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    /// `print "#{di}#{text}"`.
    fn print_indented(&mut self, di: Indent, text: &str) {
        let base = self.indent_base();
        if let Some(out) = self.trace.as_deref_mut() {
            out.push_str(&base);
            for _ in 0..di.depth {
                out.push_str("  ");
            }
            out.push_str(text);
        }
    }

    /// `puts "#{di}#{text}"`.
    fn puts(&mut self, di: Indent, text: &str) {
        self.print_indented(di, text);
        self.print("\n");
    }

    fn print(&mut self, text: &str) {
        if let Some(out) = self.trace.as_deref_mut() {
            out.push_str(text);
        }
    }

    /// `"#{options[:debug_indent] || ''}"` as given by the caller.
    fn indent_base(&self) -> String {
        match &self.opts.debug_indent {
            Some(v) if self.tracing() => ruby::to_s(v),
            _ => String::new(),
        }
    }

    /// `di + '  '`, evaluated by Ruby before every recursive call: a
    /// non-String `:debug_indent` option fails there.
    fn deeper(&self, di: Indent) -> Result<Indent> {
        if di.depth == 0 {
            if let Some(v) = &self.opts.debug_indent {
                if !matches!(v, Value::String(_)) {
                    return Err(indent_plus_error(v));
                }
            }
        }
        Ok(Indent {
            depth: di.depth + 1,
        })
    }

    /// `deep_merge!(source, dest)` for two different objects.
    pub(crate) fn merge(&mut self, source: Value, dest: Value, di: Indent) -> Result<Value> {
        if source.is_nil() {
            return Ok(dest);
        }
        if !dest.is_truthy() && self.overwrite {
            return Ok(source);
        }
        if self.tracing() {
            let line = format!(
                "Source class: {} :: Dest class: {}",
                source.class_name(),
                dest.class_name()
            );
            self.puts(di, &line);
        }
        let result = match source {
            Value::Hash(src) => self.hash_into(src, dest, di)?,
            Value::Array(src) => self.array_into(src, ArrayDest::Other(dest), di)?,
            scalar => self.scalar_into(scalar, dest, di)?,
        };
        self.returning(di, &result);
        Ok(result)
    }

    /// `deep_merge!(x, x)`: source and dest are one object.
    fn merge_self(&mut self, x: Value, di: Indent) -> Result<Value> {
        if x.is_nil() || (!x.is_truthy() && self.overwrite) {
            return Ok(x);
        }
        if self.tracing() {
            let line = format!("Source class: {0} :: Dest class: {0}", x.class_name());
            self.puts(di, &line);
        }
        let result = match x {
            Value::Hash(h) => self.hash_self(h, di)?,
            Value::Array(a) => self.array_into(a, ArrayDest::Same, di)?,
            scalar => {
                if self.tracing() {
                    let shown = inspect(&scalar);
                    self.puts(di, &format!("Others: {shown} :: {shown}"));
                }
                self.overwrite_unmergeables(scalar.clone(), scalar, di)?
            }
        };
        self.returning(di, &result);
        Ok(result)
    }

    /// `deep_merge!(x, x.dup)`, for a source key that `dest` lacks (or holds
    /// nil/false). Only an Array's dup is a different object whose merge
    /// differs from merging with itself.
    fn merge_dup(&mut self, x: Value, di: Indent) -> Result<Value> {
        let Value::Array(a) = x else {
            return self.merge_self(x, di);
        };
        self.puts_if_tracing(di, || "Source class: Array :: Dest class: Array".to_owned());
        let result = self.array_into(a, ArrayDest::Dup, di)?;
        self.returning(di, &result);
        Ok(result)
    }

    fn puts_if_tracing(&mut self, di: Indent, line: impl FnOnce() -> String) {
        if self.tracing() {
            let line = line();
            self.puts(di, &line);
        }
    }

    fn returning(&mut self, di: Indent, result: &Value) {
        self.puts_if_tracing(di, || format!("Returning {}", inspect(result)));
    }

    /// A scalar source (not Hash, not Array).
    fn scalar_into(&mut self, source: Value, dest: Value, di: Indent) -> Result<Value> {
        if self.opts.extend_existing_arrays {
            if let Value::Array(mut items) = dest {
                items.push(source);
                return Ok(Value::Array(items));
            }
        }
        self.puts_if_tracing(di, || {
            format!("Others: {} :: {}", inspect(&source), inspect(&dest))
        });
        self.overwrite_unmergeables(source, dest, di)
    }

    /// A Hash source merged into a different `dest`.
    fn hash_into(&mut self, src: Hash, dest: Value, di: Indent) -> Result<Value> {
        self.puts_if_tracing(di, || {
            format!("Hashes: {} :: {}", ruby::inspect_hash(&src), inspect(&dest))
        });
        if src.is_empty() {
            return Ok(dest);
        }
        match dest {
            Value::Hash(mut d) => {
                for (key, value) in src {
                    self.merge_key(&mut d, key, value, di)?;
                }
                Ok(Value::Hash(d))
            }
            Value::Array(mut items) if self.opts.extend_existing_arrays => {
                // `dest.push(source)` once per source key.
                let copies = src.len();
                let pushed = Value::Hash(src);
                for _ in 1..copies {
                    items.push(pushed.clone());
                }
                items.push(pushed);
                Ok(Value::Array(items))
            }
            dest if self.overwrite => {
                if self.tracing() {
                    let (k, v) = src.get_index(0).expect("non-empty");
                    let line = format!(
                        "  overwriting dest: {} => {} -over->  {}",
                        inspect(k),
                        inspect(v),
                        inspect(&dest)
                    );
                    self.puts(di, &line);
                }
                // `dest` becomes the source Hash itself (knockout or not),
                // so the remaining keys merge with themselves.
                let merged = self.overwrite_unmergeables(Value::Hash(src), dest, di)?;
                let Value::Hash(mut h) = merged else {
                    return Ok(merged);
                };
                for i in 1..h.len() {
                    self.merge_key_self(&mut h, i, di)?;
                }
                Ok(Value::Hash(h))
            }
            // preserve_unmergeables: a non-Hash dest stays.
            dest => Ok(dest),
        }
    }

    /// One source key merged into a different Hash `dest`.
    fn merge_key(&mut self, d: &mut Hash, key: Value, value: Value, di: Indent) -> Result<()> {
        if self.tracing() {
            let line = format!(
                " looping: {} => {} :: {}",
                inspect(&key),
                inspect(&value),
                ruby::inspect_hash(d)
            );
            self.puts(di, &line);
        }
        match d.get_index_of(&key) {
            Some(i) if d[i].is_truthy() => {
                if self.tracing() {
                    let line = format!(
                        " ==>merging: {} => {} :: {}",
                        inspect(&key),
                        inspect(&value),
                        inspect(&d[i])
                    );
                    self.puts(di, &line);
                }
                let deeper = self.deeper(di)?;
                let old = std::mem::replace(&mut d[i], Value::Nil);
                d[i] = self.merge(value, old, deeper)?;
            }
            _ => {
                if self.tracing() {
                    let line =
                        format!(" ==>merging over: {} => {}", inspect(&key), inspect(&value));
                    self.puts(di, &line);
                }
                let deeper = self.deeper(di)?;
                let merged = self.merge_dup(value, deeper)?;
                d.insert(key, merged);
            }
        }
        Ok(())
    }

    /// A Hash merged with itself: every value merged with itself.
    fn hash_self(&mut self, mut h: Hash, di: Indent) -> Result<Value> {
        if self.tracing() {
            let shown = ruby::inspect_hash(&h);
            self.puts(di, &format!("Hashes: {shown} :: {shown}"));
        }
        for i in 0..h.len() {
            self.merge_key_self(&mut h, i, di)?;
        }
        Ok(Value::Hash(h))
    }

    /// Entry `i` of a Hash that is both source and dest.
    fn merge_key_self(&mut self, h: &mut Hash, i: usize, di: Indent) -> Result<()> {
        let truthy = h[i].is_truthy();
        if self.tracing() {
            let (k, v) = h.get_index(i).expect("index in range");
            let (k, v) = (inspect(k), inspect(v));
            let whole = ruby::inspect_hash(h);
            self.puts(di, &format!(" looping: {k} => {v} :: {whole}"));
            if truthy {
                self.puts(di, &format!(" ==>merging: {k} => {v} :: {v}"));
            } else {
                self.puts(di, &format!(" ==>merging over: {k} => {v}"));
            }
        }
        let deeper = self.deeper(di)?;
        let value = std::mem::replace(&mut h[i], Value::Nil);
        h[i] = if truthy {
            self.merge_self(value, deeper)?
        } else {
            self.merge_dup(value, deeper)?
        };
        Ok(())
    }

    /// An Array source merged into `dest`.
    fn array_into(&mut self, source: Vec<Value>, dest: ArrayDest, di: Indent) -> Result<Value> {
        if self.tracing() {
            let src = ruby::inspect_array(&source);
            let dst = match &dest {
                ArrayDest::Other(d) => inspect(d),
                ArrayDest::Dup | ArrayDest::Same => src.clone(),
            };
            self.puts(di, &format!("Arrays: {src} :: {dst}"));
        }
        if self.opts.overwrite_arrays {
            self.puts(di, " overwrite arrays");
            // `dest = source`, whatever dest was.
            return Ok(Value::Array(source));
        }
        let mut state = match dest {
            ArrayDest::Other(d) => Arrays::Two {
                source,
                dest: d,
                shared: false,
            },
            ArrayDest::Dup => Arrays::Two {
                dest: Value::Array(source.clone()),
                source,
                shared: true,
            },
            ArrayDest::Same => Arrays::One(source),
        };
        if let Some(sep) = &self.opts.unpack_arrays {
            // join/split make fresh arrays of fresh strings: no aliasing left.
            let source = match &state {
                Arrays::Two { source, .. } | Arrays::One(source) => source,
            };
            self.puts_if_tracing(di, || {
                format!(" split/join on source: {}", ruby::inspect_array(source))
            });
            let unpacked = ruby::join_split(source, sep)?;
            state = match state {
                Arrays::Two {
                    dest: Value::Array(d),
                    shared: false,
                    ..
                } => {
                    let d = ruby::join_split(&d, sep)?;
                    Arrays::Two {
                        source: unpacked,
                        dest: Value::Array(d),
                        shared: false,
                    }
                }
                Arrays::Two {
                    dest,
                    shared: false,
                    ..
                } => Arrays::Two {
                    source: unpacked,
                    dest,
                    shared: false,
                },
                Arrays::Two { .. } | Arrays::One(_) => Arrays::Two {
                    dest: Value::Array(unpacked.clone()),
                    source: unpacked,
                    shared: false,
                },
            };
        }
        if let Some(ko) = self.knockout {
            // A bare prefix item: `dest = clear_or_nil(dest); source.delete(prefix)`.
            let marker = ko.value();
            let has_bare = match &state {
                Arrays::Two { source, .. } | Arrays::One(source) => {
                    source.iter().any(|e| ruby::rb_equal(e, marker))
                }
            };
            if has_bare {
                state = match state {
                    Arrays::One(mut x) => {
                        x.clear();
                        Arrays::One(x)
                    }
                    Arrays::Two {
                        mut source, dest, ..
                    } => {
                        source.retain(|e| !ruby::rb_equal(e, marker));
                        Arrays::Two {
                            source,
                            dest: clear_or_nil(dest),
                            shared: false,
                        }
                    }
                };
            }
        }
        let merged = match state {
            Arrays::One(x) => self.merge_same_array(x, di)?,
            Arrays::Two {
                source,
                dest: Value::Array(d),
                shared,
            } => self.merge_arrays(source, d, shared, di)?,
            Arrays::Two { source, dest, .. } => {
                if !self.overwrite {
                    return Ok(dest);
                }
                self.puts_if_tracing(di, || {
                    format!(
                        " overwriting dest: {} -over-> {}",
                        ruby::inspect_array(&source),
                        inspect(&dest)
                    )
                });
                return self.overwrite_unmergeables(Value::Array(source), dest, di);
            }
        };
        let merged = if self.opts.sort_merged_arrays {
            ruby::sort(merged)?
        } else {
            merged
        };
        Ok(Value::Array(merged))
    }

    /// Two different arrays: knockout, then element-wise Hash merge or union.
    fn merge_arrays(
        &mut self,
        mut source: Vec<Value>,
        mut dest: Vec<Value>,
        shared: bool,
        di: Indent,
    ) -> Result<Vec<Value>> {
        if let Some(ko) = self.knockout {
            self.print_indented(di, " knocking out: ");
            let mut kept = Vec::with_capacity(source.len());
            for item in source {
                match self.knocked_out(ko, &item)? {
                    Some(target) => {
                        if self.tracing() {
                            self.print(&format!("{} - ", ruby::to_s(&item)));
                        }
                        dest.retain(|e| !ruby::rb_equal(e, &target));
                        dest.retain(|e| !ruby::rb_equal(e, &item));
                    }
                    None => kept.push(item),
                }
            }
            source = kept;
            self.print("\n");
        }
        if self.tracing() {
            let line = format!(
                " merging arrays: {} :: {}",
                ruby::inspect_array(&source),
                ruby::inspect_array(&dest)
            );
            self.puts(di, &line);
        }
        let all_hashes = |v: &[Value]| v.iter().all(|e| matches!(e, Value::Hash(_)));
        if !(self.opts.merge_hash_arrays && all_hashes(&source) && all_hashes(&dest)) {
            return Ok(ruby::union(dest, source));
        }
        // `list[i] = deep_merge!(source[i] || {}, dest[i])`, then the extra
        // source elements. In a shared dup, source[i] *is* dest[i]: knockout
        // never removes a Hash, so the indices still line up.
        let extra = if source.len() > dest.len() {
            source.split_off(dest.len())
        } else {
            Vec::new()
        };
        let mut source = source.into_iter();
        let mut list = Vec::with_capacity(dest.len() + extra.len());
        for d in dest {
            let s = source.next();
            let deeper = self.deeper(di)?;
            list.push(if shared {
                self.merge_self(d, deeper)?
            } else {
                self.merge(s.unwrap_or_else(|| Value::Hash(Hash::default())), d, deeper)?
            });
        }
        list.extend(extra);
        Ok(list)
    }

    /// One array that is both source and dest.
    fn merge_same_array(&mut self, mut x: Vec<Value>, di: Indent) -> Result<Vec<Value>> {
        if let Some(ko) = self.knockout {
            self.print_indented(di, " knocking out: ");
            self.knock_out_aliased(ko, &mut x)?;
            self.print("\n");
        }
        if self.tracing() {
            let shown = ruby::inspect_array(&x);
            self.puts(di, &format!(" merging arrays: {shown} :: {shown}"));
        }
        if self.opts.merge_hash_arrays && x.iter().all(|e| matches!(e, Value::Hash(_))) {
            let mut list = Vec::with_capacity(x.len());
            for h in x {
                let deeper = self.deeper(di)?;
                list.push(self.merge_self(h, deeper)?);
            }
            return Ok(list);
        }
        Ok(ruby::uniq(x))
    }

    /// `source.delete_if { ... dest.delete(item); dest.delete(ko_item) }`
    /// with `source` and `dest` one array: Ruby's `delete_if` keeps a read
    /// and a write index while the block shrinks the array under it, and
    /// finally cuts the array at the write index.
    fn knock_out_aliased(&mut self, ko: &Knockout, x: &mut Vec<Value>) -> Result<()> {
        let (mut read, mut write) = (0, 0);
        while read < x.len() {
            let item = x[read].clone();
            match self.knocked_out(ko, &item)? {
                Some(target) => {
                    if self.tracing() {
                        self.print(&format!("{} - ", ruby::to_s(&item)));
                    }
                    x.retain(|e| !ruby::rb_equal(e, &target));
                    x.retain(|e| !ruby::rb_equal(e, &item));
                }
                None => {
                    if read != write {
                        x[write] = item;
                    }
                    write += 1;
                }
            }
            read += 1;
        }
        x.truncate(write);
        Ok(())
    }

    /// For one source array item: `Some(what to delete from dest)` when it is
    /// a knockout marker (`item.gsub(/^prefix/, "") != item`). A NaN counts:
    /// it is not a String, so it is compared with itself, and `NaN != NaN`.
    fn knocked_out(&self, ko: &Knockout, item: &Value) -> Result<Option<Value>> {
        Ok(match item {
            Value::String(s) => {
                let stripped = ko.strip(s)?;
                (stripped != *s).then_some(Value::String(stripped))
            }
            Value::Float(f) if f.is_nan() => Some(item.clone()),
            _ => None,
        })
    }

    /// deep_merge's `overwrite_unmergeables(source, dest)`.
    fn overwrite_unmergeables(&mut self, source: Value, dest: Value, di: Indent) -> Result<Value> {
        if !self.overwrite {
            return Ok(dest);
        }
        let Some(ko) = self.knockout else {
            return Ok(source);
        };
        // `src_tmp == source ? src_tmp : ""`
        let kept = match source {
            Value::String(s) => {
                let stripped = ko.strip(&s)?;
                (stripped == s).then_some(Value::String(stripped))
            }
            Value::Array(items) => {
                let mut kept = Vec::with_capacity(items.len());
                for item in items {
                    let marker = match &item {
                        Value::String(s) => ko.matches(s)?,
                        _ => false,
                    };
                    if !marker {
                        kept.push(item);
                    }
                }
                Some(Value::Array(kept))
            }
            other => ruby::float_eq_direct(&other).then_some(other),
        };
        if self.tracing() {
            let shown = kept.as_ref().map_or_else(|| "\"\"".to_owned(), inspect);
            let line = format!("{shown} -over-> {}", inspect(&dest));
            self.puts(di, &line);
        }
        Ok(kept.unwrap_or_else(|| Value::str("")))
    }
}

/// deep_merge's `clear_or_nil`: `clear` what responds to it, else nil.
fn clear_or_nil(v: Value) -> Value {
    match v {
        Value::Array(_) => Value::Array(Vec::new()),
        Value::Hash(_) => Value::Hash(Hash::default()),
        Value::String(_) => Value::str(""),
        _ => Value::Nil,
    }
}

/// The error of `di + '  '` for a non-String `:debug_indent`. (Ruby 3.1's
/// error_highlight appends a source snippet to the NoMethodError message;
/// it is left out, as elsewhere in hierad.)
fn indent_plus_error(v: &Value) -> HieraError {
    match v {
        Value::Int(_) | Value::BigInt(_) | Value::Float(_) => HieraError::new(
            ErrorClass::TypeError,
            format!("String can't be coerced into {}", v.class_name()),
        ),
        Value::Array(_) => HieraError::new(
            ErrorClass::TypeError,
            "no implicit conversion of String into Array",
        ),
        other => {
            let mut message = String::from("undefined method `+' for ");
            let _ = write!(message, "{}:{}", inspect(other), other.class_name());
            HieraError::new(ErrorClass::NoMethodError, message)
        }
    }
}
