//! Node scopes: the facts and scope variables (a JSON object) stored for
//! a registered node of an environment, so a lookup that names the node
//! gets them. Versioned like documents (every write a new version with
//! its author and time, a deletion a marker), in a table of their own:
//! a scope is plain JSON, not Hiera data, belongs to no resource or
//! level slot, and is never folded into effective data.

use super::{now, sql_version, version_from};
use crate::configdb::{Invalid, NotFound, Version};
use crate::store::Result;
use crate::store::changes::Log;
use crate::store::sql::{Sql, params};
use serde_json::{Map, Value as Json};

/// A node's scope: a JSON object.
pub(crate) type Scope = Map<String, Json>;

/// The level whose register lists `node` (the first by name); NotFound
/// unless environment `env` is live and one of its level registers lists
/// `node`.
fn check_node(tx: &dyn Sql, env: i64, node: &str) -> Result<String> {
    super::load_environment(tx, env)?;
    let listed = tx.query_opt(
        "SELECT level FROM register_values WHERE environment_id = ?1 AND value = ?2
         ORDER BY level LIMIT 1",
        params![env, node],
    )?;
    match listed {
        Some(mut row) => row.text(0),
        None => Err(NotFound::Node {
            env,
            node: node.to_owned(),
        }
        .into()),
    }
}

/// The newest version of a node's scope and its stored text.
fn head(tx: &dyn Sql, env: i64, node: &str) -> Result<Option<(Version, String)>> {
    tx.query_opt(
        "SELECT version, created_at, deleted, author, content FROM node_scopes
         WHERE environment_id = ?1 AND node = ?2 ORDER BY version DESC LIMIT 1",
        params![env, node],
    )?
    .map(row)
    .transpose()
}

/// A version and its text from (version, created_at, deleted, author,
/// content); its size is the text's bytes.
fn row(mut r: crate::store::sql::Row) -> Result<(Version, String)> {
    let (author, text) = (r.opt_text(3)?, r.text(4)?);
    let size = i64::try_from(text.len()).unwrap_or(i64::MAX);
    let version = version_from(r.int(0)?, r.int(1)?, size, r.flag(2)?, author);
    Ok((version, text))
}

fn append(
    tx: &dyn Sql,
    (env, node): (i64, &str),
    text: Option<&str>,
    author: Option<&str>,
) -> Result<Version> {
    let number = head(tx, env, node)?.map_or(0, |(v, _)| v.number) + 1;
    let text = text.unwrap_or("");
    let version = version_from(
        sql_version(number),
        now(),
        text.len() as i64,
        text.is_empty(),
        author.map(str::to_owned),
    );
    tx.execute(
        "INSERT INTO node_scopes (environment_id, node, version, created_at, author, deleted, content)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            env,
            node,
            sql_version(number),
            version.created_at,
            author,
            i64::from(version.deleted),
            text
        ],
    )?;
    Ok(version)
}

/// Writes a new version of `node`'s scope. NotFound: the environment or
/// the node.
pub(super) fn put(
    tx: &dyn Sql,
    log: &mut Log,
    (env, node): (i64, &str),
    scope: &Scope,
    author: Option<&str>,
) -> Result<Version> {
    let level = check_node(tx, env, node)?;
    let text = serde_json::to_string(scope).map_err(|e| crate::store::StoreError::Corrupt {
        what: format!("the scope of node {node}"),
        reason: e.to_string(),
    })?;
    let version = append(tx, (env, node), Some(&text), author)?;
    log.scope(env, &level, node, version.number);
    Ok(version)
}

/// Writes a deletion marker. NotFound: the environment, the node, or no
/// live scope.
pub(super) fn delete(
    tx: &dyn Sql,
    log: &mut Log,
    (env, node): (i64, &str),
    author: Option<&str>,
) -> Result<Version> {
    let level = check_node(tx, env, node)?;
    match head(tx, env, node)? {
        Some((v, _)) if !v.deleted => {
            let version = append(tx, (env, node), None, author)?;
            log.scope(env, &level, node, version.number);
            Ok(version)
        }
        _ => Err(NotFound::Scope {
            env,
            node: node.to_owned(),
        }
        .into()),
    }
}

/// A version of `node`'s scope (`None`: the latest). NotFound: the
/// environment, the node, no live scope (latest), or no such version; a
/// deletion marker asked by number reads as an empty object with
/// `deleted` set.
pub(super) fn get(
    tx: &dyn Sql,
    (env, node): (i64, &str),
    version: Option<u64>,
) -> Result<(Version, Scope)> {
    check_node(tx, env, node)?;
    let missing = || -> crate::store::StoreError {
        NotFound::Scope {
            env,
            node: node.to_owned(),
        }
        .into()
    };
    let row = match version {
        None => head(tx, env, node)?.filter(|(v, _)| !v.deleted),
        Some(n) => tx
            .query_opt(
                "SELECT version, created_at, deleted, author, content
                 FROM node_scopes WHERE environment_id = ?1 AND node = ?2 AND version = ?3",
                params![env, node, sql_version(n)],
            )?
            .map(row)
            .transpose()?,
    };
    let (v, text) = row.ok_or_else(missing)?;
    if text.is_empty() {
        return Ok((v, Scope::new()));
    }
    match serde_json::from_str::<Json>(&text) {
        Ok(Json::Object(scope)) => Ok((v, scope)),
        _ => Err(crate::store::StoreError::Corrupt {
            what: format!("version {} of the scope of node {node}", v.number),
            reason: "it is not a JSON object".to_owned(),
        }),
    }
}

/// Every version of `node`'s scope, oldest first. NotFound: the
/// environment or the node.
pub(super) fn history(tx: &dyn Sql, (env, node): (i64, &str)) -> Result<Vec<Version>> {
    check_node(tx, env, node)?;
    tx.query(
        "SELECT version, created_at, deleted, author, content FROM node_scopes
         WHERE environment_id = ?1 AND node = ?2 ORDER BY version",
        params![env, node],
    )?
    .into_iter()
    .map(|r| row(r).map(|(v, _)| v))
    .collect()
}

/// A scope from a request body: a JSON object. Invalid otherwise.
pub(crate) fn scope_from(value: Json) -> std::result::Result<Scope, Invalid> {
    match value {
        Json::Object(scope) => Ok(scope),
        Json::Null => Err(Invalid::ScopeNotAnObject("null")),
        Json::Bool(_) => Err(Invalid::ScopeNotAnObject("a boolean")),
        Json::Number(_) => Err(Invalid::ScopeNotAnObject("a number")),
        Json::String(_) => Err(Invalid::ScopeNotAnObject("a string")),
        Json::Array(_) => Err(Invalid::ScopeNotAnObject("an array")),
    }
}
