//! The variables a lookup sees: what `puppet lookup --node N --facts F`
//! puts in Puppet's top scope without compiling a catalog (the node's
//! parameters, `environment`, `trusted` and `facts`). Ported from
//! puppet/parser/compiler.rb (`set_node_parameters`) and
//! puppet/context/trusted_information.rb (`local`).

use crate::hiera::{Hash, Value};

/// Top-scope variables by name.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    vars: Hash,
}

impl Scope {
    /// The top scope of a node whose facts are `facts` (as given to
    /// `--facts`), in environment `environment`.
    pub fn for_node(facts: Hash, environment: &str) -> Scope {
        let mut vars = facts.clone();
        vars.insert(Value::str("environment"), Value::str(environment));
        // A local lookup trusts the `clientcert` parameter, if any.
        let certname = facts.get(&Value::str("clientcert")).and_then(Value::as_str);
        let (hostname, domain) = match certname.map(|c| c.split_once('.').unwrap_or((c, ""))) {
            Some((h, d)) => (
                Value::str(h),
                if certname.is_some_and(|c| c.contains('.')) {
                    Value::str(d)
                } else {
                    Value::Nil
                },
            ),
            None => (Value::Nil, Value::Nil),
        };
        let mut trusted = Hash::default();
        trusted.insert(Value::str("authenticated"), Value::str("local"));
        trusted.insert(
            Value::str("certname"),
            certname.map_or(Value::Nil, Value::str),
        );
        trusted.insert(Value::str("extensions"), Value::Hash(Hash::default()));
        trusted.insert(Value::str("hostname"), hostname);
        trusted.insert(Value::str("domain"), domain);
        trusted.insert(Value::str("external"), Value::Hash(Hash::default()));
        vars.insert(Value::str("trusted"), Value::Hash(trusted));
        vars.insert(Value::str("facts"), Value::Hash(facts));
        Scope { vars }
    }

    /// A variable (`::name` is the same top-scope variable); `None` when
    /// it is not set, which Puppet warns about.
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        let name = name.strip_prefix("::").unwrap_or(name);
        self.vars.get(&Value::str(name))
    }

    /// The same scope with `name` set (mapped_paths' local variable).
    pub(crate) fn with(&self, name: &str, value: Value) -> Scope {
        let mut vars = self.vars.clone();
        vars.insert(Value::str(name), value);
        Scope { vars }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusted_comes_from_clientcert() {
        let mut facts = Hash::default();
        facts.insert(Value::str("clientcert"), Value::str("web1.example.com"));
        let scope = Scope::for_node(facts, "production");
        let trusted = scope.get("trusted").and_then(Value::as_hash).unwrap();
        assert_eq!(
            trusted.get(&Value::str("hostname")),
            Some(&Value::str("web1"))
        );
        assert_eq!(
            trusted.get(&Value::str("domain")),
            Some(&Value::str("example.com"))
        );
        assert_eq!(scope.get("::environment"), Some(&Value::str("production")));
    }
}
