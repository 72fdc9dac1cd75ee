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
use crate::hiera::value::{Hash, StrKey, Value};

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
    let (mut copied, mut steps, mut warnings) = (0, 0u64, 0usize);
    while let Some((start, end)) = next_token(data, copied) {
        out.push_str(&data[copied..start]);
        copied = end;
        let variable = &data[start + 2..end - 1];
        let Token::Scope { key, method } = plain_token(variable)? else {
            continue;
        };
        if guard
            .as_ref()
            .is_some_and(|g| g.iter().any(|s| s == variable))
        {
            return None;
        }
        steps += 1;
        warnings += usize::from(method && config);
        match scope.get(&StrKey(key)) {
            Some(Value::String(s)) if has_token(s) => return None,
            Some(Value::String(s)) => out.push_str(s),
            Some(other) => out.push_str(&to_s(other)),
            None => {}
        }
    }
    out.push_str(&data[copied..]);
    drop(guard);
    if !resolver.meter().try_spend(steps, out.len()) {
        return None;
    }
    for _ in 0..warnings {
        resolver.warn("Use of interpolation methods in hiera configuration file is deprecated");
    }
    Some(out)
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
