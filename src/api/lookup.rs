//! The bodies of `POST /api/v1/lookup` (docs/api.md) and of the
//! hierarchy registrations its lookups name.

use super::WireValue;
use serde::{Deserialize, Serialize};

/// `POST /api/v1/lookup` as a client sends it (the server decodes it by
/// hand: see the module's note).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct LookupRequest {
    pub(crate) environment: i64,
    /// `key`, or several `keys`.
    #[serde(flatten)]
    pub(crate) keys: Keys,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resolution: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) level: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hierarchy: Option<Vec<String>>,
    /// A registered hierarchy ([`super::paths::HIERARCHIES`]) in place of
    /// `hierarchy`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hierarchy_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) scope: Option<WireValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) default: Option<WireValue>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) explain: bool,
    /// A node whose stored scope `scope` is layered over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) node: Option<String>,
    /// Puppet's `merge`, in a Hiera 5 environment (docs/hiera5.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) merge: Option<WireValue>,
}

/// A lookup's `key`, or its `keys` (the server refuses both).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum Keys {
    One { key: String },
    Several { keys: Vec<String> },
}

impl Keys {
    pub(crate) fn one(key: impl Into<String>) -> Keys {
        Keys::One { key: key.into() }
    }
}

impl Default for Keys {
    fn default() -> Keys {
        Keys::one("")
    }
}

/// What a client sends to [`super::paths::HIERARCHIES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct HierarchyRegistration<'a> {
    pub(crate) hierarchy: &'a [String],
}

/// A registered hierarchy's id, for a lookup's `hierarchy_id`: 32
/// lowercase hex digits, derived from the levels alone (the same list
/// has the same id on every server).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RegisteredHierarchy {
    pub(crate) id: String,
}

/// The answer of one lookup. `found` false with `default` true: the
/// default applied; with neither, `value` is absent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct LookupAnswer {
    pub(crate) found: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) default: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) value: Option<WireValue>,
    /// With `explain`: every step of the lookup, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) explain: Option<Vec<ExplainStep>>,
    /// With `explain` in a Hiera 5 environment: `puppet lookup
    /// --explain`'s explanation of the lookup of the keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) explanation: Option<Explanation>,
}

/// `puppet lookup --explain`'s output for one lookup of a Hiera 5
/// environment's keys, the first found answering.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Explanation {
    /// As `puppet lookup --explain` prints it (`--render-as s`).
    pub(crate) text: String,
    /// As data: what `--render-as json` prints.
    pub(crate) tree: WireValue,
    /// The lookup's failure (its message is the text's last line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<HieraFailure>,
}

/// One step of an `explain`ed lookup.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ExplainStep {
    /// Nesting: 0 for the key asked, 1 for a lookup inside its
    /// interpolation, …
    pub(crate) depth: usize,
    pub(crate) key: String,
    pub(crate) source: String,
    /// `found`, `no_key`, `no_data` or `bad_definition`.
    pub(crate) outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) value: Option<WireValue>,
    /// On the last step of a hash merge: each top-level key of the
    /// merged Hash and the source that supplied it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) keys: Option<std::collections::BTreeMap<String, String>>,
}

/// The answer of a lookup of several `keys`: one entry per key, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct KeysAnswer {
    pub(crate) answers: Vec<KeyAnswer>,
}

/// One key's answer, or the Hiera error of its lookup.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct KeyAnswer {
    #[serde(flatten)]
    pub(crate) outcome: KeyOutcome,
    pub(crate) key: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum KeyOutcome {
    Failed { error: HieraFailure },
    Answered(LookupAnswer),
}

/// A lookup Hiera itself fails: the Ruby exception class and message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct HieraFailure {
    pub(crate) class: String,
    pub(crate) message: String,
}
