//! Hierarchies registered once and named by id in lookups
//! (`POST /api/v1/hierarchies`): a Hiera client sends the
//! same level templates with every request of one `hiera.yaml`, and
//! parsing them is a quarter of a lookup request's parse. The id is
//! derived from the content, so every process and replica gives a list the
//! same id, and the registry here is only a per-process memory of lists,
//! bounded, that a client fills again when it forgets one (409).

use crate::api;
use crate::hiera::Value;
use crate::hiera::hierarchy::Hierarchy;
use crate::server::http::body::LookupBytes;
use crate::server::http::error::ApiError;
use crate::server::state::AppState;
use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::post;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, RwLock};

/// The registration route.
pub(crate) fn routes() -> Router<AppState> {
    Router::new().route(api::paths::HIERARCHIES, post(register))
}

/// How many hierarchies a process holds: a deployment has a few
/// `hiera.yaml`s, and a client whose list was dropped registers again.
pub(crate) const MAX_HIERARCHIES: usize = 1024;

/// How many bytes of levels a process holds at most (their text, and
/// what each level takes beside it: [`Hierarchy::held_bytes`]; a single
/// registration may be larger, up to the lookup body limit: it is then
/// held alone), so that registering large lists cannot exhaust memory.
pub(crate) const MAX_HIERARCHY_BYTES: usize = 16 * 1024 * 1024;

/// A hierarchy's id: the first 16 bytes of SHA-256 over its levels, each
/// as its length (8 bytes, big-endian) then its bytes, so that no two
/// lists share an encoding. Written as 32 lowercase hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct HierarchyId(u128);

impl HierarchyId {
    pub(crate) fn of<'a>(levels: impl IntoIterator<Item = &'a str>) -> HierarchyId {
        let mut sha = Sha256::new();
        for level in levels {
            sha.update((level.len() as u64).to_be_bytes());
            sha.update(level.as_bytes());
        }
        let digest = sha.finalize();
        let mut first = [0; 16];
        first.copy_from_slice(&digest[..16]);
        HierarchyId(u128::from_be_bytes(first))
    }

    /// `text` as an id, if it is 32 lowercase hex digits.
    pub(crate) fn parse(text: &str) -> Option<HierarchyId> {
        if text.len() != 32 {
            return None;
        }
        // One pass (every lookup by id parses one): checking the digits
        // and then `u128::from_str_radix` cost 740 instructions.
        text.bytes()
            .try_fold(0u128, |id, b| {
                let digit = match b {
                    b'0'..=b'9' => b - b'0',
                    b'a'..=b'f' => b - b'a' + 10,
                    _ => return None,
                };
                Some(id << 4 | u128::from(digit))
            })
            .map(HierarchyId)
    }
}

impl fmt::Display for HierarchyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// The registered hierarchies, as the Array of Strings a lookup walks
/// (what an inline `hierarchy` parses to) with their levels' templates
/// compiled once, at registration, shared by every lookup naming them.
/// Oldest dropped first when full.
pub(crate) struct Hierarchies {
    held: RwLock<Held>,
    max_count: usize,
    max_bytes: usize,
}

struct Held {
    /// Keyed by the id itself, already uniform: hashed cheaply.
    lists: HashMap<HierarchyId, (Arc<Hierarchy>, usize), foldhash::fast::RandomState>,
    /// Registration order, oldest first.
    order: VecDeque<HierarchyId>,
    bytes: usize,
}

impl Default for Hierarchies {
    fn default() -> Self {
        Hierarchies::with_bounds(MAX_HIERARCHIES, MAX_HIERARCHY_BYTES)
    }
}

impl Hierarchies {
    pub(crate) fn with_bounds(max_count: usize, max_bytes: usize) -> Hierarchies {
        Hierarchies {
            held: RwLock::new(Held {
                lists: HashMap::default(),
                order: VecDeque::new(),
                bytes: 0,
            }),
            max_count: max_count.max(1),
            max_bytes,
        }
    }

    /// The levels registered as `id`, if this process holds them.
    pub(crate) fn get(&self, id: HierarchyId) -> Option<Arc<Hierarchy>> {
        let held = self.held.read().unwrap_or_else(|e| e.into_inner());
        held.lists.get(&id).map(|(levels, _)| Arc::clone(levels))
    }

    /// Holds `levels` (checked: Strings only) and answers their id; a list
    /// already held stays where it is in the order.
    pub(crate) fn register(&self, levels: Vec<String>) -> HierarchyId {
        let id = HierarchyId::of(levels.iter().map(String::as_str));
        if self.get(id).is_some() {
            return id;
        }
        let value = Arc::new(Hierarchy::new(Value::Array(
            levels.into_iter().map(Value::String).collect(),
        )));
        let size = value.held_bytes();
        let mut held = self.held.write().unwrap_or_else(|e| e.into_inner());
        if held.lists.contains_key(&id) {
            return id;
        }
        while !held.order.is_empty()
            && (held.order.len() >= self.max_count || held.bytes + size > self.max_bytes)
        {
            let oldest = held.order.pop_front().expect("not empty");
            if let Some((_, dropped)) = held.lists.remove(&oldest) {
                held.bytes -= dropped;
            }
        }
        held.lists.insert(id, (value, size));
        held.order.push_back(id);
        held.bytes += size;
        id
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.held.read().unwrap().lists.len()
    }
}

/// `POST /api/v1/hierarchies`: `{"hierarchy": [...]}` → `{"id": ...}`.
async fn register(
    State(state): State<AppState>,
    LookupBytes(bytes, _turn): LookupBytes,
) -> Result<Json<api::RegisteredHierarchy>, ApiError> {
    let levels = parse_registration(&bytes)?;
    let id = state.hierarchies().register(levels);
    Ok(Json(api::RegisteredHierarchy { id: id.to_string() }))
}

/// The levels of a registration body, checked as a lookup request's
/// `hierarchy` is (the same messages).
fn parse_registration(bytes: &[u8]) -> Result<Vec<String>, ApiError> {
    let bad = |m: String| ApiError::BadRequest(m);
    let body: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("malformed JSON: {e}")))?;
    let serde_json::Value::Object(fields) = body else {
        return Err(bad("a hierarchy registration is a JSON object".to_owned()));
    };
    if let Some(unknown) = fields.keys().find(|k| *k != "hierarchy") {
        return Err(bad(format!(
            "unknown field {unknown:?} in the hierarchy registration"
        )));
    }
    let Some(hierarchy) = fields.get("hierarchy") else {
        return Err(bad("the hierarchy registration has no hierarchy".to_owned()));
    };
    let levels = match hierarchy {
        serde_json::Value::Array(levels) => levels
            .iter()
            .map(|l| l.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>(),
        _ => None,
    };
    levels.ok_or_else(|| bad(crate::server::routes::lookup::BAD_HIERARCHY.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hiera::interpolate::plain::Template;

    fn list(levels: &[&str]) -> Vec<String> {
        levels.iter().map(|l| (*l).to_owned()).collect()
    }

    #[test]
    fn ids_are_content_derived_and_unambiguous() {
        let id = HierarchyId::of(["a", "b"]);
        assert_eq!(id, HierarchyId::of(["a", "b"]));
        assert_ne!(id, HierarchyId::of(["ab"]));
        assert_ne!(id, HierarchyId::of(["a", "b", ""]));
        assert_ne!(id, HierarchyId::of(["b", "a"]));
        assert_ne!(HierarchyId::of([]), HierarchyId::of([""]));
        // Fixed for every process: SHA-256 of (len 1, "a") (len 1, "b").
        let mut sha = Sha256::new();
        sha.update([0, 0, 0, 0, 0, 0, 0, 1, b'a', 0, 0, 0, 0, 0, 0, 0, 1, b'b']);
        let digest = sha.finalize();
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(id.to_string(), hex);
        assert_eq!(HierarchyId::parse(&hex), Some(id));
    }

    #[test]
    fn only_32_lowercase_hex_digits_parse() {
        let good = "0123456789abcdef0123456789abcdef";
        assert_eq!(HierarchyId::parse(good).unwrap().to_string(), good);
        for bad in [
            "",
            "0123456789ABCDEF0123456789abcdef",
            "0123456789abcdef0123456789abcde",
            "0123456789abcdef0123456789abcdef0",
            "+123456789abcdef0123456789abcdef",
            "0123456789abcdeg0123456789abcdef",
        ] {
            assert_eq!(HierarchyId::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_oldest_registration_is_dropped_first() {
        let held = Hierarchies::with_bounds(3, usize::MAX);
        let ids: Vec<_> = ["a", "b", "c"]
            .iter()
            .map(|l| held.register(list(&[l])))
            .collect();
        // Registering a held list again changes nothing (nor its place).
        assert_eq!(held.register(list(&["a"])), ids[0]);
        assert_eq!(held.len(), 3);
        let d = held.register(list(&["d"]));
        assert_eq!(held.len(), 3);
        assert_eq!(held.get(ids[0]), None, "a, the oldest, is dropped");
        for id in [ids[1], ids[2], d] {
            assert!(held.get(id).is_some());
        }
        assert_eq!(
            *held.get(d).unwrap().written(),
            Value::Array(vec![Value::str("d")])
        );
        // Dropped, registered again: held again, under the same id.
        assert_eq!(held.register(list(&["a"])), ids[0]);
        assert!(held.get(ids[0]).is_some());
        assert_eq!(held.get(ids[1]), None);
    }

    #[test]
    fn the_bytes_held_are_bounded_too() {
        // Each level takes its Value and its template beside its text.
        let level = size_of::<Value>() + size_of::<Template>();
        let held = Hierarchies::with_bounds(100, 3 * level + 10);
        let first = held.register(list(&["12345", "678"]));
        let second = held.register(list(&["abcde"]));
        assert_eq!(held.get(first), None, "3 levels and 8 + 5 bytes are over");
        assert!(held.get(second).is_some());
        // Alone over the bound: held alone.
        let large = held.register(list(&["0123456789abc", "", ""]));
        assert!(held.get(large).is_some());
        assert_eq!(held.len(), 1);
        // Empty levels hold no text, but are counted all the same.
        let held = Hierarchies::with_bounds(100, 4 * level);
        let empty = held.register(list(&["", ""]));
        held.register(list(&["", "", ""]));
        assert_eq!(held.get(empty), None, "5 levels are over 4");
        // A template's pieces are counted too.
        let pieces = Hierarchy::new(Value::Array(vec![Value::str("a/%{x}")]));
        assert_eq!(
            pieces.held_bytes(),
            level + 6 + 2 * size_of::<crate::hiera::interpolate::plain::Piece>()
        );
    }

    #[test]
    fn registrations_are_checked_as_lookup_hierarchies_are() {
        let levels = parse_registration(br#"{"hierarchy":["a","%{::fqdn}"]}"#).unwrap();
        assert_eq!(levels, list(&["a", "%{::fqdn}"]));
        for (body, says) in [
            (
                &br#"{"hierarchy":"a"}"#[..],
                "hierarchy is a list of datasource names",
            ),
            (
                br#"{"hierarchy":["a",1]}"#,
                "hierarchy is a list of datasource names",
            ),
            (
                br#"{"hierarchy":null}"#,
                "hierarchy is a list of datasource names",
            ),
            (br#"{"hierarchy":[],"key":"x"}"#, "unknown field \"key\""),
            (br"{}", "has no hierarchy"),
            (br#"["a"]"#, "is a JSON object"),
            (br#"{"hierarchy":["#, "malformed JSON"),
        ] {
            match parse_registration(body) {
                Err(ApiError::BadRequest(m)) => assert!(m.contains(says), "{m}"),
                other => panic!("{}: {other:?}", String::from_utf8_lossy(body)),
            }
        }
    }
}
