//! `create_additions`, which `JSON.load` turns on: every object is looked
//! up as `JSON.deep_const_get(object["json_class"])` and, when the class
//! says `json_creatable?`, replaced by `Class.json_create(object)`.
//!
//! A `-j` scope file is a plain Hash and has no `json_class`: an absent or
//! null one is the only case that matters and is exact. For the rest we
//! know the constants a `hiera` process is sure to have (core classes and
//! modules, `JSON`, `Hiera`), `String.json_create` (the one creatable class
//! of plain `require 'json'`), and Ruby's errors for unknown or malformed
//! names, with their error_highlight snippets (lines of json/common.rb).
//! Not modelled: DidYouMean suggestions on near-miss names, other String
//! subclasses, constants that are not classes or modules (`ARGV`), and
//! strings that are not UTF-8 (`pack` makes binary strings).

use crate::hiera::error::{ErrorClass, HieraError, Result};
use crate::hiera::render::ruby;
use crate::hiera::value::{Hash, Value};
use num_bigint::BigInt;
use num_traits::{FromPrimitive, ToPrimitive};

/// `JSON.create_id`.
const CREATE_ID: &str = "json_class";

/// error_highlight's snippets for the frames that raise (json/common.rb of
/// Ruby 3.1.2).
const AT_CONST_DEFINED: &str =
    "\n\n        when p.const_defined?(c, true) then p.const_get(c)\n              ^^^^^^^^^^^^^^^";
const AT_CONST_MISSING: &str = "\n\n            p.const_missing(c)\n             ^^^^^^^^^^^^^^";
const AT_PARSE: &str =
    "\n\n    Parser.new(source, **(opts||{})).parse\n                                    ^^^^^^";

/// What a constant is, as far as `json_create` cares.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Const {
    /// A class without `json_create`: the object stays a Hash.
    Class,
    /// A module: `json_creatable?` is a method of Class only.
    Module,
    /// String, with `String.json_create`.
    String,
}

/// Top-level classes and modules of a Ruby 3.1 process running `hiera`.
const CLASSES: &[&str] = &[
    "ArgumentError",
    "Array",
    "BasicObject",
    "Binding",
    "Class",
    "Complex",
    "Dir",
    "EOFError",
    "Encoding",
    "EncodingError",
    "Enumerator",
    "Exception",
    "FalseClass",
    "Fiber",
    "FiberError",
    "File",
    "Float",
    "FloatDomainError",
    "FrozenError",
    "Hash",
    "Hiera",
    "IO",
    "IOError",
    "IndexError",
    "Integer",
    "Interrupt",
    "KeyError",
    "LoadError",
    "LocalJumpError",
    "MatchData",
    "Method",
    "Module",
    "NameError",
    "NilClass",
    "NoMatchingPatternError",
    "NoMemoryError",
    "NoMethodError",
    "NotImplementedError",
    "Numeric",
    "Object",
    "Proc",
    "Random",
    "Range",
    "RangeError",
    "Rational",
    "Regexp",
    "RegexpError",
    "RuntimeError",
    "ScriptError",
    "SecurityError",
    "SignalException",
    "StandardError",
    "StopIteration",
    "Struct",
    "Symbol",
    "SyntaxError",
    "SystemCallError",
    "SystemExit",
    "SystemStackError",
    "Thread",
    "ThreadError",
    "Time",
    "TrueClass",
    "TypeError",
    "UnboundMethod",
    "ZeroDivisionError",
];
const MODULES: &[&str] = &[
    "Comparable",
    "Enumerable",
    "Errno",
    "FileTest",
    "GC",
    "JSON",
    "Kernel",
    "Marshal",
    "Math",
    "ObjectSpace",
    "Process",
    "Signal",
    "Warning",
];

fn lookup_top(name: &str) -> Option<Const> {
    if name == "String" {
        Some(Const::String)
    } else if CLASSES.contains(&name) {
        Some(Const::Class)
    } else if MODULES.contains(&name) {
        Some(Const::Module)
    } else {
        None
    }
}

/// `p.const_defined?(c, true)`: the namespace's own constants, then
/// (inherited from Object) the top level.
fn lookup(namespace: &str, name: &str) -> Option<Const> {
    match (namespace, name) {
        // Its json_creatable? is false until someone sets it.
        ("JSON", "GenericObject") => Some(Const::Class),
        _ => lookup_top(name),
    }
}

/// Ruby's constant name check (`wrong constant name` otherwise).
fn is_const_name(c: &str) -> bool {
    let mut chars = c.chars();
    chars.next().is_some_and(char::is_uppercase)
        && chars.all(|ch| ch == '_' || ch.is_ascii_alphanumeric() || !ch.is_ascii())
}

/// The object, or what its `json_class` makes of it.
pub(super) fn create(hash: Hash) -> Result<Value> {
    let name = match hash.get(&Value::str(CREATE_ID)) {
        None | Some(Value::Nil) => return Ok(Value::Hash(hash)),
        Some(name) => ruby::to_s(name),
    };
    match deep_const_get(&name)? {
        Const::Class => Ok(Value::Hash(hash)),
        Const::Module => Err(HieraError::new(
            ErrorClass::NoMethodError,
            format!(
                "undefined method `json_creatable?' for {}:Module{AT_PARSE}",
                name.rsplit("::")
                    .find(|c| !c.is_empty())
                    .unwrap_or_default()
            ),
        )),
        Const::String => string_json_create(&hash),
    }
}

/// `JSON.deep_const_get(path)`.
fn deep_const_get(path: &str) -> Result<Const> {
    let mut current = Const::Class; // Object
    let mut qualified = String::new();
    for c in ruby_split(path) {
        if c.is_empty() {
            continue;
        }
        if !is_const_name(c) {
            return Err(HieraError::new(
                ErrorClass::NameError,
                format!("wrong constant name {c}{AT_CONST_DEFINED}"),
            ));
        }
        let missing = if qualified.is_empty() {
            c.to_owned()
        } else {
            format!("{qualified}::{c}")
        };
        current = lookup(&qualified, c).ok_or_else(|| {
            HieraError::new(
                ErrorClass::ArgumentError,
                format!(
                    "can't get const {path}: uninitialized constant {missing}{AT_CONST_MISSING}"
                ),
            )
        })?;
        qualified = missing;
    }
    Ok(current)
}

/// `String#split(/::/)`: trailing empty fields dropped.
fn ruby_split(path: &str) -> Vec<&str> {
    let mut fields: Vec<&str> = path.split("::").collect();
    while fields.last().is_some_and(|f| f.is_empty()) {
        fields.pop();
    }
    fields
}

/// `String.json_create(o)`: `o['raw'].pack('C*')`, the low byte of each
/// Integer.
fn string_json_create(hash: &Hash) -> Result<Value> {
    let raw = hash.get(&Value::str("raw")).unwrap_or(&Value::Nil);
    let Value::Array(items) = raw else {
        let receiver = match raw {
            Value::Nil => "nil".to_owned(),
            other => ruby::inspect(other),
        };
        let hint = if matches!(raw, Value::String(_)) {
            "\nDid you mean?  unpack"
        } else {
            ""
        };
        return Err(HieraError::new(
            ErrorClass::NoMethodError,
            format!(
                "undefined method `pack' for {receiver}:{}{AT_PARSE}{hint}",
                raw.class_name()
            ),
        ));
    };
    let mut bytes = Vec::with_capacity(items.len());
    for item in items {
        let low = match item {
            Value::Int(n) => *n as u8,
            Value::BigInt(n) => low_byte(n),
            Value::Float(f) if f.is_finite() => {
                BigInt::from_f64(f.trunc()).map_or(0, |n| low_byte(&n))
            }
            other => {
                let what = match other {
                    Value::Nil => "nil",
                    Value::Bool(true) => "true",
                    Value::Bool(false) => "false",
                    _ => other.class_name(),
                };
                return Err(HieraError::new(
                    ErrorClass::TypeError,
                    format!("no implicit conversion of {what} into Integer"),
                ));
            }
        };
        bytes.push(low);
    }
    // A binary String; one that is not UTF-8 has no exact place here.
    Ok(Value::String(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The low byte of a two's-complement integer.
fn low_byte(n: &BigInt) -> u8 {
    let m: BigInt = n & BigInt::from(0xFF);
    m.to_u8().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    /// A value, or an error's class and first line.
    type Want = std::result::Result<Value, (ErrorClass, &'static str)>;

    #[test]
    fn create_table() {
        let ok = |h: Hash| Want::Ok(Value::Hash(h));
        let cases: Vec<(Hash, Want)> = vec![
            (rhash! {"a" => 1}, ok(rhash! {"a" => 1})),
            (
                rhash! {"json_class" => Value::Nil},
                ok(rhash! {"json_class" => Value::Nil}),
            ),
            (
                rhash! {"json_class" => "Hash"},
                ok(rhash! {"json_class" => "Hash"}),
            ),
            (
                rhash! {"json_class" => "::Hash::"},
                ok(rhash! {"json_class" => "::Hash::"}),
            ),
            (rhash! {"json_class" => ""}, ok(rhash! {"json_class" => ""})),
            (
                rhash! {"json_class" => "JSON::GenericObject"},
                ok(rhash! {"json_class" => "JSON::GenericObject"}),
            ),
            (
                rhash! {"json_class" => "String", "raw" => Value::Array(vec![104.into(), 361.into(), Value::Float(-151.5)])},
                Ok("hii".into()),
            ),
            (
                rhash! {"json_class" => "Nope"},
                Err((
                    ErrorClass::ArgumentError,
                    "can't get const Nope: uninitialized constant Nope",
                )),
            ),
            (
                rhash! {"json_class" => "Hash::Nope"},
                Err((
                    ErrorClass::ArgumentError,
                    "can't get const Hash::Nope: uninitialized constant Hash::Nope",
                )),
            ),
            (
                rhash! {"json_class" => 1},
                Err((ErrorClass::NameError, "wrong constant name 1")),
            ),
            (
                rhash! {"json_class" => "Kernel"},
                Err((
                    ErrorClass::NoMethodError,
                    "undefined method `json_creatable?' for Kernel:Module",
                )),
            ),
            (
                rhash! {"json_class" => "String"},
                Err((
                    ErrorClass::NoMethodError,
                    "undefined method `pack' for nil:NilClass",
                )),
            ),
            (
                rhash! {"json_class" => "String", "raw" => Value::Array(vec![Value::Nil])},
                Err((
                    ErrorClass::TypeError,
                    "no implicit conversion of nil into Integer",
                )),
            ),
        ];
        for (hash, want) in cases {
            let got = create(hash.clone());
            match (got, want) {
                (Ok(v), Ok(w)) => assert_eq!(v, w, "{hash:?}"),
                (Err(e), Err((class, first_line))) => {
                    assert_eq!(e.class, class, "{hash:?}");
                    assert_eq!(e.message.lines().next(), Some(first_line), "{hash:?}");
                }
                (got, want) => panic!("{hash:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn split_like_ruby() {
        assert_eq!(ruby_split("A::B::"), ["A", "B"]);
        assert_eq!(ruby_split("::A"), ["", "A"]);
        assert!(ruby_split("::").is_empty());
        assert!(ruby_split("").is_empty());
    }
}
