//! The ConfigDB's nouns: components and their resource definitions,
//! environments, document kinds, versions and document addresses, plus the
//! naming rules they share.

use super::error::{ConfigError, Invalid, Truncated};
use super::level::{LevelPath, LevelValue};
use crate::hiera::{Hash, Value};
use std::fmt;
use std::str::FromStr;

/// A resource (datasource) name a component provides, e.g. `astute` or
/// `override/configuration/role`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResourceDefinition {
    pub(crate) id: i64,
    pub(crate) name: String,
    /// Metadata about the resource, a JSON object (`{}`: none); its
    /// `"schema"` checks every document written to the resource
    /// ([`super::schema`]).
    pub(crate) content: serde_json::Map<String, serde_json::Value>,
}

/// A set of resource definitions, e.g. what a plugin or Fuel itself
/// provides. Environments use components to know which resources exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Component {
    pub(crate) id: i64,
    pub(crate) name: String,
    /// In creation order.
    pub(crate) resource_definitions: Vec<ResourceDefinition>,
}

/// An isolated set of layered data (a Fuel cluster).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Environment {
    /// Chosen by the caller to match the Fuel cluster id, or assigned.
    pub(crate) id: i64,
    /// Component ids, in the order given at creation.
    pub(crate) components: Vec<i64>,
    /// Level names from least to most specific; the root is implicit.
    pub(crate) hierarchy_levels: Vec<String>,
    /// Which Hiera answers its lookups.
    pub(crate) hiera: HieraVersion,
}

/// Which Hiera an environment's lookups follow: Hiera 3.10 (its `hiera`
/// resource is a version 3 hiera.yaml; the default), or Hiera 5 as Puppet
/// 7's `lookup` applies it (its `hiera` resource is a version 5
/// hiera.yaml read over the stored documents: `crate::lookup5`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) enum HieraVersion {
    #[default]
    Three,
    Five,
}

impl HieraVersion {
    /// The number stored and sent (`"hiera": 5`).
    pub(crate) fn number(self) -> i64 {
        match self {
            HieraVersion::Three => 3,
            HieraVersion::Five => 5,
        }
    }

    /// `None` for a number that is neither 3 nor 5.
    pub(crate) fn from_number(n: i64) -> Option<HieraVersion> {
        match n {
            3 => Some(HieraVersion::Three),
            5 => Some(HieraVersion::Five),
            _ => None,
        }
    }
}

/// What to create: a component.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NewComponent {
    /// `None` to have one assigned.
    pub(crate) id: Option<i64>,
    pub(crate) name: String,
    pub(crate) resource_definitions: Vec<String>,
}

/// A component named by id or by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ComponentRef {
    Id(i64),
    Name(String),
}

impl fmt::Display for ComponentRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComponentRef::Id(id) => write!(f, "{id}"),
            ComponentRef::Name(name) => write!(f, "\"{name}\""),
        }
    }
}

/// Digits are an id, anything else a name: component names may not be all
/// digits (see [`check_component_name`]), so this is never ambiguous.
impl FromStr for ComponentRef {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match parse_id(s) {
            Some(id) => ComponentRef::Id(id),
            None => ComponentRef::Name(s.to_owned()),
        })
    }
}

/// The id a URL segment names when it names a component or a resource
/// definition "by id or name": ASCII digits only (`+1`, `-1`, ` 1` are
/// names), so the names [`reads_as_id`] refuses are exactly the texts
/// that could be taken for an id.
pub(crate) fn parse_id(text: &str) -> Option<i64> {
    if reads_as_id(text) {
        text.parse().ok()
    } else {
        None
    }
}

/// Whether `name` is all ASCII digits, which a URL naming a component or
/// a resource by id or name reads as an id (even one too large to be one).
pub(crate) fn reads_as_id(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit())
}

/// What to create: an environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NewEnvironment {
    /// `None` to have one assigned.
    pub(crate) id: Option<i64>,
    pub(crate) components: Vec<ComponentRef>,
    /// From least to most specific.
    pub(crate) hierarchy_levels: Vec<String>,
    pub(crate) hiera: HieraVersion,
}

/// The two documents kept at each (environment, slot, resource): the data
/// as uploaded, and the user's overrides on top of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum DocKind {
    Values,
    Overrides,
}

impl DocKind {
    pub(crate) const ALL: [DocKind; 2] = [DocKind::Values, DocKind::Overrides];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            DocKind::Values => "values",
            DocKind::Overrides => "overrides",
        }
    }
}

impl fmt::Display for DocKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown document kind name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown document kind \"{0}\": use values or overrides")]
pub(crate) struct UnknownKind(pub(crate) String);

impl FromStr for DocKind {
    type Err = UnknownKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "values" => Ok(DocKind::Values),
            "overrides" => Ok(DocKind::Overrides),
            other => Err(UnknownKind(other.to_owned())),
        }
    }
}

/// One version of one document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Version {
    /// 1, 2, … per document.
    pub(crate) number: u64,
    /// When it was written, in Unix seconds.
    pub(crate) created_at: i64,
    /// Bytes of its stored (wire JSON) form.
    pub(crate) size: usize,
    /// A deletion marker: the document was removed at this version (its
    /// content reads as empty). Deleting by a marker keeps the history.
    pub(crate) deleted: bool,
    /// Who wrote it: the principal's name (docs/security.md), or
    /// `local:<user>` for a process writing the database file itself;
    /// `None` for versions written before hierad recorded authors.
    pub(crate) author: Option<String>,
}

/// Which document: environment, level path, resource and kind. Two
/// addresses whose paths share a slot name the same document.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct DocAddress {
    pub(crate) env: i64,
    pub(crate) path: LevelPath,
    pub(crate) resource: String,
    pub(crate) kind: DocKind,
}

impl DocAddress {
    pub(crate) fn new(
        env: i64,
        path: LevelPath,
        resource: impl Into<String>,
        kind: DocKind,
    ) -> Self {
        DocAddress {
            env,
            path,
            resource: resource.into(),
            kind,
        }
    }
}

impl fmt::Display for DocAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of resource \"{}\" ", self.kind, self.resource)?;
        if self.path.is_root() {
            f.write_str("at the root")?;
        } else {
            write!(f, "at {}", self.path)?;
        }
        write!(f, " of environment {}", self.env)
    }
}

/// Refuses a document that nests deeper than the store keeps
/// ([`crate::wire::MAX_DEPTH`]); every write of a document checks it.
///
/// # Errors
///
/// [`Invalid::TooDeep`], naming the document.
pub(crate) fn check_depth(at: &DocAddress, doc: &Hash) -> Result<(), Invalid> {
    let limit = crate::wire::MAX_DEPTH;
    let inside = doc
        .iter()
        .flat_map(|(k, v)| [k, v])
        .map(|v| v.depth_upto(limit - 1))
        .max()
        .unwrap_or(0);
    if 1 + inside > limit {
        return Err(Invalid::TooDeep { doc: at.clone() });
    }
    Ok(())
}

/// The latest version of one stored document, as [`Snapshot`] needs it.
///
/// [`Snapshot`]: super::snapshot::Snapshot
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StoredDocument {
    pub(crate) env: i64,
    /// `None` for the root.
    pub(crate) slot: Option<LevelValue>,
    pub(crate) resource: String,
    pub(crate) kind: DocKind,
    pub(crate) version: Version,
    pub(crate) content: Hash,
}

/// Everything an in-memory snapshot is built from, read in one go.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SnapshotData {
    pub(crate) components: Vec<Component>,
    pub(crate) environments: Vec<Environment>,
    /// The latest version of every document that is not deleted.
    pub(crate) documents: Vec<StoredDocument>,
    /// Latest versions that could not be read (changed behind hierad's
    /// back, or written by a hierad without the depth limit): left out of
    /// `documents`, so the rest can be served.
    pub(crate) unreadable: Vec<UnreadableDocument>,
    /// Latest versions that hold a data file kept unparsed: every read of
    /// one fails with Hiera's error for the file.
    pub(crate) unparsed: Vec<super::unparsed::UnparsedDocument>,
    /// Every register, of deleted environments too (the store keeps them
    /// until a purge).
    pub(crate) registers: Vec<super::RegisterRow>,
}

/// The latest version of a document that does not decode. Names the
/// document, never its content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnreadableDocument {
    pub(crate) at: DocAddress,
    pub(crate) version: u64,
    /// Why, in words that carry nothing of the content.
    pub(crate) reason: &'static str,
}

impl fmt::Display for UnreadableDocument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "version {} of the {}: {}",
            self.version, self.at, self.reason
        )
    }
}

/// A document must be a Hash: takes it out of a parsed value.
///
/// # Errors
///
/// [`Invalid::NotAHash`] naming the class it is instead.
pub(crate) fn into_document(value: Value) -> Result<Hash, ConfigError> {
    match value {
        Value::Hash(h) => Ok(h),
        other => Err(Invalid::NotAHash {
            class: other.class_name(),
        }
        .into()),
    }
}

/// Component names: not empty, no control characters, and not all digits
/// (which would read as an id wherever a component is named by id or name).
///
/// # Errors
///
/// [`Invalid::Name`].
pub(crate) fn check_component_name(name: &str) -> Result<(), ConfigError> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if reads_as_id(name) {
        "it is all digits, which reads as a component id"
    } else if name.chars().any(char::is_control) {
        "it may not contain control characters"
    } else {
        return Ok(());
    };
    Err(bad_name("component", name, reason))
}

/// Names of new resources: [`check_resource_path`], and not all digits,
/// which a document URL reads as a resource definition's id: a writer
/// could otherwise define a resource `1` in a component environments
/// share and take over what `…/resources/1/…` means in all of them.
///
/// # Errors
///
/// [`Invalid::Name`].
pub(crate) fn check_resource_name(name: &str) -> Result<(), ConfigError> {
    check_resource_path(name)?;
    check_resource_length(name)?;
    if reads_as_id(name) {
        return Err(bad_name(
            "resource",
            name,
            "it is all digits, which a URL reads as a resource definition's id",
        ));
    }
    if is_hidden(name) {
        return Err(bad_name(
            "resource",
            name,
            "a segment starts with '.', a hidden file in a tree, which import skips (so an export and `import --replace` would delete it)",
        ));
    }
    Ok(())
}

/// Whether a segment of `name` starts with `.`: its file or a folder on
/// its path is hidden, and an import of the tree skips it (`.git`,
/// editors' files).
pub(crate) fn is_hidden(name: &str) -> bool {
    name.split('/').any(|segment| segment.starts_with('.'))
}

/// Resource names as paths: `/`-separated segments (they map onto files
/// of an `/etc/hiera` tree), none empty, `.` or `..`, no control
/// characters. What a name read from the store must be to be written out
/// as a file (a database may hold all-digit names from before
/// [`check_resource_name`] refused them).
///
/// # Errors
///
/// [`Invalid::Name`].
pub(crate) fn check_resource_path(name: &str) -> Result<(), ConfigError> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if name.split('/').any(str::is_empty) {
        "it has an empty segment (a leading, trailing or double '/')"
    } else if name.split('/').any(|s| s == "." || s == "..") {
        "a segment may not be '.' or '..'"
    } else if name.chars().any(char::is_control) {
        "it may not contain control characters"
    } else {
        return Ok(());
    };
    Err(bad_name("resource", name, reason))
}

/// The longest segment of a resource name, in bytes: its file
/// `<segment>.yaml` must fit the 255 bytes a file name may have (ext4,
/// XFS, btrfs; `NAME_MAX` in POSIX).
pub(crate) const MAX_SEGMENT_BYTES: usize = 255 - ".yaml".len();

/// The longest resource name, in bytes: its file path under an export
/// folder must fit Linux's `PATH_MAX` (4096) with room for the folder.
pub(crate) const MAX_RESOURCE_BYTES: usize = 1024;

/// A resource name that `hierad export` can write as a file: each
/// segment at most [`MAX_SEGMENT_BYTES`], the whole at most
/// [`MAX_RESOURCE_BYTES`]. Refused at write time, so an export never
/// meets a name it cannot write.
///
/// # Errors
///
/// [`Invalid::Name`].
pub(crate) fn check_resource_length(name: &str) -> Result<(), ConfigError> {
    let reason = if name.len() > MAX_RESOURCE_BYTES {
        "it is longer than 1024 bytes, too long for a file path in an exported tree"
    } else if name.split('/').any(|s| s.len() > MAX_SEGMENT_BYTES) {
        "a segment is longer than 250 bytes, too long for a file name (with .yaml) in an exported tree"
    } else {
        return Ok(());
    };
    Err(bad_name("resource", name, reason))
}

/// Hierarchy level names: as in level paths (not empty, no `/`, `,`, `=`).
///
/// # Errors
///
/// [`Invalid::LevelPath`] naming the problem.
pub(crate) fn check_level_name(name: &str) -> Result<(), ConfigError> {
    super::level::check_text("name", name).map_err(ConfigError::from)
}

/// How much of a refused name its error repeats: a name may be as long as
/// a request body, and the message goes back to the client and may be
/// logged.
const NAME_SHOWN: usize = 120;

fn bad_name(what: &'static str, name: &str, reason: &'static str) -> ConfigError {
    Invalid::Name {
        what,
        name: Truncated(name, NAME_SHOWN).to_string(),
        reason,
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("component", "fuel", None),
            ("component", "plugin-1", None),
            ("component", "", Some("it is empty")),
            ("component", "42", Some("all digits")),
            ("resource", "astute", None),
            ("resource", "override/node/node-1.domain.tld", None),
            ("resource", "", Some("it is empty")),
            ("resource", "/astute", Some("empty segment")),
            ("resource", "override/", Some("empty segment")),
            ("resource", "a//b", Some("empty segment")),
            ("resource", "a/../b", Some("'.' or '..'")),
            ("resource", "a\nb", Some("control")),
            ("resource", "1", Some("all digits")),
            ("resource", "007", Some("all digits")),
            ("resource", "99999999999999999999", Some("all digits")),
            ("resource", "+1", None),
            ("resource", "1/2", None),
            ("resource", ".hidden", Some("starts with '.'")),
            ("resource", "override/.node/n1", Some("starts with '.'")),
            ("resource", "a.b/c.", None),
            ("level", "nodes", None),
            ("level", "no/des", Some("may not contain '/'")),
            ("level", "", Some("it is empty")),
        ];
        for (what, name, want) in cases {
            let got = match *what {
                "component" => check_component_name(name),
                "resource" => check_resource_name(name),
                _ => check_level_name(name),
            };
            match (got, want) {
                (Ok(()), None) => {}
                (Err(e), Some(msg)) => {
                    assert!(e.to_string().contains(msg), "{what} {name:?}: {e}");
                    assert_eq!(e.kind(), super::super::error::ErrorKind::Invalid);
                }
                (got, want) => panic!("{what} {name:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    /// A 300-byte name was accepted, then `export` failed halfway with
    /// "File name too long".
    #[test]
    fn resource_names_export_cannot_write_are_refused() {
        let longest = "a".repeat(MAX_SEGMENT_BYTES);
        assert!(check_resource_name(&longest).is_ok());
        assert!(check_resource_name(&format!("override/{longest}")).is_ok());
        for name in [
            "a".repeat(MAX_SEGMENT_BYTES + 1),
            format!("override/{}", "a".repeat(300)),
            // Bytes, not characters: 126 × 2 bytes.
            "é".repeat(126),
        ] {
            let e = check_resource_name(&name).unwrap_err().to_string();
            assert!(e.contains("longer than 250 bytes"), "{e}");
        }
        let deep = vec!["x".repeat(200); 6].join("/");
        let e = check_resource_name(&deep).unwrap_err().to_string();
        assert!(e.contains("longer than 1024 bytes"), "{e}");
        // The message repeats the start of the name, not all of it.
        assert!(
            e.contains(&format!("\"{}…\"", "x".repeat(NAME_SHOWN))),
            "{e}"
        );
        assert!(e.len() < 300, "{e}");
    }

    #[test]
    fn component_refs_and_kinds_parse() {
        assert_eq!("12".parse::<ComponentRef>(), Ok(ComponentRef::Id(12)));
        assert_eq!(
            "fuel".parse::<ComponentRef>(),
            Ok(ComponentRef::Name("fuel".into()))
        );
        assert_eq!(
            "-1".parse::<ComponentRef>(),
            Ok(ComponentRef::Name("-1".into()))
        );
        assert_eq!(
            "+1".parse::<ComponentRef>(),
            Ok(ComponentRef::Name("+1".into()))
        );
        assert_eq!("01".parse::<ComponentRef>(), Ok(ComponentRef::Id(1)));
        assert_eq!(parse_id("+1"), None);
        assert_eq!(parse_id("99999999999999999999"), None);
        for kind in DocKind::ALL {
            assert_eq!(kind.as_str().parse::<DocKind>(), Ok(kind));
        }
        assert!("value".parse::<DocKind>().is_err());
    }

    #[test]
    fn documents_must_be_hashes() {
        assert!(into_document(Value::Hash(Hash::default())).is_ok());
        let err = into_document(Value::Array(vec![])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a document must be a Hash (a JSON object), not Array"
        );
    }

    #[test]
    fn addresses_read_well() {
        let root = DocAddress::new(3, LevelPath::root(), "astute", DocKind::Values);
        assert_eq!(
            root.to_string(),
            "values of resource \"astute\" at the root of environment 3"
        );
        let node = DocAddress::new(
            3,
            LevelPath::parse_cli("nodes=node-1").unwrap(),
            "override/node",
            DocKind::Overrides,
        );
        assert_eq!(
            node.to_string(),
            "overrides of resource \"override/node\" at nodes=node-1 of environment 3"
        );
    }
}
