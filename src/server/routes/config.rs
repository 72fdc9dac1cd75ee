//! The ConfigDB REST API under `/api/v1/config` (docs/spec/configdb-api.md and the routes
//! tuning-box shipped; see docs/api.md): components, environments, and the
//! versioned `values`/`overrides` documents at any level path.

use crate::api;
use crate::api::paths;
use crate::auth::{self, Principal};
use crate::configdb::unparsed::Content;
use crate::configdb::{ComponentRef, DocKind, LevelPath, NewComponent, NewEnvironment, Retention};
use crate::ops;
use crate::server::http::body::{LimitedBytes, document};
use crate::server::http::error::ApiError;
use crate::server::routes::env::{self, Env};
use crate::server::routes::params::{Params, flag};
use crate::server::routes::registers;
use crate::server::state::AppState;
use crate::store::{ImportBatch, ImportDoc};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

/// The ConfigDB routes, under `/api/v1/config` ([`paths`]).
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route(
            paths::COMPONENTS,
            get(list_components).post(create_component),
        )
        .route(
            paths::COMPONENT,
            get(get_component).delete(delete_component),
        )
        .route(
            paths::ENVIRONMENTS,
            get(list_environments).post(create_environment),
        )
        .route(
            paths::ENVIRONMENT,
            get(get_environment).delete(delete_environment),
        )
        .route(paths::HIERARCHY_LEVELS, get(hierarchy_levels))
        .route(paths::RESTORE, post(restore_environment))
        .route(paths::RETENTION, get(get_retention).put(put_retention))
        .route(paths::IMPORT, post(import))
        .merge(registers::routes())
        .merge(super::scopes::routes())
        .merge(crate::server::routes::content::routes())
        .merge(super::impact::routes())
        .merge(super::documents::routes())
}

fn parse<T: for<'de> Deserialize<'de>>(bytes: &[u8], what: &str) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| ApiError::BadRequest(format!("invalid {what}: {e}")))
}

pub(super) fn component_ref(text: &str) -> ComponentRef {
    match text.parse() {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

async fn list_components(State(state): State<AppState>) -> Json<Vec<api::Component>> {
    let snapshot = state.snapshot();
    Json(
        snapshot
            .components()
            .iter()
            .map(api::Component::from)
            .collect(),
    )
}

async fn create_component(
    State(state): State<AppState>,
    LimitedBytes(bytes, _turn): LimitedBytes,
) -> Result<Response, ApiError> {
    let new = parse::<api::NewComponent>(&bytes, "component")?;
    // Contents are checked before anything is created, so a bad schema
    // leaves no component behind.
    let contents: Vec<(String, serde_json::Map<String, serde_json::Value>)> = new
        .resource_definitions
        .iter()
        .filter(|d| !d.content.is_empty())
        .map(|d| (d.name.clone(), d.content.clone()))
        .collect();
    for (name, content) in &contents {
        crate::configdb::schema::compile(name, &serde_json::Value::Object(content.clone()))
            .map_err(|e| ApiError::from(crate::configdb::ConfigError::from(e)))?;
    }
    let new: NewComponent = new.into();
    let created = state
        .write(move |store| {
            let mut created = store.create_component(&new)?;
            let which = ComponentRef::Id(created.id);
            for (name, content) in &contents {
                created = store.set_resource_content(&which, name, content)?;
            }
            Ok(created)
        })
        .await?;
    Ok((StatusCode::CREATED, Json(api::Component::from(&created))).into_response())
}

async fn get_component(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<api::Component>, ApiError> {
    let which = component_ref(&id);
    let found = state
        .read(move |store| Ok(store.component(&which)?))
        .await?;
    Ok(Json(api::Component::from(&found)))
}

async fn delete_component(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let which = component_ref(&id);
    state
        .write(move |store| Ok(store.delete_component(&which)?))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `?deleted=true` lists the deleted (restorable) environments instead,
/// each with `deleted_at`. A principal limited to some environments is
/// shown only those.
async fn list_environments(
    State(state): State<AppState>,
    who: Principal,
    Params(query): Params,
) -> Result<Response, ApiError> {
    if flag(&query, "deleted")? {
        let deleted = state
            .read(|store| Ok(store.deleted_environments()?))
            .await?;
        let listed: Vec<api::DeletedEnvironment> = deleted
            .iter()
            .filter(|(env, _)| who.may_use(env.id))
            .map(|(env, at)| api::DeletedEnvironment {
                environment: api::Environment::from(env),
                deleted_at: *at,
            })
            .collect();
        return Ok(Json(listed).into_response());
    }
    let snapshot = state.snapshot();
    let listed: Vec<api::Environment> = snapshot
        .environments()
        .filter(|env| who.may_use(env.id))
        .map(api::Environment::from)
        .collect();
    Ok(Json(listed).into_response())
}

async fn get_retention(
    State(state): State<AppState>,
    Env(env): Env,
) -> Result<Json<api::RetentionAnswer>, ApiError> {
    let own = state.read(move |store| Ok(store.retention(env)?)).await?;
    Ok(Json(api::RetentionAnswer::new(
        own,
        state.settings().retention,
    )))
}

async fn put_retention(
    State(state): State<AppState>,
    Env(env): Env,
    LimitedBytes(bytes, _turn): LimitedBytes,
) -> Result<Json<api::RetentionAnswer>, ApiError> {
    let retention: Retention = parse::<api::Retention>(&bytes, "retention")?.into();
    // Retention is not in the snapshot: nothing to publish, so this runs
    // like a read (a blocking task that a disconnect does not cancel).
    let own = state
        .read(move |store| Ok(store.set_retention(env, &retention)?))
        .await?;
    Ok(Json(api::RetentionAnswer::new(
        own,
        state.settings().retention,
    )))
}

async fn create_environment(
    State(state): State<AppState>,
    LimitedBytes(bytes, _turn): LimitedBytes,
) -> Result<Response, ApiError> {
    let body = parse::<api::NewEnvironment>(&bytes, "environment")?;
    let retention = body.retention.map(Retention::from);
    let new: NewEnvironment = body.into();
    let created = state
        .write(move |store| {
            let created = store.create_environment(&new)?;
            if let Some(retention) = &retention {
                store.set_retention(created.id, retention)?;
            }
            Ok(created)
        })
        .await?;
    Ok((StatusCode::CREATED, Json(api::Environment::from(&created))).into_response())
}

async fn get_environment(
    State(state): State<AppState>,
    Env(env): Env,
) -> Result<Json<api::Environment>, ApiError> {
    let snapshot = state.snapshot();
    let found = snapshot.environment(env).ok_or_else(|| env::missing(env))?;
    Ok(Json(api::Environment::from(found)))
}

/// A restorable delete; `?purge=true` removes the environment (live or
/// deleted) with its documents and history for good.
async fn delete_environment(
    State(state): State<AppState>,
    Env(env): Env,
    Params(query): Params,
) -> Result<StatusCode, ApiError> {
    let purge = flag(&query, "purge")?;
    state
        .write(move |store| {
            if purge {
                Ok(store.purge_environment(env)?)
            } else {
                Ok(store.delete_environment(env)?)
            }
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn restore_environment(
    State(state): State<AppState>,
    Env(env): Env,
) -> Result<Json<api::Environment>, ApiError> {
    let restored = state
        .write(move |store| Ok(store.restore_environment(env)?))
        .await?;
    Ok(Json(api::Environment::from(&restored)))
}

async fn hierarchy_levels(
    State(state): State<AppState>,
    Env(env): Env,
) -> Result<Json<Vec<api::HierarchyLevel>>, ApiError> {
    let snapshot = state.snapshot();
    let levels = snapshot.levels(env).ok_or_else(|| env::missing(env))?;
    let listed = levels
        .iter()
        .enumerate()
        .map(|(i, name)| api::HierarchyLevel {
            name: name.clone(),
            parent: i.checked_sub(1).map(|p| levels[p].clone()),
        })
        .collect();
    Ok(Json(listed))
}

async fn import(
    State(state): State<AppState>,
    who: Principal,
    Env(env): Env,
    Params(query): Params,
    LimitedBytes(bytes, _turn): LimitedBytes,
) -> Result<Response, ApiError> {
    let body: api::ImportRequest = {
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        // The documents' decoder bounds their depth (wire::MAX_JSON_DEPTH).
        de.disable_recursion_limit();
        api::ImportRequest::deserialize(&mut de)
            .and_then(|body| de.end().map(|()| body))
            .map_err(|e| ApiError::BadRequest(format!("invalid import: {e}")))?
    };
    let path = match &body.level {
        Some(level) => {
            LevelPath::parse_cli(level).map_err(|e| ApiError::BadRequest(e.to_string()))?
        }
        None => LevelPath::root(),
    };
    let kind = match &body.kind {
        Some(k) => k
            .parse::<DocKind>()
            .map_err(|e| ApiError::BadRequest(e.to_string()))?,
        None => DocKind::Values,
    };
    let mut documents = Vec::with_capacity(body.documents.0.len());
    for (resource, content) in body.documents.0 {
        let content = document(content).map_err(|e| match e {
            ApiError::BadRequest(m) => ApiError::BadRequest(format!("resource {resource}: {m}")),
            other => other,
        })?;
        documents.push(ImportDoc {
            path: path.clone(),
            resource,
            kind,
            content: Content::Data(content),
        });
    }
    for (resource, file) in body.unparsed {
        if documents.iter().any(|d| d.resource == resource) {
            return Err(ApiError::BadRequest(format!(
                "resource {resource} is both in documents and in unparsed: send it once"
            )));
        }
        let file = file.into_file().map_err(|m| {
            ApiError::BadRequest(format!("unparsed file of resource {resource}: {m}"))
        })?;
        // The store judges it: a file that parses is stored as its data.
        documents.push(ImportDoc {
            path: path.clone(),
            resource,
            kind,
            content: Content::File(file),
        });
    }
    let snapshot = state.snapshot();
    let first = snapshot
        .environment(env)
        .ok_or_else(|| env::missing(env))
        .map(ops::writes::defines_in)?;
    let mut undefined: Vec<String> = Vec::new();
    for doc in &documents {
        let defined = snapshot
            .resource_names(env)
            .is_some_and(|mut names| names.any(|n| n == doc.resource));
        if !defined && !undefined.contains(&doc.resource) {
            undefined.push(doc.resource.clone());
        }
    }
    auth::may_define(&who, &undefined).map_err(|denied| ApiError::Forbidden(denied.to_string()))?;
    // Whom the snapshot shows nothing to define gets no definitions
    // either should the database differ: the store then refuses the
    // resource the environment lacks.
    let component = first.filter(|_| who.is_unlimited());
    let batch = ImportBatch {
        env,
        documents,
        replace: if body.replace {
            vec![(path, kind)]
        } else {
            Vec::new()
        },
        define_missing_in: component,
        author: Some(who.name.to_string()),
        register: body.register,
    };
    if super::impact::asked(&query)? {
        let writes = ops::preview::import_writes(&snapshot, &batch)?;
        let registered = !batch.register;
        return super::impact::dry_run(&state, &who, env, writes, &query, registered).await;
    }
    let summary = state
        .write(move |store| {
            ops::writes::import(store, &batch)
                .map_err(|e| ops::writes::store_error_seen_by(e, &who).into())
        })
        .await?;
    Ok(Json(summary).into_response())
}
