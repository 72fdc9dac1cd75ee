//! The ConfigDB's typed errors: what was not found, what conflicts, what is
//! malformed, each with a message that tells the user what to change.
//!
//! The families map onto HTTP statuses one to one (NotFound → 404,
//! Conflict → 409, Invalid → 400, Stale → 412, OverQuota → 413); [`ConfigError::kind`] gives the family
//! without matching every variant.

use super::keypath::KeyPathError;
use super::level::LevelPathError;
use super::model::DocAddress;
use crate::wire::MAX_DEPTH;

/// Any rule of the data model that a request broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ConfigError {
    /// Something the request names does not exist.
    #[error(transparent)]
    NotFound(#[from] NotFound),
    /// The request would break a uniqueness rule.
    #[error(transparent)]
    Conflict(#[from] Conflict),
    /// The request is malformed.
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// A conditional write whose condition no longer holds (412).
    #[error(transparent)]
    Stale(#[from] Stale),
    /// A write that would make a document or its environment larger
    /// than the server keeps (413).
    #[error(transparent)]
    OverQuota(#[from] OverQuota),
    /// The request needs a stored document that cannot be read (a server
    /// failure, not the request's: 500).
    #[error(
        "the stored document is unreadable ({0}); `hierad doctor` lists and repairs such documents"
    )]
    Unreadable(Box<super::model::UnreadableDocument>),
    /// The request reads a document kept unparsed (a data file that does
    /// not parse, imported as Hiera keeps it): the user's data, so 422.
    #[error("{0}")]
    Unparsed(Box<super::unparsed::UnparsedDocument>),
}

/// The family of a [`ConfigError`], for mapping onto a status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    NotFound,
    Conflict,
    Invalid,
    Stale,
    OverQuota,
    Unreadable,
    Unparsed,
}

impl ConfigError {
    pub(crate) fn kind(&self) -> ErrorKind {
        match self {
            ConfigError::NotFound(_) => ErrorKind::NotFound,
            ConfigError::Conflict(_) => ErrorKind::Conflict,
            ConfigError::Invalid(_) => ErrorKind::Invalid,
            ConfigError::Stale(_) => ErrorKind::Stale,
            ConfigError::OverQuota(_) => ErrorKind::OverQuota,
            ConfigError::Unreadable(_) => ErrorKind::Unreadable,
            ConfigError::Unparsed(_) => ErrorKind::Unparsed,
        }
    }
}

impl From<LevelPathError> for ConfigError {
    fn from(e: LevelPathError) -> ConfigError {
        ConfigError::Invalid(Invalid::LevelPath(e))
    }
}

impl From<KeyPathError> for ConfigError {
    fn from(e: KeyPathError) -> ConfigError {
        ConfigError::Invalid(Invalid::KeyPath(e))
    }
}

/// Something named by a request that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotFound {
    #[error("environment {0} does not exist")]
    Environment(i64),
    /// A URL's `{env}` that is no number: no environment has that id.
    #[error("environment {0:?} does not exist: environments are numbered")]
    EnvironmentText(String),
    #[error("component {0} does not exist")]
    ComponentId(i64),
    #[error("component \"{0}\" does not exist")]
    ComponentName(String),
    // Only a count of the others: listing thousands of names in every 404
    // made each one as large as the environment's whole definition.
    #[error(
        "resource \"{resource}\" is not defined in environment {env} ({})",
        defined_text(*defined)
    )]
    Resource {
        env: i64,
        resource: String,
        /// How many resources the environment does define.
        defined: usize,
    },
    #[error(
        "level \"{level}\" is not one of environment {env}'s levels [{}]",
        levels.join(", ")
    )]
    Level {
        env: i64,
        level: String,
        levels: Vec<String>,
    },
    #[error("version {version} of the {doc} does not exist ({})", latest_text(*latest))]
    Version {
        doc: DocAddress,
        version: u64,
        /// The newest version there is, if any.
        latest: Option<u64>,
    },
    /// A document with no live version (never written, or deleted).
    #[error("there is no {0}")]
    Document(DocAddress),
    /// A resource a component does not define.
    #[error("component \"{component}\" does not define resource \"{resource}\"")]
    ComponentResource { component: String, resource: String },
    /// A key path that leads nowhere in a document.
    #[error("key \"{key}\" is not in the {what}")]
    Key { key: String, what: String },
    /// A level value no environment registers (the first 404 for nodes of
    /// docs/spec/configdb-api.md), asked of an environment that keeps a
    /// register of the level.
    #[error(
        "Cannot find a node with the given identifier: {value:?} is not in the register of level \"{level}\" of environment {env}, nor of any other environment"
    )]
    Unregistered {
        env: i64,
        level: String,
        value: String,
    },
    /// A level value registered by other environments only (the second
    /// 404 of docs/spec/configdb-api.md).
    #[error(
        "Node with the given ID not assigned to cluster with the given ID: {value:?} is not in the register of level \"{level}\" of environment {env}{}",
        registered_in(elsewhere)
    )]
    NotAssigned {
        env: i64,
        level: String,
        value: String,
        /// The environments that do register it, as far as the requester
        /// may know (none named to one limited to other environments).
        elsewhere: Vec<i64>,
    },
    /// A level the environment keeps no register of.
    #[error("environment {env} keeps no register of level \"{level}\"")]
    Register { env: i64, level: String },
    #[error("tag \"{0}\" does not exist")]
    Tag(String),
    /// A node no level register of the environment lists (scopes are
    /// kept for registered nodes only).
    #[error("node \"{node}\" is not registered in environment {env}: no level register lists it")]
    Node { env: i64, node: String },
    /// A registered node with no stored scope (never written, or deleted).
    #[error("node \"{node}\" of environment {env} has no stored scope")]
    Scope { env: i64, node: String },
}

impl NotFound {
    /// The 404 for a level value `env` does not register: `NotAssigned`
    /// naming the environments in `elsewhere`, or `Unregistered`, word for
    /// word the unknown value's, when there are none (none at all, or none
    /// the requester may be told of).
    pub(crate) fn unregistered(
        env: i64,
        level: String,
        value: String,
        elsewhere: Vec<i64>,
    ) -> Self {
        if elsewhere.is_empty() {
            NotFound::Unregistered { env, level, value }
        } else {
            NotFound::NotAssigned {
                env,
                level,
                value,
                elsewhere,
            }
        }
    }
}

/// ` (it is registered in environment 2, 3)`, or nothing for no
/// environment the requester may be told of.
fn registered_in(elsewhere: &[i64]) -> String {
    if elsewhere.is_empty() {
        return String::new();
    }
    let listed: Vec<String> = elsewhere.iter().map(ToString::to_string).collect();
    format!(" (it is registered in environment {})", listed.join(", "))
}

/// A conditional write (`If-Match`) of a document that another writer
/// changed since the version the request names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the {doc} is at version {latest}, not {expected} as the request's If-Match says: another writer changed it since; read it again (its version is in the X-Hierad-Version header) and retry"
)]
pub(crate) struct Stale {
    pub(crate) doc: DocAddress,
    pub(crate) expected: u64,
    /// Its latest version (0: never written).
    pub(crate) latest: u64,
}

/// A request that would break a uniqueness rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Conflict {
    #[error("a component named \"{name}\" already exists (id {id})")]
    ComponentName { name: String, id: i64 },
    #[error("component id {0} is already taken")]
    ComponentId(i64),
    #[error("environment {0} already exists")]
    EnvironmentId(i64),
    #[error(
        "environment {0} was deleted and can still be restored: restore it (POST /api/v1/config/environments/{0}/restore) or purge it for good (DELETE /api/v1/config/environments/{0}?purge=true) before reusing its id"
    )]
    EnvironmentDeleted(i64),
    #[error("environment {0} is not deleted: there is nothing to restore")]
    EnvironmentNotDeleted(i64),
    #[error("component \"{component}\" already defines resource \"{resource}\"")]
    ResourceInComponent { component: String, resource: String },
    #[error(
        "resource \"{resource}\" would be defined twice in environment {env}: by component \"{first}\" and by component \"{second}\"; an environment takes each resource name from one component only"
    )]
    ResourceInEnvironment {
        env: i64,
        resource: String,
        first: String,
        second: String,
    },
    #[error("component {0} is listed twice")]
    ComponentListedTwice(String),
    #[error(
        "component \"{component}\" is used by environment(s) {}; {}",
        ids(environments),
        in_use_hint(environments, deleted)
    )]
    ComponentInUse {
        component: String,
        environments: Vec<i64>,
        /// Those of `environments` that are deleted (still restorable).
        deleted: Vec<i64>,
    },
    #[error(
        "the database already holds components or environments; a whole copy goes only into an empty one"
    )]
    NotEmpty,
    #[error(
        "tag \"{name}\" already exists (at generation {generation}); delete it first to move it"
    )]
    Tag { name: String, generation: u64 },
}

/// A malformed request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Invalid {
    #[error(transparent)]
    LevelPath(#[from] LevelPathError),
    #[error(transparent)]
    KeyPath(#[from] KeyPathError),
    #[error(
        "level \"{level}\" must come before level \"{after}\": environment {env}'s levels run from least to most specific as [{}], and a level path names them in that order, each at most once",
        levels.join(", ")
    )]
    LevelOrder {
        env: i64,
        level: String,
        after: String,
        levels: Vec<String>,
    },
    #[error(
        "level \"{level}\" appears twice in the level path \"{path}\"; name each level at most once"
    )]
    LevelRepeated { level: String, path: String },
    #[error("a document must be a Hash (a JSON object), not {class}")]
    NotAHash { class: &'static str },
    #[error("{what} \"{name}\" is not a valid name: {reason}")]
    Name {
        what: &'static str,
        name: String,
        reason: &'static str,
    },
    #[error("level \"{0}\" is listed twice in the hierarchy")]
    LevelListedTwice(String),
    #[error("resource \"{0}\" is listed twice")]
    ResourceListedTwice(String),
    #[error(
        "component {component} is not used by environment {env}, so resources cannot be defined there for it"
    )]
    ComponentNotInEnvironment { component: String, env: i64 },
    #[error("the {0} appears twice in one import")]
    ImportedTwice(DocAddress),
    #[error("cannot restore the {doc} to version {version}: it is a deletion marker")]
    RestoreDeleted { doc: DocAddress, version: u64 },
    /// A document nesting deeper than the store keeps ([`MAX_DEPTH`]).
    #[error(
        "the {doc} would nest more than {MAX_DEPTH} levels of Hashes and Arrays (the document is the first level; a key path's keys count too); values nest at most {MAX_DEPTH} levels: flatten the data"
    )]
    TooDeep { doc: DocAddress },
    /// A document its resource's schema refuses (configdb/schema.rs).
    #[error(
        "the {doc} do not match the resource's schema: {}; nothing was stored",
        problems.join("; ")
    )]
    Schema {
        doc: DocAddress,
        problems: Vec<String>,
    },
    /// A resource definition's content that cannot be used.
    #[error("the content of resource definition \"{resource}\" is refused: {reason}")]
    BadContent { resource: String, reason: String },
    /// A node scope that is not a JSON object.
    #[error("a node scope must be a JSON object of facts and scope variables, not {0}")]
    ScopeNotAnObject(&'static str),
    /// A read or a tag at a generation not written yet.
    #[error("generation {asked} is not written yet: the newest is {newest}")]
    GenerationAhead { asked: u64, newest: u64 },
    /// A rewrite of every latest document (`Store::rewrite_latest`)
    /// refused one of them; nothing was written.
    #[error("the {doc}: {reason}; nothing was written")]
    Rewrite { doc: DocAddress, reason: String },
}

/// A read at a generation that can no longer be answered exactly (410
/// Gone): retention pruned a version it needs, or its versions were
/// written before hierad recorded generations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "generation {asked} can no longer be read: the oldest readable generation is {oldest} (older versions were pruned by retention or written before generations were recorded); a tag keeps a generation readable"
)]
pub(crate) struct Gone {
    pub(crate) asked: u64,
    pub(crate) oldest: u64,
}

/// A document write refused by a quota (store/quota.rs): sizes are bytes
/// of the stored encoding, wire JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OverQuota {
    #[error(
        "the {doc} would take {size} bytes, over the limit of {limit} bytes a document may take \
         (hierad serve --max-document-mib); nothing was stored"
    )]
    Document {
        doc: DocAddress,
        size: u64,
        limit: u64,
    },
    #[error(
        "writing the {doc} ({size} bytes) would bring environment {}'s documents to {total} bytes, \
         over the limit of {limit} bytes (hierad serve --max-environment-mib); nothing was stored",
        doc.env
    )]
    Environment {
        doc: DocAddress,
        size: u64,
        /// The environment's latest documents with this write.
        total: u64,
        limit: u64,
    },
}

impl OverQuota {
    /// The `hierad serve` flag that sets the limit.
    pub(crate) fn flag(&self) -> &'static str {
        match self {
            OverQuota::Document { .. } => "--max-document-mib",
            OverQuota::Environment { .. } => "--max-environment-mib",
        }
    }
}

fn defined_text(defined: usize) -> String {
    match defined {
        0 => "it defines no resources; add a component that defines it".to_owned(),
        1 => {
            "it defines 1 other resource; its components list their resource_definitions".to_owned()
        }
        n => format!("it defines {n} others; its components list their resource_definitions"),
    }
}

fn ids(ids: &[i64]) -> String {
    ids.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn in_use_hint(environments: &[i64], deleted: &[i64]) -> String {
    if deleted.is_empty() {
        "remove it from them or delete them first".to_owned()
    } else if deleted.len() == environments.len() {
        "they are deleted but restorable: purge them first".to_owned()
    } else {
        format!(
            "delete them first, and purge the deleted one(s) {}",
            ids(deleted)
        )
    }
}

fn latest_text(latest: Option<u64>) -> String {
    match latest {
        Some(n) => format!("the latest is {n}"),
        None => "it has no versions".to_owned(),
    }
}

/// At most `.1` bytes of `.0` (on a character boundary), marked with `…`
/// if cut; written without a copy, as the access log does per request.
pub(crate) struct Truncated<'a>(pub(crate) &'a str, pub(crate) usize);

impl std::fmt::Display for Truncated<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Truncated(text, max) = *self;
        if text.len() <= max {
            return f.write_str(text);
        }
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        write!(f, "{}…", &text[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configdb::level::LevelPath;
    use crate::configdb::model::DocKind;

    #[test]
    fn messages_and_kinds() {
        let doc = DocAddress::new(
            3,
            LevelPath::parse_cli("nodes=node-1").unwrap(),
            "astute",
            DocKind::Values,
        );
        let cases: Vec<(ConfigError, ErrorKind, &str)> = vec![
            (
                NotFound::Environment(3).into(),
                ErrorKind::NotFound,
                "environment 3 does not exist",
            ),
            (
                NotFound::ComponentName("x".into()).into(),
                ErrorKind::NotFound,
                "component \"x\" does not exist",
            ),
            (
                NotFound::Resource {
                    env: 3,
                    resource: "y".into(),
                    defined: 0,
                }
                .into(),
                ErrorKind::NotFound,
                "resource \"y\" is not defined in environment 3 (it defines no resources; add a component that defines it)",
            ),
            (
                NotFound::Level {
                    env: 3,
                    level: "racks".into(),
                    levels: vec!["nodes".into()],
                }
                .into(),
                ErrorKind::NotFound,
                "level \"racks\" is not one of environment 3's levels [nodes]",
            ),
            (
                NotFound::Version {
                    doc: doc.clone(),
                    version: 7,
                    latest: Some(2),
                }
                .into(),
                ErrorKind::NotFound,
                "version 7 of the values of resource \"astute\" at nodes=node-1 of environment 3 does not exist (the latest is 2)",
            ),
            (
                NotFound::Document(doc.clone()).into(),
                ErrorKind::NotFound,
                "there is no values of resource \"astute\" at nodes=node-1 of environment 3",
            ),
            (
                NotFound::Key {
                    key: "a.b".into(),
                    what: "effective values of resource \"astute\"".into(),
                }
                .into(),
                ErrorKind::NotFound,
                "key \"a.b\" is not in the effective values of resource \"astute\"",
            ),
            (
                Conflict::ComponentInUse {
                    component: "fuel".into(),
                    environments: vec![1, 2],
                    deleted: vec![],
                }
                .into(),
                ErrorKind::Conflict,
                "component \"fuel\" is used by environment(s) 1, 2; remove it from them or delete them first",
            ),
            (
                Invalid::NotAHash { class: "String" }.into(),
                ErrorKind::Invalid,
                "a document must be a Hash (a JSON object), not String",
            ),
            (
                Invalid::RestoreDeleted { doc, version: 4 }.into(),
                ErrorKind::Invalid,
                "cannot restore the values of resource \"astute\" at nodes=node-1 of environment 3 to version 4: it is a deletion marker",
            ),
            (
                KeyPathError::Empty.into(),
                ErrorKind::Invalid,
                "empty key path: name a key such as a.b.0",
            ),
            (
                LevelPathError::OddSegments {
                    path: "/nodes".into(),
                }
                .into(),
                ErrorKind::Invalid,
                "level path \"/nodes\" must alternate level names and values",
            ),
        ];
        for (err, kind, msg) in cases {
            assert_eq!(err.kind(), kind, "{err}");
            assert!(err.to_string().starts_with(msg), "{err}\nwant {msg}");
        }
    }
}
