//! Resource schemas: a resource definition's `content` may hold
//! a JSON Schema under `"schema"`, and then every document written to that
//! resource, at any level and of either kind, must match it. The rule is
//! here, free of I/O (no remote `$ref` is ever fetched); the store applies
//! it inside each write's transaction, so a refused write stores nothing.
//!
//! Each stored document is checked alone: documents at different levels
//! are parts of one effective value, so a schema for them should not
//! require keys (the override_resources schema does not).

use super::error::Invalid;
use super::model::DocAddress;
use crate::hiera::{Hash, Value};
use serde_json::Value as Json;
use std::sync::{Arc, LazyLock};

/// The key of a definition's content that holds its schema.
pub(crate) const SCHEMA_KEY: &str = "schema";

/// At most this many violations are named in one refusal.
const MAX_PROBLEMS: usize = 10;

/// The schema of `content` compiled, or `None` when it has none.
///
/// # Errors
///
/// [`Invalid::BadContent`] when `content` is not an object or its schema
/// is not a valid JSON Schema (the message says why).
pub(crate) fn compile(
    resource: &str,
    content: &Json,
) -> Result<Option<jsonschema::Validator>, Invalid> {
    let bad = |reason: String| Invalid::BadContent {
        resource: resource.to_owned(),
        reason,
    };
    let Json::Object(map) = content else {
        return Err(bad(format!(
            "the content must be an object, not {}",
            describe_json(content)
        )));
    };
    let Some(schema) = map.get(SCHEMA_KEY) else {
        return Ok(None);
    };
    if !matches!(schema, Json::Object(_) | Json::Bool(_)) {
        return Err(bad(format!(
            "its \"schema\" must be a JSON Schema (an object or a boolean), not {}",
            describe_json(schema)
        )));
    }
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map(Some)
        .map_err(|e| bad(format!("its \"schema\" is not a valid JSON Schema: {e}")))
}

/// Validators compiled from a definition's stored content, by that text:
/// compiling costs about as much as the write it checks, and contents
/// change rarely. Bounded; a changed content is a new key, so nothing
/// stale is ever used.
static COMPILED: LazyLock<moka::sync::Cache<String, Arc<jsonschema::Validator>>> =
    LazyLock::new(|| moka::sync::Cache::new(64));

/// The validator of a stored content `text` (as [`compile`] of its JSON),
/// compiled once and then shared by every write until the text changes.
///
/// # Errors
///
/// `decode`'s error for a text it cannot read; those of [`compile`].
pub(crate) fn compiled<E: From<Invalid>>(
    resource: &str,
    text: &str,
    decode: impl FnOnce() -> Result<Json, E>,
) -> Result<Option<Arc<jsonschema::Validator>>, E> {
    if let Some(validator) = COMPILED.get(text) {
        return Ok(Some(validator));
    }
    let Some(validator) = compile(resource, &decode()?)? else {
        return Ok(None);
    };
    let validator = Arc::new(validator);
    COMPILED.insert(text.to_owned(), Arc::clone(&validator));
    Ok(Some(validator))
}

/// Checks one document against its resource's schema.
///
/// # Errors
///
/// [`Invalid::Schema`] naming each offending value's path (a JSON pointer,
/// `/configuration_options/create`), what the schema expected there and
/// the rule that says so (its schema path). The value itself is never
/// quoted: a refused document may hold passwords, and the refusal reaches
/// the writer's terminal and the logs.
pub(crate) fn check(
    at: &DocAddress,
    schema: &jsonschema::Validator,
    doc: &Hash,
) -> Result<(), Invalid> {
    let json = crate::wire::to_json(&Value::Hash(doc.clone()));
    let mut problems: Vec<String> = Vec::new();
    let mut more = 0usize;
    for error in schema.iter_errors(&json) {
        if problems.len() == MAX_PROBLEMS {
            more += 1;
            continue;
        }
        let path = error.instance_path().as_str();
        let path = if path.is_empty() { "/" } else { path };
        problems.push(format!(
            "at {path}: {} (rule {})",
            error.masked_with("the value"),
            error.schema_path().as_str()
        ));
    }
    if problems.is_empty() {
        return Ok(());
    }
    if more > 0 {
        problems.push(format!("and {more} more"));
    }
    Err(Invalid::Schema {
        doc: at.clone(),
        problems,
    })
}

/// How a JSON value is named in messages.
pub(crate) fn describe_json(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configdb::{DocKind, LevelPath};
    use serde_json::json;

    fn doc(value: Json) -> Hash {
        match crate::wire::from_wire(value).unwrap() {
            Value::Hash(h) => h,
            other => panic!("{other:?}"),
        }
    }

    fn at() -> DocAddress {
        DocAddress::new(1, LevelPath::root(), "r", DocKind::Values)
    }

    #[test]
    fn a_stored_content_is_compiled_once() {
        let text = r#"{"schema": {"type": "object", "maxProperties": 1}}"#;
        let calls = std::cell::Cell::new(0);
        let get = |text: &str| {
            compiled::<Invalid>("r", text, || {
                calls.set(calls.get() + 1);
                Ok(serde_json::from_str(text).unwrap())
            })
            .unwrap()
        };
        let first = get(text).unwrap();
        let again = get(text).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(calls.get(), 1);
        // Another content is another validator, and it is the one used.
        let changed = get(r#"{"schema": {"type": "object", "maxProperties": 0}}"#).unwrap();
        assert_eq!(calls.get(), 2);
        let one = doc(serde_json::json!({"a": 1}));
        assert!(check(&at(), &first, &one).is_ok());
        assert!(check(&at(), &changed, &one).is_err());
        assert!(get(r#"{"owner": "ops"}"#).is_none());
    }

    #[test]
    fn contents_without_a_schema_or_with_a_bad_one() {
        assert!(compile("r", &json!({})).unwrap().is_none());
        assert!(compile("r", &json!({"note": "x"})).unwrap().is_none());
        for (content, reason) in [
            (json!([]), "the content must be an object, not an array"),
            (
                json!({"schema": 3}),
                "must be a JSON Schema (an object or a boolean), not a number",
            ),
            (
                json!({"schema": {"type": "hash"}}),
                "is not a valid JSON Schema",
            ),
        ] {
            let e = compile("r", &content).unwrap_err().to_string();
            assert!(e.contains(reason) && e.contains("\"r\""), "{content}: {e}");
        }
    }

    #[test]
    fn a_violation_names_the_path_and_what_was_expected() {
        let schema = compile(
            "r",
            &json!({"schema": {"properties": {"a": {"properties": {"b": {"type": "boolean"}}}}}}),
        )
        .unwrap()
        .unwrap();
        assert!(check(&at(), &schema, &doc(json!({"a": {"b": true}}))).is_ok());
        let e = check(&at(), &schema, &doc(json!({"a": {"b": "maybe"}}))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the values of resource \"r\" at the root of environment 1 do not match the resource's schema: at /a/b: the value is not of type \"boolean\" (rule /properties/a/properties/b/type); nothing was stored"
        );
    }

    #[test]
    fn a_violation_never_quotes_the_refused_value() {
        let secret = "hunter2-do-not-print";
        for schema in [
            json!({"not": {}}),
            json!({"properties": {"pw": {"type": "integer"}}}),
            json!({"properties": {"pw": {"maxLength": 3}}}),
            json!({"properties": {"pw": {"enum": ["a"]}}}),
            json!({"properties": {"pw": {"pattern": "^x"}}}),
            json!({"properties": {"pw": {"format": "ipv4"}}}),
            json!({"anyOf": [{"required": ["x"]}, {"maxProperties": 0}]}),
            json!({"properties": {"pw": false}}),
        ] {
            let validator = compile("r", &json!({ "schema": schema })).unwrap().unwrap();
            let e = check(&at(), &validator, &doc(json!({"pw": secret, "n": 1})))
                .unwrap_err()
                .to_string();
            assert!(!e.contains(secret), "{schema}: {e}");
            assert!(e.contains("(rule /"), "{schema}: {e}");
        }
    }
}
