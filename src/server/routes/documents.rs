//! The versioned `values`/`overrides` documents of the ConfigDB API, at
//! any level path of an environment (see docs/api.md):
//! `/api/v1/config/environments/{env}/[{level}/{value}/…]resources/{resource…}/{values|overrides}`,
//! with `/history`, `/restore` and `/keys/{key}` below it. Reads answer
//! from the snapshot (an old version or a key once per generation,
//! `state/versions.rs`); writes go through `ops::writes` in one store
//! transaction.

use super::datasource::{self, NamedBy};
use super::encoded;
use super::env::Env;
use super::impact;
use super::params::{Params, flag};
use super::registers;
use super::rest::Rest;
use crate::api;
use crate::auth::Principal;
use crate::configdb::{
    DocAddress, DocKind, Encoded, KeyPath, LevelPath, Snapshot, StoredDoc, Version, keypath,
    split_once_at,
};
use crate::hiera::{Hash, Value};
use crate::ops;
use crate::server::http::body::{Body, document};
use crate::server::http::error::ApiError;
use crate::server::http::templates::Answering;
use crate::server::secrets::{self, Reveal};
use crate::server::state::AppState;
use crate::server::state::consistency;
use crate::server::state::versions::Answer;
use crate::store::{DocWrite, WriteCtx};
use crate::wire;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use std::sync::Arc;

/// The document routes, under `/api/v1/config` with the others
/// (after them: `{*rest}` takes what no other route does).
pub(crate) fn routes() -> Router<AppState> {
    Router::new().route(
        crate::api::paths::DOCUMENT,
        get(get_document)
            .put(put_document)
            .delete(delete_document)
            .post(post_document),
    )
}

/// A document's GET as `Harden` calls it, past axum's router
/// (src/server/http/templates.rs, `Templates::direct`).
pub(crate) fn get_direct(request: axum::extract::Request, state: AppState) -> Answering {
    axum::handler::Handler::call(get_document, request, state)
}

/// What a document URL names.
#[derive(Debug, PartialEq)]
enum Target {
    Document,
    History,
    Restore,
    Key(String),
    /// `…/diff`: two versions, or two generations of the effective one.
    Diff,
}

/// `{level}/{value}/…/resources/{resource…}/{values|overrides|override}[/history|/restore|/keys/{key}]`.
///
/// Read where it stands, in slices of `rest`: collected into segments and
/// joined again, it cost about 3,400 instructions and eight allocations
/// a document read, where four are needed (bench/LOG.md, "A document URL
/// read where it stands").
fn parse_document_url<'a>(env: i64, rest: &'a str) -> Result<(DocAddress, Target), ApiError> {
    // `resources` as a level name (an even segment) ends the levels.
    let mut at = None;
    let (mut start, mut even) = (0, true);
    let mut segments = Some(rest);
    while let Some(text) = segments {
        let (segment, after) =
            split_once_at(text, b'/').map_or((text, None), |(s, a)| (s, Some(a)));
        if even && segment == "resources" {
            at = Some(start);
            break;
        }
        start += segment.len() + 1;
        even = !even;
        segments = after;
    }
    let Some(at) = at else {
        return Err(ApiError::NotFound(format!(
            "no such route: expected {{level}}/{{value}}/…/resources/{{name}}/values, got {rest}"
        )));
    };
    let path = match at.checked_sub(1) {
        None => LevelPath::root(),
        Some(end) => {
            LevelPath::parse_url(&rest[..end]).map_err(|e| ApiError::BadRequest(e.to_string()))?
        }
    };
    let after = &rest[at + "resources".len()..];
    let tail = after.strip_prefix('/').unwrap_or(after);
    let is_kind = |s: &str| matches!(s, "values" | "overrides" | "override");
    // `text`'s last segment, and what is before it (`None`: nothing).
    fn last(text: &str) -> (Option<&str>, &str) {
        match text.rsplit_once('/') {
            Some((before, last)) => (Some(before), last),
            None => (None, text),
        }
    }
    // A kind ending `text`, and the resource before it.
    let kind_ending = |text: Option<&'a str>| {
        let (resource, kind) = last(text?);
        is_kind(kind).then_some((resource.unwrap_or(""), kind))
    };
    let (before, final_segment) = last(tail);
    let (before_keys, keys) = before.map_or((None, ""), last);
    let below = match final_segment {
        "history" => Some(Target::History),
        "restore" => Some(Target::Restore),
        "diff" => Some(Target::Diff),
        _ => None,
    };
    // In the order of precedence: `…/values/history` is the history, not
    // a resource named `values`; `…/values/keys/history` is a key.
    let found = below
        .and_then(|target| Some((kind_ending(before)?, target)))
        .or_else(|| {
            let named = kind_ending(before_keys).filter(|_| keys == "keys")?;
            Some((named, Target::Key(final_segment.to_owned())))
        })
        .or_else(|| {
            let named = (before.unwrap_or(""), final_segment);
            is_kind(final_segment).then_some((named, Target::Document))
        });
    let Some(((resource, kind), target)) = found else {
        return Err(ApiError::NotFound(format!(
            "no such route: a document URL ends in /values or /overrides, got {rest}"
        )));
    };
    if resource.is_empty() {
        return Err(ApiError::NotFound(
            "no resource named in the URL".to_owned(),
        ));
    }
    let kind = if kind == "values" {
        DocKind::Values
    } else {
        DocKind::Overrides
    };
    Ok((
        DocAddress::new(env, path, resource.to_owned(), kind),
        target,
    ))
}

fn wire_response(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        wire::to_string(value),
    )
        .into_response()
}

/// `answer` about the document at `at`, made by `make` (off the async
/// workers) once for every request that asks for it at this generation
/// (`state/versions.rs`).
async fn shared_answer(
    state: &AppState,
    at: DocAddress,
    answer: Answer,
    make: impl FnOnce(&dyn crate::store::Store, &Snapshot) -> Result<Encoded, ApiError> + Send + 'static,
) -> Result<std::sync::Arc<Encoded>, ApiError> {
    // The generation first: a snapshot read after it is at least as new.
    let generation = state.generation();
    if let Some(kept) = state.versions().get(generation, &at, &answer) {
        return Ok(kept);
    }
    let snapshot = state.snapshot();
    let maker = state.clone();
    state
        .read(move |store| {
            maker
                .versions()
                .get_or_make(generation, &at, answer, || make(store, &snapshot))
                .map_err(|shared| {
                    // Each caller waiting on one failed make gets its error.
                    std::sync::Arc::try_unwrap(shared).unwrap_or_else(|shared| match &*shared {
                        ApiError::NotFound(m) => ApiError::NotFound(m.clone()),
                        ApiError::BadRequest(m) => ApiError::BadRequest(m.clone()),
                        ApiError::Unavailable(m) => ApiError::Unavailable(m.clone()),
                        other => ApiError::Internal(other.detail()),
                    })
                })
        })
        .await
}

/// Version `number` of the document at `at`, as stored.
async fn stored_version(
    state: &AppState,
    at: DocAddress,
    number: u64,
) -> Result<std::sync::Arc<Encoded>, ApiError> {
    let read = at.clone();
    shared_answer(state, at, Answer::Stored(number), move |store, _| {
        let (_, doc) = store
            .get(&read, Some(number))?
            .ok_or_else(|| ApiError::NotFound(format!("version {number} does not exist")))?;
        Ok(Encoded::of(&doc))
    })
    .await
}

/// Key `key` of the document at `at`: of `version` (the latest: `None`),
/// stored or `effective`.
async fn key_answer(
    state: &AppState,
    at: DocAddress,
    key: KeyPath,
    version: Option<u64>,
    effective: bool,
) -> Result<std::sync::Arc<Encoded>, ApiError> {
    let answer = Answer::Key {
        version,
        effective,
        key: key.as_str().to_owned(),
    };
    let read = at.clone();
    shared_answer(state, at, answer, move |store, snapshot| {
        let at = &read;
        let doc: std::sync::Arc<Hash> = match (version, effective) {
            (Some(version), true) => {
                std::sync::Arc::new(datasource::effective_at(store, snapshot, at, version)?)
            }
            (Some(version), false) => {
                let (_, doc) = store.get(at, Some(version))?.ok_or_else(|| {
                    ApiError::NotFound(format!("version {version} does not exist"))
                })?;
                std::sync::Arc::new(doc)
            }
            (None, true) => {
                if at.kind != DocKind::Values {
                    return Err(effective_of_overrides());
                }
                snapshot.try_effective(at.env, &at.path, &at.resource)?
            }
            (None, false) => snapshot
                .stored(at.env, &at.path, &at.resource, at.kind)?
                .map(|d| d.content.clone())
                .unwrap_or_default(),
        };
        nested(&doc, &key)
    })
    .await
}

fn effective_of_overrides() -> ApiError {
    ApiError::BadRequest("effective applies to values (it folds values and overrides)".to_owned())
}

fn key_path(text: &str) -> Result<KeyPath, ApiError> {
    KeyPath::parse(text).map_err(|e| ApiError::BadRequest(e.to_string()))
}

/// Key `key` of `doc`, encoded.
fn nested(doc: &Hash, key: &KeyPath) -> Result<Encoded, ApiError> {
    keypath::get(doc, key)
        .map_err(|e| ApiError::NotFound(e.to_string()))?
        .map(Encoded::of_value)
        .ok_or_else(|| ApiError::NotFound(format!("key {} is not in the document", key.as_str())))
}

fn version_param(text: &str) -> Result<u64, ApiError> {
    text.parse()
        .map_err(|_| ApiError::BadRequest(format!("version must be a number, not {text:?}")))
}

/// `doc`'s shared body; its first encoding runs on a blocking thread: a
/// large document's JSON takes a debug build a tenth of a second and more
/// to write, and on an async worker every request behind it (/healthz
/// included) waited that long.
async fn encoded_off_workers(doc: &StoredDoc) -> Result<Arc<Encoded>, ApiError> {
    if let Some(made) = doc.encoded_made() {
        return Ok(made);
    }
    // The clone shares the document's one body (an `Arc`'d cell).
    let doc = doc.clone();
    tokio::task::spawn_blocking(move || doc.encoded())
        .await
        .map_err(|e| ApiError::Internal(format!("encoding a document failed: {e}")))
}

async fn get_document(
    State(state): State<AppState>,
    who: Principal,
    Env(env): Env,
    // What follows `/environments/{env}/`.
    Rest(rest): Rest,
    Params(query): Params,
    reveal: Reveal,
    // The request itself, for If-None-Match: a `HeaderMap` extractor
    // copies every header.
    request: axum::extract::Request,
) -> Result<Response, ApiError> {
    let (mut at, target) = parse_document_url(env, &rest)?;
    let reveal = reveal.asked(flag(&query, "decrypt")?);
    let snapshot = state.snapshot();
    registers::check_read(&snapshot, &who, env, &at.path)?;
    datasource::resolve(&snapshot, &mut at)?;
    match target {
        Target::History => {
            let history = state.read(move |store| Ok(store.history(&at)?)).await?;
            let listed: Vec<api::Version> = history.iter().map(api::Version::from).collect();
            Ok(Json(listed).into_response())
        }
        Target::Restore => Err(ApiError::BadRequest("restore is a POST".to_owned())),
        Target::Diff => super::diffs::diff(&state, at, &query).await,
        Target::Key(key) => {
            let key = key_path(&key)?;
            let doc = key_answer(&state, at, key, None, false).await?;
            Ok(encoded::body(&doc))
        }
        Target::Document if flag(&query, "unparsed")? => {
            let file = state.read(move |store| Ok(store.kept_file(&at)?)).await?;
            Ok(Json(file.as_ref().map(api::UnparsedFile::of)).into_response())
        }
        Target::Document => {
            let key = query.get("key").map(|k| key_path(k)).transpose()?;
            let effective = flag(&query, "effective")?;
            let version = query.get("version").map(|v| version_param(v)).transpose()?;
            if flag(&query, "show_lookup")? {
                if !effective || key.is_some() || version.is_some() {
                    return Err(ApiError::BadRequest(
                        "show_lookup goes with effective alone (…/values?effective&show_lookup)"
                            .to_owned(),
                    ));
                }
                return super::provenance::show_lookup(&snapshot, &at);
            }
            if let Some(pin) = super::pinned::pin_of(&query)? {
                if !effective || version.is_some() {
                    return Err(ApiError::BadRequest(
                        "generation= and tag= apply to effective reads (?effective), without version="
                            .to_owned(),
                    ));
                }
                return super::pinned::effective(&state, pin, &at, key, &reveal).await;
            }
            if effective && key.is_none() && version.is_none() && at.kind == DocKind::Values {
                // The whole latest effective document: encoded once per
                // snapshot, sent as it is, revalidated with its ETag (a
                // decrypted one has none: docs/security.md, "Secrets").
                let doc = snapshot.try_encoded(env, &at.path, &at.resource)?;
                return match reveal.effective(&doc, None)? {
                    Some(plain) => Ok(plain),
                    None => encoded::revalidated(&doc, request.headers()),
                };
            }
            if !effective && key.is_none() {
                // A whole stored document: its body is encoded once and
                // shared by every request for it.
                let stored = snapshot.stored(env, &at.path, &at.resource, at.kind)?;
                let latest = stored.map(|d| d.version.clone());
                let doc = match (version, stored) {
                    (None, None) => {
                        return Ok(wire_response(StatusCode::OK, &Value::Hash(Hash::default())));
                    }
                    (None, Some(d)) => encoded_off_workers(d).await?,
                    (Some(n), Some(d)) if d.version.number == n => encoded_off_workers(d).await?,
                    (Some(n), _) => stored_version(&state, at, n).await?,
                };
                let response = encoded::body(&doc);
                return Ok(match (version, latest) {
                    (None, Some(latest)) => with_version(response, &latest),
                    _ => response,
                });
            }
            // A key, or an old version's effective document: made once
            // for every request that asks for it (`state/versions.rs`).
            let key_text = key.as_ref().map(|k| k.as_str().to_owned());
            let doc = match (key, version) {
                (Some(key), _) => key_answer(&state, at.clone(), key, version, effective).await?,
                (None, Some(version)) => {
                    let read = at.clone();
                    shared_answer(
                        &state,
                        at.clone(),
                        Answer::Effective(version),
                        move |store, snapshot| {
                            let doc = datasource::effective_at(store, snapshot, &read, version)?;
                            Ok(Encoded::of(&doc))
                        },
                    )
                    .await?
                }
                (None, None) => return Err(effective_of_overrides()),
            };
            if effective {
                if let Some(plain) = reveal.effective(&doc, key_text.as_deref())? {
                    return Ok(plain);
                }
            }
            let response = encoded::body(&doc);
            // The latest live version of a stored document, for a
            // conditional write.
            Ok(match (version, effective) {
                (None, false) => {
                    let stored = snapshot.stored(env, &at.path, &at.resource, at.kind)?;
                    match stored {
                        Some(d) => with_version(response, &d.version),
                        None => response,
                    }
                }
                _ => response,
            })
        }
    }
}

async fn put_document(
    State(state): State<AppState>,
    who: Principal,
    Env(env): Env,
    // What follows `/environments/{env}/`.
    Rest(rest): Rest,
    headers: HeaderMap,
    // The router is merged, never nested: the URI is the one sent.
    uri: axum::http::Uri,
    Body(body, _turn): Body,
) -> Result<Response, ApiError> {
    let query = super::params::parse(uri.query().unwrap_or_default())?;
    let (mut at, target) = parse_document_url(env, &rest)?;
    let encrypt = secrets::encrypting(&uri)?;
    let snapshot = state.snapshot();
    let named_by = datasource::resolve(&snapshot, &mut at)?;
    let tail = match &target {
        Target::Key(_) => 3,
        _ => 1,
    };
    if named_by == NamedBy::Name && datasource::prefers_redirect(&headers) {
        if let Some(id) = datasource::id_of(&snapshot, env, &at.resource) {
            let levels = at.path.pairs().len();
            return Ok(datasource::redirect(
                uri.path(),
                uri.query(),
                tail,
                id,
                levels,
            ));
        }
    }
    if matches!(target, Target::Document | Target::Key(_)) && impact::asked(&query)? {
        let key = match &target {
            Target::Key(key) => Some(key_path(key)?),
            _ => None,
        };
        let writes = impact::put_writes(&snapshot, &at, key.as_ref(), body)?;
        return impact::dry_run(&state, &who, env, writes, &query, true).await;
    }
    let expected = consistency::if_match(&headers)?;
    let written = match target {
        Target::Document => {
            let doc = document(secrets::encrypt(&state, &encrypt, None, body)?)?;
            state
                .write(move |store| {
                    store
                        .write_document(&at, DocWrite::Put(&doc), by(&who, expected))
                        .map_err(|e| ops::writes::store_error_seen_by(e, &who).into())
                })
                .await?
        }
        Target::Key(key) => {
            let key = key_path(&key)?;
            let body = secrets::encrypt(&state, &encrypt, Some(&key), body)?;
            state
                .write(move |store| {
                    ops::writes::set_key(store, &at, &key, body, by(&who, expected))
                        .map_err(|e| ops::writes::store_error_seen_by(e, &who).into())
                })
                .await?
        }
        Target::History | Target::Restore | Target::Diff => {
            return Err(ApiError::BadRequest(
                "history, restore and diff are not written with PUT".to_owned(),
            ));
        }
    };
    Ok(with_version(
        StatusCode::NO_CONTENT.into_response(),
        &written,
    ))
}

/// A write by the request's principal (the version's author) on the
/// request's `If-Match`.
fn by(who: &Principal, expected: Option<u64>) -> WriteCtx<'_> {
    WriteCtx {
        author: Some(&who.name),
        expected,
    }
}

/// `response` with the version a write made (or a read found) in
/// `X-Hierad-Version`, for a later `If-Match`.
fn with_version(mut response: Response, version: &Version) -> Response {
    response.headers_mut().insert(
        consistency::VERSION,
        header::HeaderValue::from(version.number),
    );
    response
}

async fn delete_document(
    State(state): State<AppState>,
    who: Principal,
    Env(env): Env,
    // What follows `/environments/{env}/`.
    Rest(rest): Rest,
    Params(query): Params,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (mut at, target) = parse_document_url(env, &rest)?;
    let snapshot = state.snapshot();
    datasource::resolve(&snapshot, &mut at)?;
    if target != Target::Document {
        return Err(ApiError::BadRequest(
            "only a whole document can be deleted".to_owned(),
        ));
    }
    if impact::asked(&query)? {
        let writes = impact::delete_writes(&snapshot, &at)?;
        return impact::dry_run(&state, &who, env, writes, &query, true).await;
    }
    let expected = consistency::if_match(&headers)?;
    let marker = state
        .write(move |store| {
            store
                .write_document(&at, DocWrite::Delete, by(&who, expected))
                .map_err(|e| ops::writes::store_error_seen_by(e, &who).into())
        })
        .await?;
    Ok(with_version(
        StatusCode::NO_CONTENT.into_response(),
        &marker,
    ))
}

async fn post_document(
    State(state): State<AppState>,
    who: Principal,
    Env(env): Env,
    // What follows `/environments/{env}/`.
    Rest(rest): Rest,
    Params(query): Params,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (mut at, target) = parse_document_url(env, &rest)?;
    datasource::resolve(&state.snapshot(), &mut at)?;
    if target != Target::Restore {
        return Err(ApiError::BadRequest(
            "POST is for …/restore?version=N".to_owned(),
        ));
    }
    let version: u64 = query
        .get("version")
        .ok_or_else(|| ApiError::BadRequest("restore needs ?version=N".to_owned()))?
        .parse()
        .map_err(|_| ApiError::BadRequest("version must be a number".to_owned()))?;
    if impact::asked(&query)? {
        let writes = impact::restore_writes(&state, &at, version).await?;
        return impact::dry_run(&state, &who, env, writes, &query, true).await;
    }
    let expected = consistency::if_match(&headers)?;
    let restored = state
        .write(move |store| {
            store
                .write_document(&at, DocWrite::Restore(version), by(&who, expected))
                .map_err(|e| ops::writes::store_error_seen_by(e, &who).into())
        })
        .await?;
    let response = (StatusCode::CREATED, Json(api::Version::from(&restored))).into_response();
    Ok(with_version(response, &restored))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_urls() {
        let cases: &[(&str, &str, &str, DocKind, Target)] = &[
            (
                "resources/astute/values",
                "",
                "astute",
                DocKind::Values,
                Target::Document,
            ),
            (
                "nodes/n1/resources/astute/overrides",
                "nodes=n1",
                "astute",
                DocKind::Overrides,
                Target::Document,
            ),
            (
                "nodes/n1/resources/astute/override",
                "nodes=n1",
                "astute",
                DocKind::Overrides,
                Target::Document,
            ),
            (
                "resources/override/node/n1.d/values/history",
                "",
                "override/node/n1.d",
                DocKind::Values,
                Target::History,
            ),
            (
                "resources/a/values/restore",
                "",
                "a",
                DocKind::Values,
                Target::Restore,
            ),
            (
                "nodes/n1/resources/a/overrides/diff",
                "nodes=n1",
                "a",
                DocKind::Overrides,
                Target::Diff,
            ),
            (
                "resources/a/values/keys/x.y",
                "",
                "a",
                DocKind::Values,
                Target::Key("x.y".into()),
            ),
            // A key named like a sub-route, resources named like kinds.
            (
                "resources/a/values/keys/history",
                "",
                "a",
                DocKind::Values,
                Target::Key("history".into()),
            ),
            (
                "resources/history/values",
                "",
                "history",
                DocKind::Values,
                Target::Document,
            ),
            (
                "resources/values/values/history",
                "",
                "values",
                DocKind::Values,
                Target::History,
            ),
            (
                "resources/keys/values/keys/values",
                "",
                "keys",
                DocKind::Values,
                Target::Key("values".into()),
            ),
            // `resources` as a level value is no end of the levels.
            (
                "role/resources/nodes/n1/resources/a/b/overrides",
                "role=resources,nodes=n1",
                "a/b",
                DocKind::Overrides,
                Target::Document,
            ),
            (
                "resources/a//values",
                "",
                "a/",
                DocKind::Values,
                Target::Document,
            ),
        ];
        for (url, level, resource, kind, target) in cases {
            let (at, t) = parse_document_url(1, url).unwrap();
            assert_eq!(at.path.to_string(), *level, "{url}");
            assert_eq!(at.resource, *resource, "{url}");
            assert_eq!(at.kind, *kind, "{url}");
            assert_eq!(&t, target, "{url}");
        }
        let not_found = [
            "resources/values",
            "resources//values",
            "resources",
            "resources/",
            "nodes/n1/astute/values",
            "resources/a/other",
            "/resources/a/values",
        ];
        for bad in not_found {
            let err = parse_document_url(1, bad).unwrap_err();
            assert!(matches!(err, ApiError::NotFound(_)), "{bad}: {err:?}");
        }
        // Bad levels, named as the URL form writes them.
        let bad_levels = [
            (
                "nodes//resources/a/values",
                "level path \"/nodes/\" must alternate",
            ),
            (
                "a/b//c/resources/a/values",
                "level path \"/a/b//c\" has an empty segment",
            ),
            (
                "/a/resources/a/values",
                "level path \"//a\" has an empty segment",
            ),
            (
                "//resources/a/values",
                "level path \"//\" has an empty segment",
            ),
            (
                "no,des/1/resources/a/values",
                "level name \"no,des\" is invalid",
            ),
        ];
        for (bad, want) in bad_levels {
            match parse_document_url(1, bad) {
                Err(ApiError::BadRequest(said)) => assert!(said.contains(want), "{bad}: {said}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
