//! The addressing of document URLs of docs/spec/configdb-api.md: a datasource named
//! by its resource definition's id as well as by its name, the opt-in
//! `308 Permanent Redirect` of a write by name to the id-based URL, and
//! the effective document as it was at a version (`?effective&version=N`).
//! The routes themselves are in `documents.rs`.

use crate::configdb::model::{parse_id, reads_as_id};
use crate::configdb::{DocAddress, DocKind, ErrorKind, LevelPath, Snapshot, fold};
use crate::hiera::Hash;
use crate::server::http::error::ApiError;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The `Prefer` token a client sends to be redirected (308) from a write
/// by datasource name to the id-based URL. Without it a write by name is
/// answered as any write (204): clients that do not follow redirects, as
/// hierad's CLI and the Hiera shim, keep working unchanged.
pub(crate) const PREFER_REDIRECT: &str = "redirect-to-id";

/// How the URL named the datasource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NamedBy {
    Name,
    /// The id of the resource definition.
    Id(i64),
}

/// Resolves the datasource of `at` in place: text of ASCII digits is the
/// id of a resource definition of one of the environment's components,
/// and becomes that definition's name; anything else is a name. An id
/// wins over a name: new names may not be all digits
/// ([`crate::configdb::model::check_resource_name`]), and one a database
/// kept from before is reached by its definition's id, so no write can
/// change what an id-based URL names.
///
/// # Errors
///
/// 404 when the digits are no definition's id in the environment.
pub(crate) fn resolve(snapshot: &Snapshot, at: &mut DocAddress) -> Result<NamedBy, ApiError> {
    if !reads_as_id(&at.resource) || snapshot.environment(at.env).is_none() {
        // An unknown environment is named by the handler's own errors.
        return Ok(NamedBy::Name);
    }
    let found = parse_id(&at.resource)
        .and_then(|id| definitions(snapshot, at.env).find(|(def_id, _)| *def_id == id));
    match found {
        Some((id, name)) => {
            at.resource = name.to_owned();
            Ok(NamedBy::Id(id))
        }
        None => Err(ApiError::NotFound(format!(
            "no resource \"{}\" in environment {}: a datasource of digits is a resource definition's id, \
             and none of the environment's components has one with that id (GET /api/v1/config/components lists them)",
            at.resource, at.env
        ))),
    }
}

/// The (id, name) of every resource definition of the environment's
/// components, in the environment's component order.
fn definitions(snapshot: &Snapshot, env: i64) -> impl Iterator<Item = (i64, &str)> {
    let components = snapshot
        .environment(env)
        .map(|e| e.components.as_slice())
        .unwrap_or_default();
    components.iter().flat_map(move |id| {
        snapshot
            .components()
            .iter()
            .filter(move |c| c.id == *id)
            .flat_map(|c| c.resource_definitions.iter())
            .map(|d| (d.id, d.name.as_str()))
    })
}

/// The id of the definition of `name` in the environment (its first
/// component's, when several define the name).
pub(crate) fn id_of(snapshot: &Snapshot, env: i64, name: &str) -> Option<i64> {
    definitions(snapshot, env).find_map(|(id, n)| (n == name).then_some(id))
}

/// Whether the request asks for [`PREFER_REDIRECT`] (RFC 7240 `Prefer`).
pub(crate) fn prefers_redirect(headers: &HeaderMap) -> bool {
    headers
        .get_all("prefer")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|token| token.trim().eq_ignore_ascii_case(PREFER_REDIRECT))
}

/// The `308 Permanent Redirect` to the id-based URL of a write addressed
/// by name: `path` is the request's full path (still percent-encoded),
/// `tail` how many segments follow the datasource name (`values`: 1,
/// `values/keys/K`: 3), `levels` how many level/value pairs precede
/// `resources`.
pub(crate) fn redirect(
    path: &str,
    query: Option<&str>,
    tail: usize,
    id: i64,
    levels: usize,
) -> Response {
    let segments: Vec<&str> = path.split('/').collect();
    // "", api, v1, config, environments, {env}, then two per level.
    let resources_at = 6 + 2 * levels;
    let name_end = segments.len().saturating_sub(tail);
    let mut location: Vec<String> = segments[..=resources_at.min(segments.len() - 1)]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    location.push(id.to_string());
    location.extend(
        segments[name_end.max(resources_at + 1)..]
            .iter()
            .map(|s| (*s).to_owned()),
    );
    let mut location = location.join("/");
    if let Some(query) = query {
        location.push('?');
        location.push_str(query);
    }
    let mut response = (
        StatusCode::PERMANENT_REDIRECT,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::json!({ "location": location }).to_string(),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response.headers_mut().insert(
        "preference-applied",
        HeaderValue::from_static(PREFER_REDIRECT),
    );
    response
}

/// The effective document at `at` (values) with that level's values at
/// version `version` and every other layer (the levels above, and the
/// level's own overrides) as they are now: what the level's upload N gave,
/// under today's overrides and lower levels.
///
/// # Errors
///
/// 404 "Cannot find a given version…" when the level's values never had
/// that version; 400 for overrides (effective reads values); the
/// snapshot's errors (environment, level, resource).
pub(crate) fn effective_at(
    store: &dyn crate::store::Store,
    snapshot: &Snapshot,
    at: &DocAddress,
    version: u64,
) -> Result<Hash, ApiError> {
    if at.kind != DocKind::Values {
        return Err(ApiError::BadRequest(
            "effective applies to values (it folds values and overrides)".to_owned(),
        ));
    }
    // The environment, the path and the resource must exist first.
    snapshot.try_effective(at.env, &at.path, &at.resource)?;
    let old = match store.get(at, Some(version)) {
        // A deletion marker reads as an empty Hash: the level had no
        // values then.
        Ok(Some((_, doc))) => doc,
        Err(e) if !e.config().is_some_and(|c| c.kind() == ErrorKind::NotFound) => {
            return Err(e.into());
        }
        _ => {
            return Err(ApiError::NotFound(format!(
                "Cannot find a given version of data for the given cluster, node and data source: {at} has no version {version}"
            )));
        }
    };
    fold_with(snapshot, at.env, &at.path, &at.resource, &old)
}

/// Folds the layers of `path` from the root, taking the values of the
/// last slot from `values` instead of the snapshot.
pub(crate) fn fold_with(
    snapshot: &Snapshot,
    env: i64,
    path: &LevelPath,
    resource: &str,
    values: &Hash,
) -> Result<Hash, ApiError> {
    let pairs = path.pairs();
    let mut layers: Vec<Hash> = Vec::with_capacity(2 * (pairs.len() + 1));
    for depth in 0..=pairs.len() {
        let prefix = LevelPath::new(pairs[..depth].to_vec());
        let last = depth == pairs.len();
        for kind in [DocKind::Values, DocKind::Overrides] {
            if last && kind == DocKind::Values {
                layers.push(values.clone());
                continue;
            }
            let stored = snapshot.stored(env, &prefix, resource, kind)?;
            layers.push(stored.map(|d| Hash::clone(&d.content)).unwrap_or_default());
        }
    }
    Ok(fold::fold(&layers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configdb::model::{Component, Environment, ResourceDefinition, SnapshotData};

    fn definition(id: i64, name: &str) -> ResourceDefinition {
        ResourceDefinition {
            id,
            name: name.to_owned(),
            content: serde_json::Map::new(),
        }
    }

    /// Digits are an id, always: a name made of digits that a database
    /// kept from before they were refused (`"1"`, definition 5) changes
    /// nothing `…/resources/1/…` names, and is reached by its own id.
    #[test]
    fn digits_are_an_id_even_where_a_name_is_made_of_digits() {
        let snapshot = Snapshot::build(SnapshotData {
            components: vec![Component {
                id: 9,
                name: "fuel".to_owned(),
                resource_definitions: vec![definition(1, "astute"), definition(5, "1")],
            }],
            environments: vec![Environment {
                hiera: Default::default(),
                id: 2,
                components: vec![9],
                hierarchy_levels: vec![],
            }],
            ..SnapshotData::default()
        });
        let resolved = |text: &str| {
            let mut at = DocAddress::new(2, LevelPath::root(), text, DocKind::Values);
            resolve(&snapshot, &mut at).map(|by| (at.resource, by))
        };
        assert_eq!(
            resolved("1").unwrap(),
            ("astute".to_owned(), NamedBy::Id(1))
        );
        assert_eq!(resolved("5").unwrap(), ("1".to_owned(), NamedBy::Id(5)));
        assert_eq!(
            resolved("astute").unwrap(),
            ("astute".to_owned(), NamedBy::Name)
        );
        // Not digits only: a name, never an id.
        assert_eq!(resolved("+1").unwrap(), ("+1".to_owned(), NamedBy::Name));
        let Err(ApiError::NotFound(message)) = resolved("7") else {
            panic!("7 is no definition's id");
        };
        assert!(
            message.starts_with("no resource \"7\" in environment 2"),
            "{message}"
        );
    }
}
