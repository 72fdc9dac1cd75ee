//! The fast path of interpolation, for the common shape: every token is
//! empty or reads one plain scope variable (`%{name}`, `%{::name}`,
//! `%{scope('name')}`) whose value has no token to re-interpolate. Such a
//! String is built in one pass, with no [`Context`](super::Context), no
//! recursion-guard entry and no Value per token; the meter is charged what
//! the general path charges, and the warnings it logs are logged.
//!
//! Anything else (a method other than `scope()`, a dotted or quoted key, a
//! value holding a token, a variable already on the recursion guard, a
//! budget that would run out) makes [`expand`] answer `None` before it has
//! any effect, and the caller takes the general path, which gives the same
//! answers (the differential tests below and in `lookup/tests.rs`).

use super::{EMPTY_INTERPOLATIONS, Guard, Resolver, has_token, method_call, next_token};
use super::{quoted_key, ruby_strip};
use crate::hiera::key::is_index;
use crate::hiera::render::ruby::to_s;
use crate::hiera::value::{Hash, StrKey, Value, ValueState};
use indexmap::Equivalent;
use indexmap::map::RawEntryApiV1;
use std::hash::BuildHasher;
use std::ops::Range;

/// What `interpolate_str` gives for `data` (a String with at least one
/// token), if every token is one the fast path knows; `None`, having
/// charged, logged and built nothing, otherwise. `guard` is the recursion
/// guard the general path would use (`None`: a fresh, empty one); `config`
/// is `Context::is_interpolate_config` (method calls then warn).
pub(crate) fn expand(
    data: &str,
    scope: &Hash,
    guard: Option<&Guard>,
    config: bool,
    resolver: &mut dyn Resolver,
) -> Option<String> {
    if general_only() {
        return None;
    }
    let guard = guard.map(|g| g.borrow()).filter(|g| !g.is_empty());
    // Room for the values too: a level that grows past its capacity pays
    // for a second allocation and a copy.
    let mut out = String::with_capacity(data.len() + 64);
    let (mut copied, mut spent) = (0, Spent::default());
    while let Some((start, end)) = next_token(data, copied) {
        out.push_str(&data[copied..start]);
        copied = end;
        let variable = &data[start + 2..end - 1];
        if let Token::Scope { key, method } = plain_token(variable)? {
            let found = scope.get(&StrKey(key));
            push_variable(&mut out, variable, found, guard.as_deref())?;
            spent.token(method, config);
        }
    }
    out.push_str(&data[copied..]);
    drop(guard);
    spent.settle(out.len(), resolver)?;
    Some(out)
}

/// A String's tokens classified once, for a String interpolated again and
/// again with different scopes (a hierarchy level: `override/node/%{::fqdn}`,
/// kept with its hierarchy, see [`crate::hiera::hierarchy::Hierarchy`]).
/// [`Template::expand_into`] then gives what [`expand`] gives for the String,
/// without scanning it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Template {
    /// No token: the String is its own value, and costs nothing.
    Plain,
    /// Every token one the fast path knows: the text between them and the
    /// variables they read, in order (empty tokens, which add nothing and
    /// cost nothing, left out).
    Scope(Box<[Piece]>),
    /// A token the fast path declines ([`expand`] always answers `None`),
    /// or not a String at all: the general path's.
    General,
}

/// A part of a [`Template::Scope`], as byte ranges of its String.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Text copied as it is.
    Text(Range<usize>),
    /// A token reading scope variable `key`, whose hash in a [`Hash`] is
    /// `hash` (worked out once: every Hash hashes alike); `variable` is
    /// the token's content (what the recursion guard holds), `method`
    /// whether it is written `scope('…')`.
    Variable {
        variable: Range<usize>,
        key: Range<usize>,
        hash: u64,
        method: bool,
    },
}

impl Template {
    /// `data`'s tokens classified as [`expand`] classifies them.
    pub(crate) fn of(data: &Value) -> Template {
        let Value::String(data) = data else {
            return Template::General;
        };
        if !has_token(data) {
            return Template::Plain;
        }
        let mut pieces = Vec::new();
        let mut copied = 0;
        while let Some((start, end)) = next_token(data, copied) {
            if start > copied {
                pieces.push(Piece::Text(copied..start));
            }
            copied = end;
            let variable = start + 2..end - 1;
            match plain_token(&data[variable.clone()]) {
                None => return Template::General,
                Some(Token::Empty) => {}
                Some(Token::Scope { key, method }) => {
                    // `key` is a part of the token's text.
                    let at = key.as_ptr() as usize - data.as_ptr() as usize;
                    pieces.push(Piece::Variable {
                        variable,
                        key: at..at + key.len(),
                        hash: ValueState.hash_one(StrKey(key)),
                        method,
                    });
                }
            }
        }
        if copied < data.len() {
            pieces.push(Piece::Text(copied..data.len()));
        }
        Template::Scope(pieces.into())
    }

    /// What [`expand`] gives for `data`, the String this template was made
    /// of, written into `out` (cleared first: a walk expands its templated
    /// levels one after another into one buffer); `None`, having done
    /// nothing but leave `out` of no use, when `expand` would. The same
    /// value, charge and warnings. A [`Template::Plain`] String is its own
    /// value.
    pub(crate) fn expand_into(
        &self,
        data: &str,
        scope: &Hash,
        guard: Option<&Guard>,
        config: bool,
        resolver: &mut dyn Resolver,
        out: &mut String,
    ) -> Option<()> {
        out.clear();
        let pieces = match self {
            Template::Plain => {
                out.push_str(data);
                return Some(());
            }
            Template::General => return None,
            Template::Scope(_) if general_only() => return None,
            Template::Scope(pieces) => pieces,
        };
        let guard = guard.map(|g| g.borrow()).filter(|g| !g.is_empty());
        // Room for the values too: a level that grows past its capacity
        // pays for a second allocation and a copy.
        out.reserve(data.len() + 64);
        let mut spent = Spent::default();
        for piece in pieces {
            match piece {
                Piece::Text(text) => out.push_str(&data[text.clone()]),
                Piece::Variable {
                    variable,
                    key,
                    hash,
                    method,
                } => {
                    let (variable, key) = (&data[variable.clone()], StrKey(&data[key.clone()]));
                    let found = scope
                        .raw_entry_v1()
                        .from_hash(*hash, |k| key.equivalent(k))
                        .map(|(_, v)| v);
                    push_variable(out, variable, found, guard.as_deref())?;
                    spent.token(*method, config);
                }
            }
        }
        drop(guard);
        spent.settle(out.len(), resolver)
    }
}

/// Appends `found`, the scope's value of the variable read by the token
/// holding `variable`, to `out`; `None` when the fast path cannot: the
/// variable is on the recursion `guard`, or its value holds a token to
/// interpolate.
#[inline]
fn push_variable(
    out: &mut String,
    variable: &str,
    found: Option<&Value>,
    guard: Option<&Vec<String>>,
) -> Option<()> {
    if guard.is_some_and(|g| g.iter().any(|s| s == variable)) {
        return None;
    }
    match found {
        Some(Value::String(s)) if has_token(s) => return None,
        Some(Value::String(s)) => out.push_str(s),
        Some(other) => out.push_str(&to_s(other)),
        None => {}
    }
    Some(())
}

/// What the tokens of one String cost: a step each, and a warning each
/// for a method call in the configuration.
#[derive(Default)]
struct Spent {
    steps: u64,
    warnings: usize,
}

impl Spent {
    fn token(&mut self, method: bool, config: bool) {
        self.steps += 1;
        self.warnings += usize::from(method && config);
    }

    /// Charges an expansion of `len` bytes (its steps and bytes) and
    /// warns about it, if the budget has room; `None`, having charged
    /// nothing, if not.
    fn settle(self, len: usize, resolver: &mut dyn Resolver) -> Option<()> {
        if !resolver.meter().try_spend(self.steps, len) {
            return None;
        }
        for _ in 0..self.warnings {
            resolver.warn("Use of interpolation methods in hiera configuration file is deprecated");
        }
        Some(())
    }
}

/// A token the fast path evaluates.
enum Token<'t> {
    /// One of [`EMPTY_INTERPOLATIONS`]: nothing, and no step.
    Empty,
    /// A scope variable `key`, named through `scope()` if `method`.
    Scope { key: &'t str, method: bool },
}

/// What `do_interpolation` would do with the token holding `variable`, if
/// it is one the fast path knows: a key that `split_key` keeps whole (no
/// `.` nor quote) and that is no Array index, on one line.
fn plain_token(variable: &str) -> Option<Token<'_>> {
    // The usual token first, `name` or `::name`: word characters and
    // colons only, so no blank to strip, no method call, no quote or dot.
    let bytes = variable.as_bytes();
    if bytes
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
    {
        return match variable {
            "" | "::" => Some(Token::Empty),
            _ if bytes.iter().all(u8::is_ascii_digit) => None,
            key => Some(Token::Scope { key, method: false }),
        };
    }
    if EMPTY_INTERPOLATIONS.contains(&ruby_strip(variable)) {
        return Some(Token::Empty);
    }
    if variable.contains('\n') {
        return None;
    }
    let (key, method) = match method_call(variable) {
        Some(("scope", arg)) => (quoted_key(arg)?, true),
        Some(_) => return None,
        None => (variable, false),
    };
    let whole = !key.is_empty() && memchr::memchr3(b'.', b'\'', b'"', key.as_bytes()).is_none();
    (whole && !is_index(key)).then_some(Token::Scope { key, method })
}

#[cfg(test)]
thread_local! {
    /// Set by the differential tests: every String takes the general path.
    static GENERAL_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
fn general_only() -> bool {
    GENERAL_ONLY.with(std::cell::Cell::get)
}

#[cfg(not(test))]
fn general_only() -> bool {
    false
}

/// Runs `f` with the fast path off (on this thread), for differential
/// tests; restores it after, even if `f` panics.
#[cfg(test)]
pub(crate) fn without_fast_path<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            GENERAL_ONLY.with(|g| g.set(self.0));
        }
    }
    let _restore = Restore(GENERAL_ONLY.with(|g| g.replace(true)));
    f()
}

#[cfg(test)]
mod tests;
