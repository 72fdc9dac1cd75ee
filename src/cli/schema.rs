//! `hierad config schema`: shows, sets or removes the JSON Schema of a
//! resource definition. Once set, every write of the resource
//! (set, override, a key, an import, a restore) must match it, or is
//! refused naming the offending value's path and nothing is stored.

use super::args::{Access, Conn};
use crate::configdb::schema::SCHEMA_KEY;
use crate::hiera::yaml;
use crate::wire;
use anyhow::{Context, bail};
use std::io::Read;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub(crate) struct SchemaArgs {
    /// The component that defines the resource, e.g. fuel
    #[arg(long, value_name = "NAME")]
    pub(crate) component: String,
    /// The resource, e.g. override/configuration/cluster
    #[arg(long, value_name = "NAME")]
    pub(crate) resource: String,
    /// Set the schema from this JSON or YAML file (- reads stdin); without
    /// --set or --remove, the current schema is printed (null: none)
    #[arg(long, value_name = "FILE", conflicts_with = "remove")]
    pub(crate) set: Option<PathBuf>,
    /// Remove the schema: writes are no longer checked
    #[arg(long)]
    pub(crate) remove: bool,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

/// Runs `hierad config schema`; returns what to print.
///
/// # Errors
///
/// An unreadable or invalid schema file, an unknown component or
/// resource, a schema the server refuses, and transport errors.
pub(crate) fn run(args: &SchemaArgs) -> anyhow::Result<String> {
    let access = if args.set.is_some() || args.remove {
        Access::Write
    } else {
        Access::Read
    };
    let db = args.conn.open(access)?;
    let mut content = db.resource_content(&args.component, &args.resource)?;
    if let Some(file) = &args.set {
        content.insert(SCHEMA_KEY.to_owned(), read_schema(file)?);
    } else if args.remove {
        content.remove(SCHEMA_KEY);
    } else {
        let shown = content.get(SCHEMA_KEY).cloned().unwrap_or_default();
        return Ok(serde_json::to_string_pretty(&shown)? + "\n");
    }
    db.set_resource_content(&args.component, &args.resource, &content)?;
    Ok(String::new())
}

fn read_schema(file: &PathBuf) -> anyhow::Result<serde_json::Value> {
    let text = if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the schema from stdin")?;
        text
    } else {
        std::fs::read_to_string(file)
            .with_context(|| format!("cannot read the schema {}", file.display()))?
    };
    let value = yaml::load(&text)
        .map_err(|e| anyhow::anyhow!("the schema {} is not JSON or YAML: {e}", file.display()))?;
    let json = wire::to_json(&value);
    if !matches!(
        json,
        serde_json::Value::Object(_) | serde_json::Value::Bool(_)
    ) {
        bail!(
            "the schema {} must be a JSON Schema (an object), not {}",
            file.display(),
            crate::configdb::schema::describe_json(&json)
        );
    }
    Ok(json)
}
