//! Resource definitions' content over HTTP (docs/api.md): metadata about a
//! resource, whose `"schema"` (a JSON Schema) checks every later write of
//! the resource (configdb/schema.rs; the store applies it).
//!
//! `/components/{component}/resource_definitions/{*resource}`: GET the
//! definition with its content; PUT a JSON object, the new content (`{}`
//! removes it), answered with the definition. A content whose schema is
//! not a valid JSON Schema is a 400 and changes nothing.

use crate::api;
use crate::configdb::{Component, NotFound};
use crate::server::http::body::LimitedBytes;
use crate::server::http::error::ApiError;
use crate::server::routes::config::component_ref;
use crate::server::state::AppState;
use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::get;
use serde_json::{Map, Value};

/// The content routes, under `/api/v1/config` with the others.
pub(crate) fn routes() -> Router<AppState> {
    Router::new().route(
        crate::api::paths::DEFINITION,
        get(get_definition).put(put_content),
    )
}

/// The definition of `resource` in `component`, as the API shows it.
fn definition(component: &Component, resource: &str) -> Result<api::ResourceDefinition, ApiError> {
    api::Component::from(component)
        .resource_definitions
        .into_iter()
        .find(|d| d.name == resource)
        .ok_or_else(|| {
            ApiError::from(crate::configdb::ConfigError::from(
                NotFound::ComponentResource {
                    component: component.name.clone(),
                    resource: resource.to_owned(),
                },
            ))
        })
}

async fn get_definition(
    State(state): State<AppState>,
    Path((component, resource)): Path<(String, String)>,
) -> Result<Json<api::ResourceDefinition>, ApiError> {
    let which = component_ref(&component);
    let found = state
        .read(move |store| Ok(store.component(&which)?))
        .await?;
    Ok(Json(definition(&found, &resource)?))
}

async fn put_content(
    State(state): State<AppState>,
    Path((component, resource)): Path<(String, String)>,
    LimitedBytes(bytes, _turn): LimitedBytes,
) -> Result<Json<api::ResourceDefinition>, ApiError> {
    let content: Map<String, Value> = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            return Err(ApiError::BadRequest(format!(
                "the content of a resource definition must be a JSON object, not {}",
                crate::configdb::schema::describe_json(&other)
            )));
        }
        Err(e) => return Err(ApiError::BadRequest(format!("invalid content: {e}"))),
    };
    let which = component_ref(&component);
    let name = resource.clone();
    let updated = state
        .write(move |store| Ok(store.set_resource_content(&which, &name, &content)?))
        .await?;
    Ok(Json(definition(&updated, &resource)?))
}
