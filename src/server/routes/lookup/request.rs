//! A lookup request's body parsed (`POST /api/v1/lookup`, docs/api.md):
//! each field decoded from the body's text straight into a [`Value`], then
//! checked for its type, every mistake refused naming the field.

use super::super::hierarchies::HierarchyId;
use super::super::pinned::Pin;
use crate::configdb::{HieraVersion, LevelPath};
use crate::hiera::hierarchy::Hierarchy;
use crate::hiera::lookup::Resolution;
use crate::hiera::{Hash, Value};
use crate::lookup::{Request, hash_resolution};
use crate::server::http::error::ApiError;
use crate::wire;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use std::cell::Cell;
use std::fmt;
use std::sync::Arc;

/// A parsed lookup request: one key, or several under one context.
pub(super) struct Parsed {
    pub(super) request: Request,
    pub(super) keys: Option<Vec<String>>,
    /// A registered hierarchy named in place of `request.hierarchy` (the
    /// handler looks it up: parsing needs no server state).
    pub(super) hierarchy_id: Option<HierarchyId>,
    /// A node whose stored scope the request's `scope` is layered over
    /// (read by [`prepare`], off the async workers).
    pub(super) node: Option<String>,
    /// The generation to answer at (`generation` or `tag`).
    pub(super) pin: Option<Pin>,
    /// Puppet's `merge` (Hiera 5 environments only): a strategy's name or
    /// a Hash with its options.
    pub(super) merge: Option<Value>,
    /// The first field given that only Hiera 3 environments take.
    hiera3_field: Option<&'static str>,
}

impl Parsed {
    /// A field given that an environment of `hiera` does not take.
    pub(super) fn misplaced(&self, hiera: HieraVersion) -> Option<&'static str> {
        match hiera {
            HieraVersion::Five => self.hiera3_field,
            HieraVersion::Three => self.merge.is_some().then_some("merge"),
        }
    }
}

pub(super) fn bad(message: impl Into<String>) -> ApiError {
    ApiError::BadRequest(message.into())
}

#[cfg(test)]
thread_local! {
    /// How many lookup bodies this thread parsed: a test shows a lookup
    /// is parsed once.
    pub(crate) static PARSES: Cell<usize> = const { Cell::new(0) };
}

pub(super) fn parse_request(bytes: &[u8]) -> Result<Parsed, ApiError> {
    #[cfg(test)]
    PARSES.with(|n| n.set(n.get() + 1));
    let Fields {
        unknown,
        values:
            [
                environment,
                level,
                key,
                keys,
                resolution,
                hierarchy,
                merge_behavior,
                deep_merge_options,
                scope,
                order_override,
                default,
                explain,
                hierarchy_id,
                node,
                generation,
                tag,
                merge,
            ],
    } = {
        let mut fields = Fields {
            unknown: None,
            values: Default::default(),
        };
        read_fields(bytes, &mut fields)?;
        fields
    };
    let given = |v: &Option<Value>| match v {
        None | Some(Value::Nil | Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    };
    // `hiera`'s three resolutions read as Puppet's merges in a Hiera 5
    // environment (`hierad lookup --server` always sends one).
    let named_resolution = matches!(&resolution,
        Some(Value::String(s) | Value::Symbol(s)) if matches!(s.as_str(), "priority" | "array" | "hash"));
    let hiera3_field = [
        ("level", &level),
        (
            "resolution",
            if named_resolution { &None } else { &resolution },
        ),
        ("hierarchy", &hierarchy),
        ("hierarchy_id", &hierarchy_id),
        ("merge_behavior", &merge_behavior),
        ("deep_merge_options", &deep_merge_options),
        ("order_override", &order_override),
    ]
    .into_iter()
    .find(|(_, v)| given(v))
    .map(|(name, _)| name);
    let merge = match merge {
        None | Some(Value::Nil) => None,
        Some(m @ (Value::String(_) | Value::Hash(_))) => Some(m),
        Some(_) => {
            return Err(bad(
                "merge is a strategy's name (first, unique, hash, deep) or an object with strategy and its options",
            ));
        }
    };
    if let Some(unknown) = unknown {
        return Err(bad(format!(
            "unknown field {unknown:?} in the lookup request"
        )));
    }
    let env = match environment {
        Some(Value::Int(n)) => n,
        Some(Value::String(s)) => s
            .parse()
            .map_err(|_| bad("environment must be an integer id"))?,
        Some(_) => return Err(bad("environment must be an integer id")),
        None => return Err(bad("the lookup request has no environment")),
    };
    let level = match level {
        None | Some(Value::Nil) => LevelPath::root(),
        Some(Value::String(s)) => LevelPath::parse_cli(&s).map_err(|e| bad(e.to_string()))?,
        Some(_) => return Err(bad("level is a string like \"nodes=node-1\"")),
    };
    let (key, keys) = match (key, keys) {
        (Some(Value::String(k)), None) => (k, None),
        (None, Some(Value::Array(list))) => {
            let keys = list
                .into_iter()
                .map(|k| match k {
                    Value::String(s) => Ok(s),
                    _ => Err(bad("keys must be strings")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            (String::new(), Some(keys))
        }
        (Some(_), Some(_)) => return Err(bad("give either key or keys, not both")),
        (None, None) => return Err(bad("the lookup request has no key")),
        _ => return Err(bad("key is a string and keys a list of strings")),
    };
    let resolution = match resolution {
        None | Some(Value::Nil) => Resolution::Priority,
        // A Symbol (a tagged `sym`) names the same resolution as its String.
        Some(Value::String(s) | Value::Symbol(s)) => match s.as_str() {
            "priority" => Resolution::Priority,
            "array" => Resolution::Array,
            "hash" => Resolution::Hash,
            _ => Resolution::Other(s),
        },
        Some(options @ Value::Hash(_)) => hash_resolution(&options)?,
        Some(_) => {
            return Err(bad(
                "resolution is \"priority\", \"array\", \"hash\" or an object of merge options",
            ));
        }
    };
    // Kept as decoded: the Array of Strings the lookup walks, compiled.
    let hierarchy = match hierarchy {
        None | Some(Value::Nil) => None,
        Some(Value::Array(levels)) if levels.iter().all(|l| matches!(l, Value::String(_))) => {
            Some(Arc::new(Hierarchy::new(Value::Array(levels))))
        }
        Some(_) => return Err(bad(BAD_HIERARCHY)),
    };
    let hierarchy_id = match hierarchy_id {
        None | Some(Value::Nil) => None,
        Some(_) if hierarchy.is_some() => {
            return Err(bad(
                "give either hierarchy or hierarchy_id (a registered hierarchy), not both",
            ));
        }
        Some(Value::String(s)) => Some(HierarchyId::parse(&s).ok_or_else(|| bad(BAD_ID))?),
        Some(_) => return Err(bad(BAD_ID)),
    };
    let scope = match scope {
        None | Some(Value::Nil) => Hash::default(),
        Some(Value::Hash(h)) => h,
        Some(_) => return Err(bad("scope is an object of variables")),
    };
    let node = match node {
        None | Some(Value::Nil) => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        Some(_) => return Err(bad("node is the name of a registered node")),
    };
    let explain = match explain {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(_) => return Err(bad("explain is true or false")),
    };
    let pin = Pin::of_lookup(generation, tag)?;
    Ok(Parsed {
        request: Request {
            env,
            level,
            key,
            resolution,
            hierarchy,
            merge_behavior,
            deep_merge_options,
            scope,
            order_override,
            default,
            explain,
        },
        keys,
        hierarchy_id,
        node,
        pin,
        merge,
        hiera3_field,
    })
}

/// What a bad `hierarchy` is told (a lookup's, or a registration's).
pub(crate) const BAD_HIERARCHY: &str = "hierarchy is a list of datasource names";

const BAD_ID: &str =
    "hierarchy_id is the id POST /api/v1/hierarchies answered: 32 lowercase hex digits";

/// A lookup request's fields as sent, each decoded from the body's text
/// straight into a [`Value`] (no JSON tree in between); [`parse_request`]
/// checks their types.
struct Fields {
    /// The first field the API does not know.
    unknown: Option<String>,
    /// In the order of [`FIELDS`].
    values: [Option<Value>; FIELDS.len()],
}

/// The fields of a lookup request, named without allocating.
enum Field {
    /// An index into [`FIELDS`].
    Known(usize),
    /// `format`: accepted and ignored (answers are always JSON).
    Ignored,
    Unknown(String),
}

/// What the lookup API knows; [`Fields::values`] and [`parse_request`]
/// follow this order.
const FIELDS: [&str; 17] = [
    "environment",
    "level",
    "key",
    "keys",
    "resolution",
    "hierarchy",
    "merge_behavior",
    "deep_merge_options",
    "scope",
    "order_override",
    "default",
    "explain",
    "hierarchy_id",
    "node",
    "generation",
    "tag",
    "merge",
];

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E>(self, name: &str) -> Result<Field, E> {
                Ok(match FIELDS.iter().position(|f| *f == name) {
                    Some(known) => Field::Known(known),
                    None if name == "format" => Field::Ignored,
                    None => Field::Unknown(name.to_owned()),
                })
            }
        }
        d.deserialize_identifier(Name)
    }
}

/// Reads a request object's fields into `fields`, keeping the first
/// unknown one's name for [`parse_request`] to refuse (after a whole,
/// well-formed body). Written in place: returned, the fields (some 700
/// bytes) were copied at each of the four calls they passed through.
struct FieldsVisitor<'e> {
    decoding: &'e wire::Decoding,
    /// The field being decoded, to name in a tagged value's error.
    field: &'e Cell<&'static str>,
    fields: &'e mut Fields,
}

impl<'de> Visitor<'de> for FieldsVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a lookup request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let decode = self.decoding.seed();
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Known(i) => {
                    self.field.set(FIELDS[i]);
                    self.fields.values[i] = Some(map.next_value_seed(decode)?);
                }
                Field::Ignored => {
                    map.next_value::<IgnoredAny>()?;
                }
                Field::Unknown(name) => {
                    self.fields.unknown.get_or_insert(name);
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

fn read_fields(bytes: &[u8], fields: &mut Fields) -> Result<(), ApiError> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(match serde_json::from_slice::<IgnoredAny>(bytes) {
            Ok(_) => bad("a lookup request is a JSON object"),
            Err(e) => bad(format!("malformed JSON: {e}")),
        });
    }
    // Room for a Fuel hierarchy's levels and a node's scope.
    let decoding = wire::Decoding::with_capacity(32, 16);
    let field = Cell::new("");
    let visitor = FieldsVisitor {
        decoding: &decoding,
        field: &field,
        fields,
    };
    // A body that is UTF-8 as a whole (every well-formed one) is checked
    // once here, not string by string as serde_json does reading bytes;
    // any other is read as bytes, to be refused with serde_json's own
    // message naming the place.
    let read = match std::str::from_utf8(bytes) {
        Ok(text) => read_object(&mut serde_json::Deserializer::from_str(text), visitor),
        Err(_) => read_object(&mut serde_json::Deserializer::from_slice(bytes), visitor),
    };
    read.map_err(|e| match decoding.take_tag_error() {
        Some(tag) => bad(format!("{}: {tag}", field.get())),
        None => bad(format!("malformed JSON: {e}")),
    })
}

/// The request object from `de`, and nothing after it.
fn read_object<'de, R: serde_json::de::Read<'de>>(
    de: &mut serde_json::Deserializer<R>,
    visitor: FieldsVisitor<'_>,
) -> serde_json::Result<()> {
    de.deserialize_map(visitor)?;
    de.end()
}
