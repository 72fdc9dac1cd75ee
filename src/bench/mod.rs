//! `hierad bench`: load testing a hierad server with realistic Fuel data.
//!
//! - [`generate`]: a synthetic environment of N nodes from real Fuel data;
//! - [`load`]: importing it (through the API, or into a database), timed;
//! - [`plan`]: the keys, nodes and hierarchy requests are built from;
//! - [`client`]: the load loop over N keep-alive connections;
//! - [`connect`]: those connections, over TCP or TLS, with credentials;
//! - [`stats`]: HDR percentiles, the timeline, the report;
//! - [`chart`]: the SVG latency chart;
//! - [`summary`]: the table of bench/run.sh from its saved reports;
//! - [`baseline`]: the bare hyper server hierad is compared with;
//! - [`visible`]: write-to-visible latency across two servers;
//! - [`waiters`]: change-feed long polls woken by a write.

pub(crate) mod baseline;
pub(crate) mod chart;
pub(crate) mod client;
pub(crate) mod connect;
pub(crate) mod generate;
pub(crate) mod load;
pub(crate) mod plan;
pub(crate) mod rng;
pub(crate) mod stats;
pub(crate) mod summary;
pub(crate) mod visible;
pub(crate) mod waiters;

use crate::api;
use crate::api::paths;
use crate::hiera::{Hash, Value};
use client::Target;
use plan::Plan;

/// What can go wrong in a bench run; the message names what was being
/// done.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BenchError {
    /// The server cannot be reached, or a file cannot be read or written.
    #[error("{context}: {error}")]
    Io {
        context: String,
        error: std::io::Error,
    },
    /// The server answered with an error status.
    #[error("{what}: the server answered {status} {body}")]
    Refused {
        what: String,
        status: u16,
        body: String,
    },
    /// The data or the arguments do not make a bench.
    #[error("{0}")]
    Invalid(String),
    /// The local database refused the import.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A data tree cannot be read.
    #[error(transparent)]
    Tree(#[from] crate::tree::TreeError),
    /// The ConfigDB (a server's or a database's) refused a load.
    #[error(transparent)]
    Ops(#[from] crate::ops::OpsError),
    /// A connection's task panicked or was cancelled.
    #[error("a bench task failed: {0}")]
    Task(tokio::task::JoinError),
}

// By hand, not `#[from]`: that would also make the JoinError the source,
// and `hierad: …` (the chain, `{:#}`) would say it twice.
impl From<tokio::task::JoinError> for BenchError {
    fn from(error: tokio::task::JoinError) -> Self {
        BenchError::Task(error)
    }
}

impl BenchError {
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
        let context = context.into();
        move |error| BenchError::Io { context, error }
    }
}

/// A GET's body, `None` on 404.
async fn get_body(target: &Target, path: &str) -> Result<Option<String>, BenchError> {
    let (status, body) = client::get(target, path).await?;
    if status.as_u16() == 404 {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(connect::refusal(&format!("GET {path}"), status, &body));
    }
    String::from_utf8(body.to_vec())
        .map(Some)
        .map_err(|_| BenchError::Invalid(format!("GET {path}: a response that is not UTF-8")))
}

/// Where Hiera's backend reads datasource `name` of environment `env`.
fn datasource_path(env: i64, name: &str) -> String {
    paths::fill(paths::DATASOURCE, &[&env.to_string(), name])
}

/// A document (wire JSON) from a GET, `None` on 404.
async fn get_value(target: &Target, path: &str) -> Result<Option<Value>, BenchError> {
    let Some(text) = get_body(target, path).await? else {
        return Ok(None);
    };
    crate::wire::from_str(&text)
        .map(Some)
        .map_err(|e| BenchError::Invalid(format!("GET {path}: {e}")))
}

/// A plan read from the server's own data: the hierarchy of environment
/// `env`'s `hiera` resource, its root datasources' keys, and the nodes its
/// `astute` lists (Fuel's `nodes`), looked up at level `nodes=<fqdn>` when
/// the environment has that level.
///
/// # Errors
///
/// The server cannot be reached, or the environment has no hierarchy.
pub(crate) async fn discover(target: &Target, env: i64) -> Result<Plan, BenchError> {
    let path = paths::fill(paths::ENVIRONMENT, &[&env.to_string()]);
    let Some(text) = get_body(target, &path).await? else {
        return Err(BenchError::Invalid(format!(
            "environment {env} does not exist on {}",
            target.url()
        )));
    };
    let levels = serde_json::from_str::<api::Environment>(&text)
        .map_err(|e| {
            BenchError::Invalid(format!(
                "GET {path}: the answer is not an environment ({e}): is {} a hierad \
                 server? (--plan FILE runs a plan without asking the server for one)",
                target.url()
            ))
        })?
        .hierarchy_levels;
    let hierarchy: Vec<String> = match get_value(target, &datasource_path(env, "hiera")).await? {
        Some(Value::Hash(h)) => h
            .get(&Value::Symbol("hierarchy".into()))
            .map(|v| match v {
                Value::Array(items) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                Value::String(s) => vec![s.clone()],
                _ => Vec::new(),
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    if hierarchy.is_empty() {
        return Err(BenchError::Invalid(format!(
            "environment {env} has no Hiera hierarchy (no `hiera` resource): give --plan (hierad bench generate writes one)"
        )));
    }
    let mut sources: Vec<(String, Hash)> = Vec::new();
    for level in &hierarchy {
        let name = plan::expand(level, &|_| String::new());
        // Levels named by a scope variable (`override/node/%{::fqdn}`)
        // differ per node; the root holds none of them.
        if name.is_empty() || name.ends_with('/') {
            continue;
        }
        if let Some(Value::Hash(doc)) = get_value(target, &datasource_path(env, &name)).await? {
            sources.push((name, doc));
        }
    }
    let nodes: Vec<String> = sources
        .iter()
        .find(|(n, _)| n == "astute")
        .and_then(|(_, doc)| doc.get(&Value::str("nodes")))
        .and_then(Value::as_array)
        .map(|list| {
            let mut fqdns: Vec<String> = list
                .iter()
                .filter_map(|e| {
                    e.as_hash()?
                        .get(&Value::str("fqdn"))?
                        .as_str()
                        .map(str::to_owned)
                })
                .collect();
            fqdns.dedup();
            fqdns
        })
        .unwrap_or_default();
    let write_resource = ["override/common", "override/plugins"]
        .iter()
        .find(|r| sources.iter().any(|(n, _)| n == *r))
        .map_or_else(
            || sources.last().map(|(n, _)| n.clone()).unwrap_or_default(),
            |r| (*r).to_owned(),
        );
    let calling_classes = plan::default_calling_classes();
    let borrowed: Vec<(String, &Hash)> = sources.iter().map(|(n, d)| (n.clone(), d)).collect();
    Ok(Plan {
        environment: env,
        level: if levels.iter().any(|l| l == "nodes") && !nodes.is_empty() {
            "nodes".to_owned()
        } else {
            String::new()
        },
        nodes,
        hierarchy,
        classes: plan::classify(&borrowed, &[], &calling_classes),
        calling_classes,
        write_resource,
    })
}
