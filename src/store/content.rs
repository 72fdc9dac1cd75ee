//! Resource definitions' content in the store: reading and
//! writing it, and the schema check every document write makes inside its
//! transaction (the rule itself is [`crate::configdb::schema`]).

use super::sql::{Sql, params};
use super::{Result, StoreError};
use crate::configdb::{DocAddress, NotFound, schema};
use crate::hiera::Hash;
use serde_json::{Map, Value as Json};
use std::sync::Arc;

/// A definition's stored content (NULL: none).
pub(super) fn decode_content(resource: &str, text: Option<&str>) -> Result<Map<String, Json>> {
    match text.map(serde_json::from_str::<Map<String, Json>>) {
        None => Ok(Map::new()),
        Some(Ok(map)) => Ok(map),
        Some(Err(e)) => Err(StoreError::Corrupt {
            what: format!("content of resource definition \"{resource}\""),
            reason: e.to_string(),
        }),
    }
}

/// The compiled schema of `resource` in environment `env`, if its
/// definition has one ([`schema::compiled`]: once per content).
fn resource_schema(
    tx: &dyn Sql,
    env: i64,
    resource: &str,
) -> Result<Option<Arc<jsonschema::Validator>>> {
    let text: Option<String> = match tx.query_opt(
        "SELECT d.content FROM environment_components ec
         JOIN resource_definitions d ON d.component_id = ec.component_id
         WHERE ec.environment_id = ?1 AND d.name = ?2 AND d.content IS NOT NULL",
        params![env, resource],
    )? {
        Some(mut row) => row.opt_text(0)?,
        None => None,
    };
    let Some(text) = text else {
        return Ok(None);
    };
    schema::compiled(resource, &text, || {
        Ok(Json::Object(decode_content(resource, Some(&text))?))
    })
}

/// Refuses a document its resource's schema refuses ([`schema::check`]).
pub(super) fn check_schema(tx: &dyn Sql, at: &DocAddress, doc: &Hash) -> Result<()> {
    if let Some(validator) = resource_schema(tx, at.env, &at.resource)? {
        schema::check(at, &validator, doc)?;
    }
    Ok(())
}

/// Sets the content of `resource` in component `component` (its id and
/// name); an empty content is stored as none.
pub(super) fn set_content(
    tx: &dyn Sql,
    (component, name): (i64, &str),
    resource: &str,
    content: &Map<String, Json>,
) -> Result<()> {
    schema::compile(resource, &Json::Object(content.clone()))?;
    let text = (!content.is_empty()).then(|| Json::Object(content.clone()).to_string());
    let changed = tx.execute(
        "UPDATE resource_definitions SET content = ?3 WHERE component_id = ?1 AND name = ?2",
        params![component, resource, text.as_deref()],
    )?;
    if changed == 0 {
        return Err(NotFound::ComponentResource {
            component: name.to_owned(),
            resource: resource.to_owned(),
        }
        .into());
    }
    Ok(())
}
