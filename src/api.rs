//! The REST API's bodies (docs/api.md), one type each, shared by the
//! server (`server/routes/documents.rs`, `server/routes/lookup.rs`,
//! `server/http/error.rs`) and the remote client (`ops/remote.rs`), so that a
//! field renamed on one side cannot drift from the other. Values travel in
//! the wire form ([`crate::wire`]) through [`WireValue`].
//!
//! Left out on purpose: the measured lookup hot path. A lookup request is
//! decoded field by field straight into values (`server/routes/lookup.rs`),
//! and a plain answer is written straight into its buffer; both are
//! checked against the types here by tests.
//!
//! The routes' path templates are in [`paths`], beside the bodies.

pub(crate) mod impact;
mod insight;
mod lookup;
pub(crate) mod paths;
mod unparsed;
pub(crate) use unparsed::{KeptFile, UnparsedErrorBody, UnparsedFile};

#[cfg(test)]
pub(crate) use insight::Origin;
pub(crate) use insight::{DiffAnswer, NodeScope, ShowLookup};
pub(crate) use lookup::{
    ExplainStep, Explanation, HieraFailure, HierarchyRegistration, KeyAnswer, KeyOutcome, Keys,
    KeysAnswer, LookupAnswer, LookupRequest, RegisteredHierarchy,
};

use crate::configdb;
use crate::hiera::Value;
use crate::wire;
use serde::de::DeserializeSeed;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// A value in the wire form: every Ruby type kept.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct WireValue(pub(crate) Value);

impl Serialize for WireValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        wire::to_json(&self.0).serialize(s)
    }
}

impl<'de> Deserialize<'de> for WireValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<WireValue, D::Error> {
        // Decoded as it is read: a JSON tree first would take a
        // `"$serde_json::private::Number"` key for a number, and the
        // decoder bounds the depth (wire::MAX_JSON_DEPTH).
        let decoding = wire::Decoding::default();
        decoding
            .seed()
            .deserialize(d)
            .map(WireValue)
            .map_err(|e| serde::de::Error::custom(decoding.error(&e)))
    }
}

/// Every error answer: `{"error": kind, "message": text}`, and the Ruby
/// exception class of a `hiera_error`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ErrorBody {
    /// `not_found`, `bad_request`, `hiera_error`, …
    pub(crate) error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) class: Option<String>,
    pub(crate) message: String,
}

/// A 410 `gone`: a read at a generation retention pruned, naming the
/// oldest generation still readable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct GoneBody {
    pub(crate) error: String,
    pub(crate) message: String,
    pub(crate) oldest_readable: u64,
}

/// A 422 `budget_exceeded`: a lookup refused for spending more than its
/// budget (docs/operations.md, "Lookup budgets"); the fields of an
/// [`ErrorBody`], and which budget, its value and the flag that sets it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BudgetErrorBody {
    /// `budget_exceeded`.
    pub(crate) error: String,
    /// `Hierad::StepBudgetExceeded` or `Hierad::ByteBudgetExceeded`.
    pub(crate) class: String,
    /// `steps` or `bytes`.
    pub(crate) budget: String,
    pub(crate) limit: u64,
    /// The `hierad serve` flag that raises it.
    pub(crate) flag: String,
    pub(crate) message: String,
}

/// A 413 `quota_exceeded`: a document write refused because the document,
/// or its environment's latest documents with it, would be larger than
/// the server keeps (docs/operations.md, "Limits"). Sizes are bytes of
/// the stored encoding (wire JSON). Nothing was written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct QuotaErrorBody {
    /// `quota_exceeded`.
    pub(crate) error: String,
    /// `document` or `environment`.
    pub(crate) quota: String,
    /// The document refused (for an import: the first over the limit).
    pub(crate) environment: i64,
    /// Its level path (`nodes=node-1`; empty: the root).
    pub(crate) level: String,
    pub(crate) resource: String,
    /// `values` or `overrides`.
    pub(crate) kind: String,
    /// The document's size.
    pub(crate) size: u64,
    /// The environment's total with this write (`environment` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) total: Option<u64>,
    pub(crate) limit: u64,
    /// The `hierad serve` flag that sets the limit.
    pub(crate) flag: String,
    pub(crate) message: String,
}

/// `GET /components…`: a component and its resource definitions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Component {
    pub(crate) id: i64,
    pub(crate) name: String,
    pub(crate) resource_definitions: Vec<ResourceDefinition>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ResourceDefinition {
    pub(crate) id: i64,
    pub(crate) name: String,
    pub(crate) component_id: i64,
    /// Metadata; its `"schema"` checks every write of the resource.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub(crate) content: serde_json::Map<String, serde_json::Value>,
}

impl From<&configdb::Component> for Component {
    fn from(c: &configdb::Component) -> Component {
        Component {
            id: c.id,
            name: c.name.clone(),
            resource_definitions: c
                .resource_definitions
                .iter()
                .map(|d| ResourceDefinition {
                    id: d.id,
                    name: d.name.clone(),
                    component_id: c.id,
                    content: d.content.clone(),
                })
                .collect(),
        }
    }
}

/// `POST /components`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewComponent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) id: Option<i64>,
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) resource_definitions: Vec<NewResourceDefinition>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NewResourceDefinition {
    pub(crate) name: String,
    /// Metadata; its `"schema"` (a JSON Schema) checks every write.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub(crate) content: serde_json::Map<String, serde_json::Value>,
}

impl From<NewComponent> for configdb::NewComponent {
    fn from(c: NewComponent) -> configdb::NewComponent {
        configdb::NewComponent {
            id: c.id,
            name: c.name,
            resource_definitions: c.resource_definitions.into_iter().map(|d| d.name).collect(),
        }
    }
}

/// `GET /environments…`: components by id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Environment {
    pub(crate) id: i64,
    pub(crate) components: Vec<i64>,
    pub(crate) hierarchy_levels: Vec<String>,
    /// 5 for a Hiera 5 environment; absent for Hiera 3 (the default).
    #[serde(default, skip_serializing_if = "is_hiera3", with = "hiera_version")]
    pub(crate) hiera: configdb::HieraVersion,
}

impl From<&configdb::Environment> for Environment {
    fn from(e: &configdb::Environment) -> Environment {
        Environment {
            id: e.id,
            components: e.components.clone(),
            hierarchy_levels: e.hierarchy_levels.clone(),
            hiera: e.hiera,
        }
    }
}

impl From<Environment> for configdb::Environment {
    fn from(e: Environment) -> configdb::Environment {
        configdb::Environment {
            id: e.id,
            components: e.components,
            hierarchy_levels: e.hierarchy_levels,
            hiera: e.hiera,
        }
    }
}

fn is_hiera3(v: &configdb::HieraVersion) -> bool {
    *v == configdb::HieraVersion::Three
}

/// An environment's `"hiera"`: the number 3 or 5.
mod hiera_version {
    use crate::configdb::HieraVersion;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub(super) fn serialize<S: Serializer>(v: &HieraVersion, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(v.number())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<HieraVersion, D::Error> {
        let n = i64::deserialize(d)?;
        HieraVersion::from_number(n).ok_or_else(|| {
            D::Error::custom(format!(
                "hiera is 3 (Hiera 3.10, the default) or 5 (Hiera 5), not {n}"
            ))
        })
    }
}

/// `POST /environments`: components by id or by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewEnvironment {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) id: Option<i64>,
    #[serde(default)]
    pub(crate) components: Vec<ComponentKey>,
    #[serde(default)]
    pub(crate) hierarchy_levels: Vec<String>,
    /// 5: a Hiera 5 environment (docs/hiera5.md); 3, the default: Hiera 3.
    #[serde(default, skip_serializing_if = "is_hiera3", with = "hiera_version")]
    pub(crate) hiera: configdb::HieraVersion,
    /// The environment's own retention (`…/retention` changes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) retention: Option<Retention>,
}

/// `GET /environments?deleted=true`: a deleted (restorable) environment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DeletedEnvironment {
    #[serde(flatten)]
    pub(crate) environment: Environment,
    /// When it was deleted, Unix seconds.
    pub(crate) deleted_at: i64,
}

/// `PUT /environments/{env}/retention`: each limit `null` (the server's
/// default) or a number, 0 for no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Retention {
    #[serde(default)]
    pub(crate) keep_versions: Option<u64>,
    #[serde(default)]
    pub(crate) keep_days: Option<u64>,
}

impl From<Retention> for configdb::Retention {
    fn from(r: Retention) -> configdb::Retention {
        configdb::Retention {
            keep_versions: r.keep_versions,
            keep_days: r.keep_days,
        }
    }
}

impl From<configdb::Retention> for Retention {
    fn from(r: configdb::Retention) -> Retention {
        Retention {
            keep_versions: r.keep_versions,
            keep_days: r.keep_days,
        }
    }
}

/// `GET|PUT /environments/{env}/retention`: the environment's own limits
/// and those in force (its own over the server's; 0: no limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RetentionAnswer {
    #[serde(flatten)]
    pub(crate) own: Retention,
    pub(crate) effective: EffectiveRetention,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EffectiveRetention {
    pub(crate) keep_versions: u64,
    pub(crate) keep_days: u64,
}

impl RetentionAnswer {
    pub(crate) fn new(own: configdb::Retention, default: configdb::Retention) -> RetentionAnswer {
        let effective = own.over(default);
        RetentionAnswer {
            own: own.into(),
            effective: EffectiveRetention {
                keep_versions: effective.keep_versions.unwrap_or(0),
                keep_days: effective.keep_days.unwrap_or(0),
            },
        }
    }
}

impl From<NewEnvironment> for configdb::NewEnvironment {
    fn from(e: NewEnvironment) -> configdb::NewEnvironment {
        configdb::NewEnvironment {
            id: e.id,
            components: e.components.into_iter().map(|c| c.0).collect(),
            hierarchy_levels: e.hierarchy_levels,
            hiera: e.hiera,
        }
    }
}

/// A component named by its id (a JSON number) or its name (a string).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ComponentKey(pub(crate) configdb::ComponentRef);

impl Serialize for ComponentKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            configdb::ComponentRef::Id(id) => s.serialize_i64(*id),
            configdb::ComponentRef::Name(name) => s.serialize_str(name),
        }
    }
}

impl<'de> Deserialize<'de> for ComponentKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ComponentKey, D::Error> {
        use serde::de::Error;
        match Json::deserialize(d)? {
            Json::Number(n) => n
                .as_i64()
                .map(|id| ComponentKey(configdb::ComponentRef::Id(id)))
                .ok_or_else(|| D::Error::custom(format!("invalid component id {n}"))),
            Json::String(s) => Ok(ComponentKey(configdb::ComponentRef::Name(s))),
            other => Err(D::Error::custom(format!(
                "a component is an id or a name, not {other}"
            ))),
        }
    }
}

/// `GET /environments/{env}/hierarchy_levels`: one level and the one
/// before it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct HierarchyLevel {
    pub(crate) name: String,
    pub(crate) parent: Option<String>,
}

/// `POST /environments/{env}/import`. Documents are wire JSON, decoded
/// one by one so that an error names its resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImportRequest {
    /// `nodes=node-1`; absent or empty: the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) level: Option<String>,
    #[serde(default)]
    pub(crate) replace: bool,
    /// `values` (the default) or `overrides`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<String>,
    /// Adds each value of `level` to its level's register (created if
    /// missing) in the same request; without it, a level value
    /// a register does not list is refused (404).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) register: bool,
    pub(crate) documents: WireDocuments,
    /// Data files that do not parse, by resource name, kept as Hiera keeps
    /// them (docs/api.md, "Files that do not parse"): the server parses
    /// each itself, and stores one that does parse as its data.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) unparsed: BTreeMap<String, UnparsedFile>,
}

/// `GET|PUT /environments/{env}/hierarchy_levels/{level}/register`: the
/// values a level of the environment takes (its nodes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Register {
    pub(crate) level: String,
    /// Sorted.
    pub(crate) values: Vec<String>,
}

/// The answer to `POST` (add) and `DELETE …/register/{value}` (remove):
/// the register after the change, and how many values it changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RegisterChange {
    pub(crate) level: String,
    pub(crate) values: Vec<String>,
    pub(crate) changed: usize,
}

/// An import's documents by resource name, each decoded from the wire form
/// as it is read: a JSON tree first would stop at serde_json's 128 levels,
/// short of what the store accepts (see [`wire::MAX_DEPTH`]), and would
/// take a `"$serde_json::private::Number"` key for a number. A name given
/// twice: the last wins, as in JSON objects.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct WireDocuments(pub(crate) indexmap::IndexMap<String, Value>);

impl Serialize for WireDocuments {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, doc) in &self.0 {
            map.serialize_entry(name, &wire::to_json(doc))?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for WireDocuments {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Docs;
        impl<'de> serde::de::Visitor<'de> for Docs {
            type Value = WireDocuments;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of documents by resource name")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<WireDocuments, A::Error> {
                let mut docs = indexmap::IndexMap::new();
                while let Some(resource) = map.next_key::<String>()? {
                    let decoding = wire::Decoding::default();
                    let doc = map.next_value_seed(decoding.seed()).map_err(|e| {
                        serde::de::Error::custom(format!(
                            "resource {resource}: {}",
                            decoding.error(&e)
                        ))
                    })?;
                    docs.insert(resource, doc);
                }
                Ok(WireDocuments(docs))
            }
        }
        d.deserialize_map(Docs)
    }
}

/// What an import did, in counts (the answer of `POST …/import`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ImportSummary {
    pub(crate) written: usize,
    pub(crate) unchanged: usize,
    pub(crate) deleted: usize,
    /// Resource names newly defined in the environment's first component.
    pub(crate) defined: Vec<String>,
    /// Files kept unparsed (written or unchanged): every lookup that
    /// reads one fails with Hiera's error for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) unparsed: Vec<KeptFile>,
}

impl ImportSummary {
    /// Adds another import's counts (a remote import of several levels).
    pub(crate) fn add(&mut self, other: ImportSummary) {
        self.written += other.written;
        self.unchanged += other.unchanged;
        self.deleted += other.deleted;
        self.defined.extend(other.defined);
        self.unparsed.extend(other.unparsed);
    }
}

/// One version of a document (`…/history`, `…/restore`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Version {
    pub(crate) version: u64,
    pub(crate) created_at: i64,
    pub(crate) size: usize,
    pub(crate) deleted: bool,
    /// Who wrote it (`null`: written before hierad recorded authors; a
    /// server that predates them sends none).
    #[serde(default)]
    pub(crate) author: Option<String>,
}

impl From<&configdb::Version> for Version {
    fn from(v: &configdb::Version) -> Version {
        Version {
            version: v.number,
            created_at: v.created_at,
            size: v.size,
            deleted: v.deleted,
            author: v.author.clone(),
        }
    }
}

impl From<Version> for configdb::Version {
    fn from(v: Version) -> configdb::Version {
        configdb::Version {
            number: v.version,
            created_at: v.created_at,
            size: v.size,
            deleted: v.deleted,
            author: v.author,
        }
    }
}

/// The message of the 400 a TLS port answers to a plain-HTTP request
/// (server/http/plain_on_tls.rs); `hierad health`, which tries plain HTTP
/// first, takes it for "try https".
pub(crate) const SPEAKS_TLS: &str =
    "this hierad server speaks TLS on this port: use https:// instead of http://";

/// `GET /api/v1/environments/{env}/scope`: the scope variables the
/// environment's data interpolates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ScopeVariables {
    pub(crate) variables: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_answers() {
        let cases: &[(&str, bool, bool, Option<Value>)] = &[
            (
                r#"{"found": true, "value": 15}"#,
                true,
                false,
                Some(Value::Int(15)),
            ),
            (r#"{"found": true, "value": null}"#, true, false, None),
            (r#"{"found": false}"#, false, false, None),
            (
                r#"{"found": false, "default": true, "value": "x"}"#,
                false,
                true,
                Some(Value::str("x")),
            ),
            (
                r#"{"found": true, "value": {"__hierad__": "sym", "name": "a"}}"#,
                true,
                false,
                Some(Value::Symbol("a".into())),
            ),
        ];
        for (text, found, default, value) in cases {
            let answer: LookupAnswer = serde_json::from_str(text).unwrap();
            assert_eq!(
                (answer.found, answer.default, answer.value.map(|v| v.0)),
                (*found, *default, value.clone()),
                "{text}"
            );
        }
        let with_explain = r#"{"found": true, "value": 1, "explain": [{"depth": 0, "key": "k", "source": "astute", "outcome": "found", "value": 1}, {"depth": 1, "key": "j", "source": "globals", "outcome": "no_key"}]}"#;
        let answer: LookupAnswer = serde_json::from_str(with_explain).unwrap();
        let explain = answer.explain.unwrap();
        assert_eq!(explain.len(), 2);
        assert_eq!(explain[0].value, Some(WireValue(Value::Int(1))));
        assert_eq!(explain[1].depth, 1);
        assert_eq!(explain[1].value, None);
        assert!(serde_json::from_str::<LookupAnswer>("[1]").is_err());
        assert!(
            serde_json::from_str::<LookupAnswer>(
                r#"{"found": true, "value": {"__hierad__": "x"}}"#
            )
            .is_err()
        );
    }

    /// The bodies as clients have always read them, field order included.
    #[test]
    fn bodies_keep_their_form() {
        let cases: Vec<(String, &str)> = vec![
            (
                serde_json::to_string(&ErrorBody {
                    error: "not_found".into(),
                    class: None,
                    message: "m".into(),
                })
                .unwrap(),
                r#"{"error":"not_found","message":"m"}"#,
            ),
            (
                serde_json::to_string(&ErrorBody {
                    error: "hiera_error".into(),
                    class: Some("Hiera::InterpolationLoop".into()),
                    message: "m".into(),
                })
                .unwrap(),
                r#"{"error":"hiera_error","class":"Hiera::InterpolationLoop","message":"m"}"#,
            ),
            (
                serde_json::to_string(&KeysAnswer {
                    answers: vec![
                        KeyAnswer {
                            outcome: KeyOutcome::Answered(LookupAnswer {
                                found: false,
                                default: true,
                                value: Some(WireValue(Value::Float(1.0))),
                                explain: None,
                                explanation: None,
                            }),
                            key: "a".into(),
                        },
                        KeyAnswer {
                            outcome: KeyOutcome::Failed {
                                error: HieraFailure {
                                    class: "C".into(),
                                    message: "m".into(),
                                },
                            },
                            key: "b".into(),
                        },
                    ],
                })
                .unwrap(),
                r#"{"answers":[{"found":false,"default":true,"value":1.0,"key":"a"},{"error":{"class":"C","message":"m"},"key":"b"}]}"#,
            ),
            (
                serde_json::to_string(&HierarchyLevel {
                    name: "nodes".into(),
                    parent: None,
                })
                .unwrap(),
                r#"{"name":"nodes","parent":null}"#,
            ),
            (
                serde_json::to_string(&Version {
                    version: 2,
                    created_at: 5,
                    size: 9,
                    deleted: false,
                    author: Some("alice".into()),
                })
                .unwrap(),
                r#"{"version":2,"created_at":5,"size":9,"deleted":false,"author":"alice"}"#,
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn components_are_named_by_id_or_name() {
        let parse = |text: &str| {
            serde_json::from_str::<NewEnvironment>(text)
                .map(|e| e.components)
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            parse(r#"{"components": [7, "fuel"]}"#).unwrap(),
            vec![
                ComponentKey(configdb::ComponentRef::Id(7)),
                ComponentKey(configdb::ComponentRef::Name("fuel".into())),
            ]
        );
        for (text, want) in [
            (r#"{"components": [1.5]}"#, "invalid component id 1.5"),
            (
                r#"{"components": [true]}"#,
                "a component is an id or a name, not true",
            ),
            (r#"{"component": []}"#, "unknown field `component`"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.starts_with(want), "{text}: {err}");
        }
    }
}
