//! `hierad puppet-lookup --server URL --env N`: the same lookup in a
//! Hiera 5 environment of a hierad server (docs/hiera5.md), one request
//! per key until one is found, as Puppet tries its keys in order.

use super::Refused;
use crate::api::{Explanation, Keys, LookupRequest, WireValue};
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
    let remote = connect(asked)?;
    for key in keys {
        match remote.lookup(&request(asked, Keys::one(key.clone()))) {
            Ok(answer) if answer.found => return Ok(answer.value.map(|v| v.0)),
            Ok(_) => {}
            Err(e) => return Err(refused(e)),
        }
    }
    Ok(None)
}

/// `puppet lookup --explain` of `keys` (one lookup, the first found
/// answering), as the server explains it over the files the environment
/// was imported from; `default` stands for `--default`.
///
/// # Errors
/// As [`lookup`]; a failed lookup is the explanation's last line.
pub(super) fn explain(
    asked: &Asked<'_>,
    keys: &[String],
    default: Option<&str>,
) -> Result<Explanation, Refused> {
    let remote = connect(asked)?;
    let mut request = match keys {
        [one] => request(asked, Keys::one(one.clone())),
        _ => request(
            asked,
            Keys::Several {
                keys: keys.to_vec(),
            },
        ),
    };
    request.explain = true;
    request.default = default.map(|d| WireValue(Value::str(d)));
    let answer = remote.lookup(&request).map_err(refused)?;
    answer
        .explanation
        .ok_or_else(|| Refused::Hierad("the server did not explain the lookup".into()))
}

fn connect(asked: &Asked<'_>) -> Result<Remote, Refused> {
    let hierad = |e: &dyn std::fmt::Display| Refused::Hierad(e.to_string());
    let auth = ClientFlags::from_env().auth().map_err(|e| hierad(&e))?;
    Remote::connect(asked.server, Timeouts::reads(), auth).map_err(|e| hierad(&e))
}

fn request(asked: &Asked<'_>, keys: Keys) -> LookupRequest {
    LookupRequest {
        environment: asked.env,
        keys,
        scope: asked.facts.clone().map(|f| WireValue(Value::Hash(f))),
        node: asked.node.map(str::to_owned),
        merge: asked.merge.clone().map(WireValue),
        ..LookupRequest::default()
    }
}

/// A failed request as `puppet lookup` reports the same failure.
fn refused(e: RemoteError) -> Refused {
    match e {
        RemoteError::Api {
            class: Some(class),
            message,
            ..
        } => {
            if class == ErrorClass::LookupError.ruby_name() {
                Refused::Failed
            } else if class == ErrorClass::ArgumentError.ruby_name() {
                Refused::Puppet(message)
            } else {
                Refused::Hierad(message)
            }
        }
        e => Refused::Hierad(e.to_string()),
    }
}
