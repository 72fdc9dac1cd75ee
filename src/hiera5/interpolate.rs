//! Hiera 5 interpolation: `%{var}`, `%{::var}`, dotted and quoted
//! segments, and the methods `lookup`, `hiera`, `alias`, `literal` and
//! `scope`. Ported from puppet/pops/lookup/interpolation.rb; nested
//! lookups go back through the one lookup path ([`Lookup::lookup_nested`]).

use super::error::{Error, Result};
use super::explain::Kind;
use super::key::{Segment, split_key};
use super::lookup::{Files, Lookup};
use super::scope::Scope;
use crate::hiera::budget::Meter;
use crate::hiera::render::ruby;
use crate::hiera::{Hash, Value};
use std::sync::LazyLock;

/// What an interpolation expression asks for.
enum Method {
    Scope,
    Lookup,
    Alias,
    Literal,
}

const EMPTY: [&str; 6] = ["", "::", "\"\"", "''", "\"::\"", "'::'"];

impl<F: Files> Lookup<'_, F> {
    /// `interpolate(value, invocation, allow_methods)`: every String in
    /// `value`, Hash keys included, with its `%{…}` replaced.
    ///
    /// # Errors
    /// Puppet's interpolation errors, and those of nested lookups.
    pub(crate) fn interpolate(
        &self,
        value: Value,
        scope: &Scope,
        allow_methods: bool,
    ) -> Result<Value> {
        Ok(match value {
            Value::String(s) if s.contains("%{") => {
                self.interpolate_string(&s, scope, allow_methods)?
            }
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .map(|v| self.interpolate(v, scope, allow_methods))
                    .collect::<Result<_>>()?,
            ),
            Value::Hash(h) => {
                let mut out = Hash::with_capacity_and_hasher(h.len(), Default::default());
                for (k, v) in h {
                    out.insert(
                        self.interpolate(k, scope, allow_methods)?,
                        self.interpolate(v, scope, allow_methods)?,
                    );
                }
                Value::Hash(out)
            }
            other => other,
        })
    }

    /// A String to a String, or, for an `alias`, the aliased value.
    pub(crate) fn interpolate_str(&self, subject: &str, scope: &Scope) -> Result<String> {
        match self.interpolate_string(subject, scope, false)? {
            Value::String(s) => Ok(s),
            other => Ok(ruby::to_s(&other)),
        }
    }

    fn interpolate_string(
        &self,
        subject: &str,
        scope: &Scope,
        allow_methods: bool,
    ) -> Result<Value> {
        self.with(
            || Kind::Interpolate(subject.to_owned()),
            || self.replace(subject, scope, allow_methods),
        )
    }

    /// The `gsub` of `interpolate_string`.
    fn replace(&self, subject: &str, scope: &Scope, allow_methods: bool) -> Result<Value> {
        static TOKEN: LazyLock<regex::Regex> =
            LazyLock::new(|| regex::Regex::new(r"%\{([^\}]*)\}").expect("valid"));
        let mut out = String::with_capacity(subject.len());
        let mut at = 0;
        for caps in TOKEN.captures_iter(subject) {
            let whole = caps.get(0).expect("match");
            out.push_str(&subject[at..whole.start()]);
            at = whole.end();
            let expr = caps[1].trim();
            if EMPTY.contains(&expr) {
                continue;
            }
            self.spend(Meter::step)?;
            let (method, key) = method_and_data(expr, allow_methods)?;
            if matches!(method, Method::Alias) && whole.as_str() != subject {
                return Err(Error::Interpolation(
                    "'alias' interpolation is only permitted if the expression is equal to the entire string".into(),
                ));
            }
            let value = match method {
                Method::Literal => Value::str(key),
                Method::Lookup | Method::Alias => self.lookup_nested(key)?,
                Method::Scope => self.scope_value(key, scope, subject)?,
            };
            if matches!(method, Method::Alias) {
                self.spend(|m| m.value(&value))?;
                return Ok(value);
            }
            let name = match method {
                Method::Scope => format!("scope:{key}"),
                _ => key.to_owned(),
            };
            let value = self.checked(&name, || self.interpolate(value, scope, allow_methods))?;
            let text = ruby::to_s(&value);
            self.spend(|m| m.bytes(text.len()))?;
            out.push_str(&text);
        }
        out.push_str(&subject[at..]);
        Ok(Value::String(out))
    }

    /// The `scope` method (and a bare variable): a top-scope variable,
    /// dug into by the key's further segments; nil when absent.
    pub(crate) fn scope_value(&self, key: &str, scope: &Scope, subject: &str) -> Result<Value> {
        let mut segments =
            split_key(key).ok_or_else(|| Error::KeySyntax(format!("string: {subject}")))?;
        let root = match segments.remove(0) {
            Segment::Key(k) => k,
            Segment::Index(i) => i.to_string(),
        };
        let value = self.with(
            || Kind::Scope("Global Scope".into()),
            || {
                let value = scope.get(&root);
                if let Some(v) = value {
                    self.explain(|e| e.found(&root, v));
                }
                Ok(value)
            },
        )?;
        let Some(value) = value else {
            self.warn(format!(
                "Undefined variable '{root}'; \n   (file & line not available)"
            ));
            return Ok(Value::Nil);
        };
        if segments.is_empty() {
            return Ok(value.clone());
        }
        Ok(self
            .dig(key, &segments, value.clone())?
            .unwrap_or(Value::Nil))
    }
}

/// `get_method_and_data`: `name('key')` or `name("key")`, else a variable.
fn method_and_data(expr: &str, allow_methods: bool) -> Result<(Method, &str)> {
    static CALL: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r#"^(\w+)\((?:"([^"]+)"|'([^']+)')\)$"#).expect("valid")
    });
    let Some(caps) = CALL.captures(expr) else {
        return Ok((Method::Scope, expr));
    };
    if !allow_methods {
        return Err(Error::Interpolation(
            "Interpolation using method syntax is not allowed in this context".into(),
        ));
    }
    let name = caps.get(1).expect("name").as_str();
    let data = caps.get(2).or_else(|| caps.get(3)).expect("data").as_str();
    let method = match name {
        "lookup" | "hiera" => Method::Lookup,
        "alias" => Method::Alias,
        "literal" => Method::Literal,
        "scope" => Method::Scope,
        other => {
            return Err(Error::Interpolation(format!(
                "Unknown interpolation method '{other}'"
            )));
        }
    };
    Ok((method, data))
}
