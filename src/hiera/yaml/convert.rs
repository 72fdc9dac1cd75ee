//! Psych's `Visitors::NoAliasRuby` under `YAML.load`'s restrictions: node
//! tree → values, with Psych's tag dispatch, merge keys and refusals (any
//! alias; every class but Symbol).

use super::ruby::{float_of, unpack_base64};
use super::scalar::tokenize;
use super::tree::Node;
use super::{bad_alias, disallowed};
use crate::hiera::{ErrorClass, Hash, HieraError, Result, Value};

const STR: &str = "tag:yaml.org,2002:str";

/// Converts the document root.
///
/// # Errors
/// What Psych raises while converting: `Psych::BadAlias`,
/// `Psych::DisallowedClass`, and the Ruby errors of its conversions.
pub(super) fn to_value(node: &Node<'_>) -> Result<Value> {
    accept(node)
}

fn accept(node: &Node<'_>) -> Result<Value> {
    match node {
        Node::Alias { target: None, name } => Err(bad_alias(name)),
        Node::Alias {
            target: Some(node), ..
        } => accept(node),
        Node::Scalar { value, tag, quoted } => scalar(value, tag.as_deref(), *quoted),
        Node::Sequence { tag, items } => sequence(tag.as_deref(), items),
        Node::Mapping { tag, pairs } => mapping(tag.as_deref(), pairs),
    }
}

/// The class named by `/^!(?:str|ruby\/string)(?::(.*))?$/`, if the tag is
/// one of those: `Some(None)` for a plain String.
fn string_tag(tag: &str) -> Option<Option<&str>> {
    let rest = tag
        .strip_prefix("!str")
        .or_else(|| tag.strip_prefix("!ruby/string"))?;
    if rest.is_empty() {
        return Some(None);
    }
    let class = rest.strip_prefix(':')?;
    Some((!class.is_empty()).then_some(class))
}

/// `resolve_class(name)` in the restricted loader: an empty name resolves
/// to nil, every other name is refused (only Symbol is permitted, and it
/// never comes this way).
fn resolve_class(name: &str) -> Result<()> {
    if name.is_empty() {
        Ok(())
    } else {
        Err(disallowed(name))
    }
}

/// `nil.allocate`, where Psych allocates an instance of an empty class name.
fn no_method(method: &str) -> HieraError {
    HieraError::new(
        ErrorClass::NoMethodError,
        format!("undefined method `{method}' for nil:NilClass"),
    )
}

/// `/^!ruby\/object:?(.*)?$/` and friends: the text after `prefix`, with
/// an optional colon.
fn colon_suffix<'t>(tag: &'t str, prefix: &str) -> Option<&'t str> {
    let rest = tag.strip_prefix(prefix)?;
    Some(rest.strip_prefix(':').unwrap_or(rest))
}

/// `/^prefix(.*)$/` with the colon required.
fn required_suffix<'t>(tag: &'t str, prefixes: &[&str]) -> Option<&'t str> {
    prefixes.iter().find_map(|p| tag.strip_prefix(p))
}

fn scalar(value: &str, tag: Option<&str>, quoted: bool) -> Result<Value> {
    if quoted {
        return Ok(Value::str(value));
    }
    let Some(tag) = tag else {
        return tokenize(value);
    };
    match tag {
        "!binary" | "tag:yaml.org,2002:binary" => Ok(Value::String(
            String::from_utf8_lossy(&unpack_base64(value)).into_owned(),
        )),
        STR => Ok(Value::str(value)),
        "!ruby/object:BigDecimal" => Err(disallowed("BigDecimal")),
        "!ruby/object:DateTime" => Err(disallowed("DateTime")),
        // An Encoding object has no place in the value model; Hiera's
        // parse_answer would turn it into nil anyway.
        "!ruby/encoding" => Ok(Value::Nil),
        "!ruby/object:Complex" => Err(disallowed("Complex")),
        "!ruby/object:Rational" => Err(disallowed("Rational")),
        "!ruby/class" | "!ruby/module" => resolve_class(value).map(|()| Value::Nil),
        "tag:yaml.org,2002:float" | "!float" => Ok(Value::Float(float_of(tokenize(value)?)?)),
        "!ruby/regexp" => Err(disallowed("Regexp")),
        "!ruby/range" => Err(disallowed("Range")),
        _ => {
            if let Some(class) = string_tag(tag) {
                if let Some(class) = class {
                    return Err(disallowed(class));
                }
                return Ok(Value::str(value));
            }
            if tag.starts_with("!ruby/sym") {
                return Ok(Value::Symbol(value.to_owned()));
            }
            tokenize(value)
        }
    }
}

fn sequence(tag: Option<&str>, items: &[Node<'_>]) -> Result<Value> {
    match tag {
        Some("!omap" | "tag:yaml.org,2002:omap") => {
            // Psych::Omap, a Hash, built from each item's first and last
            // children (a one-pair mapping's key and value).
            let mut map = Hash::default();
            for item in items {
                let (first, last) = match item {
                    Node::Mapping { pairs, .. } => match (pairs.first(), pairs.last()) {
                        (Some((k, _)), Some((_, v))) => (k, v),
                        _ => {
                            return Err(HieraError::new(
                                ErrorClass::NoMethodError,
                                "undefined method `visit_NilClass' for Psych::Visitors::NoAliasRuby",
                            ));
                        }
                    },
                    Node::Sequence { items, .. } => match (items.first(), items.last()) {
                        (Some(k), Some(v)) => (k, v),
                        _ => {
                            return Err(HieraError::new(
                                ErrorClass::NoMethodError,
                                "undefined method `visit_NilClass' for Psych::Visitors::NoAliasRuby",
                            ));
                        }
                    },
                    _ => return Err(no_method("first")),
                };
                let key = accept(first)?;
                let value = accept(last)?;
                map.insert(key, value);
            }
            Ok(Value::Hash(map))
        }
        Some(t) => match required_suffix(t, &["!seq:", "!ruby/array:"]) {
            Some("") => Err(no_method("allocate")),
            Some(class) => Err(disallowed(class)),
            None => plain_sequence(items),
        },
        None => plain_sequence(items),
    }
}

fn plain_sequence(items: &[Node<'_>]) -> Result<Value> {
    items
        .iter()
        .map(accept)
        .collect::<Result<Vec<_>>>()
        .map(Value::Array)
}

fn mapping(tag: Option<&str>, pairs: &[(Node<'_>, Node<'_>)]) -> Result<Value> {
    let Some(tag) = tag else {
        return revive_hash(pairs);
    };
    if let Some(name) = colon_suffix(tag, "!ruby/struct") {
        return Err(disallowed(if name.is_empty() { "Struct" } else { name }));
    }
    if let Some(name) = colon_suffix(tag, "!ruby/object") {
        return match name {
            "" => Err(disallowed("Object")),
            "Hash" => revive_hash(pairs),
            other => Err(disallowed(other)),
        };
    }
    if let Some(class) = string_tag(tag).or((tag == STR).then_some(None)) {
        if let Some(class) = class {
            return Err(disallowed(class));
        }
        return string_mapping(pairs);
    }
    if let Some(class) = required_suffix(tag, &["!ruby/array:"]) {
        return match class {
            "" => Err(no_method("allocate")),
            other => Err(disallowed(other)),
        };
    }
    if tag == "!ruby/range" {
        return Err(disallowed("Range"));
    }
    if let Some(name) = colon_suffix(tag, "!ruby/exception") {
        // The members are read before the class is looked up.
        for (k, v) in pairs {
            accept(k)?;
            accept(v)?;
        }
        return Err(disallowed(if name.is_empty() { "Exception" } else { name }));
    }
    if tag == "!set" || tag == "tag:yaml.org,2002:set" {
        return Err(disallowed("Psych::Set"));
    }
    if let Some(rest) = tag.strip_prefix("!ruby/hash-with-ivars") {
        if let Some(class) = rest.strip_prefix(':') {
            resolve_class(class)?;
            if class.is_empty() {
                return Err(no_method("allocate"));
            }
        } else if !rest.is_empty() {
            return revive_hash(pairs);
        }
        return hash_with_ivars(pairs);
    }
    if let Some(class) = required_suffix(tag, &["!map:", "!ruby/hash:"]) {
        return match class {
            "" => Err(no_method("allocate")),
            other => Err(disallowed(other)),
        };
    }
    if tag == "!omap" || tag == "tag:yaml.org,2002:omap" {
        return Err(disallowed("Psych::Omap"));
    }
    if let Some(class) = required_suffix(tag, &["!ruby/marshalable:"]) {
        return match class {
            "" => Err(no_method("allocate")),
            other => Err(disallowed(other)),
        };
    }
    revive_hash(pairs)
}

/// `!str` on a mapping: the value of its `str` key (instance variables
/// from the other keys are invisible); nil without one.
fn string_mapping(pairs: &[(Node<'_>, Node<'_>)]) -> Result<Value> {
    let mut string = None;
    let mut members = false;
    for (k, v) in pairs {
        let key = accept(k)?;
        let value = accept(v)?;
        if key == Value::str("str") {
            string = Some(value);
        } else {
            members = true;
        }
    }
    match string {
        Some(s) => Ok(s),
        None if members => Err(HieraError::new(
            ErrorClass::RuntimeError,
            "can't modify frozen NilClass: nil",
        )),
        None => Ok(Value::Nil),
    }
}

/// `!ruby/hash-with-ivars`: the `elements` mapping is the Hash.
fn hash_with_ivars(pairs: &[(Node<'_>, Node<'_>)]) -> Result<Value> {
    let mut hash = Hash::default();
    for (k, v) in pairs {
        let Node::Scalar { value: key, .. } = k else {
            continue;
        };
        match &**key {
            "elements" => {
                if let Node::Mapping { pairs, .. } = v {
                    revive_into(&mut hash, pairs)?;
                }
            }
            "ivars" => {
                if let Node::Mapping { pairs, .. } = v {
                    for (ik, iv) in pairs {
                        accept(ik)?;
                        accept(iv)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(Value::Hash(hash))
}

fn revive_hash(pairs: &[(Node<'_>, Node<'_>)]) -> Result<Value> {
    let mut hash = Hash::with_capacity_and_hasher(pairs.len(), Default::default());
    revive_into(&mut hash, pairs)?;
    Ok(Value::Hash(hash))
}

/// Psych's `revive_hash`: later keys replace earlier ones in place, and a
/// `<<` key (unless tagged `!!str`) merges a mapping or a list of mappings.
fn revive_into(hash: &mut Hash, pairs: &[(Node<'_>, Node<'_>)]) -> Result<()> {
    for (k, v) in pairs {
        let key = accept(k)?;
        let val = accept(v)?;
        let is_merge = matches!(&key, Value::String(s) if s == "<<") && k.tag() != Some(STR);
        if !is_merge {
            hash.insert(key, val);
            continue;
        }
        match (v, val) {
            // Psych merges an alias's value too, if it is a Hash.
            (Node::Mapping { .. } | Node::Alias { .. }, Value::Hash(h)) => hash.extend(h),
            (Node::Sequence { .. }, Value::Array(list))
                if list.iter().all(|m| matches!(m, Value::Hash(_))) =>
            {
                // `val.reverse_each { |m| h.merge!(m) }`: earlier mappings
                // win, and keys are ordered from the last mapping.
                let mut merged = Hash::default();
                for m in list.into_iter().rev() {
                    if let Value::Hash(m) = m {
                        merged.extend(m);
                    }
                }
                hash.extend(merged);
            }
            // An empty omap reverse-iterates nothing and merges nothing.
            (Node::Sequence { .. }, Value::Hash(h)) if h.is_empty() => {}
            (_, val) => {
                hash.insert(key, val);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn scalar_node(value: &str, tag: Option<&str>) -> Node<'static> {
        Node::Scalar {
            value: Cow::Owned(value.to_owned()),
            tag: tag.map(str::to_owned),
            quoted: false,
        }
    }

    #[test]
    fn scalar_tags() {
        let cases: Vec<(&str, Option<&str>, Result<Value>)> = vec![
            ("123", Some(STR), Ok(Value::str("123"))),
            ("123", Some("!str"), Ok(Value::str("123"))),
            ("1", Some("!str:Foo"), Err(disallowed("Foo"))),
            ("42", Some("tag:yaml.org,2002:int"), Ok(Value::Int(42))),
            ("1", Some("!float"), Ok(Value::Float(1.0))),
            ("aGk=", Some("!binary"), Ok(Value::str("hi"))),
            ("foo", Some("!ruby/symbol"), Ok(Value::Symbol("foo".into()))),
            ("foo", Some("!ruby/sym"), Ok(Value::Symbol("foo".into()))),
            ("", Some("!ruby/class"), Ok(Value::Nil)),
            ("Foo", Some("!ruby/module"), Err(disallowed("Foo"))),
            ("/a/", Some("!ruby/regexp"), Err(disallowed("Regexp"))),
            ("123", Some("!"), Ok(Value::Int(123))),
            ("123", Some("!local"), Ok(Value::Int(123))),
            (
                "2001-01-01",
                Some("!ruby/object:DateTime"),
                Err(disallowed("DateTime")),
            ),
        ];
        for (value, tag, want) in cases {
            assert_eq!(
                to_value(&scalar_node(value, tag)),
                want,
                "{tag:?} {value:?}"
            );
        }
    }

    #[test]
    fn collection_tags() {
        let map = |tag: &str| Node::Mapping {
            tag: Some(tag.to_owned()),
            pairs: vec![(scalar_node("str", None), scalar_node("x", None))],
        };
        let seq = |tag: &str| Node::Sequence {
            tag: Some(tag.to_owned()),
            items: vec![scalar_node("1", None)],
        };
        let mut hash = Hash::default();
        hash.insert(Value::str("str"), Value::str("x"));
        let cases: Vec<(Node<'static>, Result<Value>)> = vec![
            (map("!ruby/object:Foo"), Err(disallowed("Foo"))),
            (map("!ruby/object"), Err(disallowed("Object"))),
            (map("!ruby/object:Hash"), Ok(Value::Hash(hash.clone()))),
            (map("!ruby/struct"), Err(disallowed("Struct"))),
            (map("!set"), Err(disallowed("Psych::Set"))),
            (map("tag:yaml.org,2002:set"), Err(disallowed("Psych::Set"))),
            (
                map("tag:yaml.org,2002:omap"),
                Err(disallowed("Psych::Omap")),
            ),
            (map("!str"), Ok(Value::str("x"))),
            (map("!map:Foo"), Err(disallowed("Foo"))),
            (map("tag:yaml.org,2002:map"), Ok(Value::Hash(hash))),
            (seq("!ruby/array:Foo"), Err(disallowed("Foo"))),
            (
                seq("tag:yaml.org,2002:seq"),
                Ok(Value::Array(vec![Value::Int(1)])),
            ),
        ];
        for (node, want) in cases {
            assert_eq!(to_value(&node), want, "{node:?}");
        }
    }
}
