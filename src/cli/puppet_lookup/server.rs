//! `hierad puppet-lookup --server URL --env N`: the same lookup in a
//! Hiera 5 environment of a hierad server (docs/hiera5.md), one request
//! per key until one is found, as Puppet tries its keys in order.

use super::Refused;
use crate::api::{LookupRequest, WireValue};
use crate::cli::args::ClientFlags;
use crate::hiera::error::ErrorClass;
use crate::hiera::{Hash, Value};
use crate::ops::remote::Timeouts;
use crate::ops::{Remote, RemoteError};

/// What the server is asked for the node.
pub(super) struct Asked<'a> {
    pub(super) server: &'a str,
    pub(super) env: i64,
    /// The node's facts, or (`None`) the scope stored for `node`.
    pub(super) facts: Option<Hash>,
    pub(super) node: Option<&'a str>,
    pub(super) merge: Option<Value>,
}

/// The value of the first of `keys` found; `None`: none is.
///
/// # Errors
/// [`Refused::Failed`] for a `LookupError` (which `puppet lookup`
/// answers with exit status 1 and nothing printed), else as Puppet or
/// hierad refuse.
pub(super) fn lookup(asked: &Asked<'_>, keys: &[String]) -> Result<Option<Value>, Refused> {
    let hierad = |e: &dyn std::fmt::Display| Refused::Hierad(e.to_string());
    let auth = ClientFlags::from_env().auth().map_err(|e| hierad(&e))?;
    let remote = Remote::connect(asked.server, Timeouts::reads(), auth).map_err(|e| hierad(&e))?;
    for key in keys {
        let request = LookupRequest {
            environment: asked.env,
            key: key.clone(),
            resolution: None,
            level: None,
            hierarchy: None,
            hierarchy_id: None,
            scope: asked.facts.clone().map(|f| WireValue(Value::Hash(f))),
            default: None,
            explain: false,
            node: asked.node.map(str::to_owned),
            merge: asked.merge.clone().map(WireValue),
        };
        match remote.lookup(&request) {
            Ok(answer) if answer.found => return Ok(answer.value.map(|v| v.0)),
            Ok(_) => {}
            Err(RemoteError::Api {
                class: Some(class),
                message,
                ..
            }) => {
                return if class == ErrorClass::LookupError.ruby_name() {
                    Err(Refused::Failed)
                } else if class == ErrorClass::ArgumentError.ruby_name() {
                    Err(Refused::Puppet(message))
                } else {
                    Err(Refused::Hierad(message))
                };
            }
            Err(e) => return Err(hierad(&e)),
        }
    }
    Ok(None)
}
