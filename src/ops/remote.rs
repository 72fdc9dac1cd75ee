//! [`ConfigOps`] over a hierad server's REST API (docs/api.md), with a
//! small blocking HTTP client (ureq): URL building (level paths, resource
//! names, percent-encoding), the error form, and the lookup `hierad lookup
//! --server` sends. Bodies are the types of [`crate::api`]; values travel
//! in the wire form, so every Ruby type survives the trip.

use super::{ConfigOps, ImportSummary, LevelDocs, Result as OpsResult};
use crate::api;
use crate::configdb::unparsed::Unparsed;
use crate::configdb::{
    ComponentRef, ConfigError, DocAddress, DocKind, Environment, KeyPath, LevelPath, Version,
    keypath,
};
use crate::hiera::{Hash, Value};
use crate::wire;
use serde::Serialize;
use serde::de::DeserializeOwned;
use ureq::Agent;

pub(crate) use super::client_auth::ClientAuth;
pub(crate) use super::timeouts::Timeouts;
mod insight;
mod rotate;
pub(crate) mod urls;
use super::timeouts::transport_error;
use crate::api::paths::{self, encode};
pub(crate) use urls::doc_url;
use urls::{address_url, definition_url, normalize_base, register_url};

/// The largest answer read (an effective document of a big environment is
/// a few MiB; this only guards against a runaway server).
const BODY_LIMIT: u64 = 1 << 30;

/// Bodies larger than this are sent with `Expect: 100-continue` (curl's
/// threshold).
const EXPECT_CONTINUE_FROM: usize = 1024 * 1024;

/// What went wrong talking to the server.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RemoteError {
    /// No HTTP answer at all: refused, unknown host, timed out, …
    #[error("cannot reach the hierad server at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    /// The connection broke after the request went out, before an answer:
    /// the server may have done it (the write committed, then the
    /// connection dropped), unlike `Unreachable`, where nothing was sent.
    #[error("the connection to the hierad server at {url} was lost after the request was sent, before an answer ({reason}); {}", lost_advice(*writes))]
    Lost {
        url: String,
        reason: String,
        /// Whether the request writes (POST, PUT, DELETE).
        writes: bool,
    },
    /// The server answered with an error ([`api::ErrorBody`]).
    #[error("{}", api_text(message, class.as_deref()))]
    Api {
        status: u16,
        /// `not_found`, `bad_request`, `hiera_error`, …
        kind: String,
        message: String,
        /// The Ruby exception class of a `hiera_error`.
        class: Option<String>,
    },
    /// An answer that does not follow the API.
    #[error("unexpected answer from the hierad server at {url} (HTTP {status}): {reason}")]
    BadAnswer {
        url: String,
        status: u16,
        reason: String,
    },
    /// A `--server` value that is not an http:// or https:// URL.
    #[error("invalid server URL \"{0}\": give http://HOST:PORT or https://HOST:PORT")]
    BadUrl(String),
    /// A `--server` URL with `USER:PASSWORD@`: not repeated.
    #[error("{}", super::client_auth::CREDENTIALS_IN_URL)]
    CredentialsInUrl,
    /// The server did not connect, or went silent, within its timeout.
    #[error(
        "timed out {phase} the hierad server at {url} (no progress in {seconds} s; {flag} sets the limit)"
    )]
    TimedOut {
        url: String,
        /// `connecting to`, `sending the request to`, `waiting for an answer from`.
        phase: &'static str,
        seconds: f64,
        /// The flag that raises the limit.
        flag: &'static str,
    },
    /// A CA or client certificate file that cannot be used.
    #[error("{0}")]
    Tls(String),
}

fn lost_advice(writes: bool) -> &'static str {
    if writes {
        "it may have been applied: check with `hierad config history` (a document) or \
         `hierad register list` (a register) before sending it again"
    } else {
        "it changed nothing: send it again"
    }
}

fn api_text(message: &str, class: Option<&str>) -> String {
    match class {
        // Ruby's rendering of an uncaught exception, as the local path.
        Some(class) => format!("{message} ({class})"),
        None => message.to_owned(),
    }
}

impl RemoteError {
    /// The HTTP status of an API error.
    pub(crate) fn status(&self) -> Option<u16> {
        match self {
            RemoteError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }
}

pub(crate) type Result<T, E = RemoteError> = std::result::Result<T, E>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Get,
    Post,
    Put,
    Delete,
}

/// A connection to one hierad server.
pub(crate) struct Remote {
    agent: Agent,
    base: String,
    timeouts: Timeouts,
    auth: ClientAuth,
}

impl Remote {
    /// A client for `server` (`http://host:port` or `https://…`, a path
    /// prefix allowed; a bare `host:port` means http) with `timeouts`,
    /// that authenticates with `auth`.
    ///
    /// # Errors
    ///
    /// [`RemoteError::BadUrl`] for an empty URL or another scheme;
    /// [`RemoteError::CredentialsInUrl`] for a URL naming a user;
    /// [`RemoteError::Tls`] for an unusable CA or client certificate file.
    pub(crate) fn connect(server: &str, timeouts: Timeouts, auth: ClientAuth) -> Result<Remote> {
        if crate::auth::url_names_user(server) {
            return Err(RemoteError::CredentialsInUrl);
        }
        let base = normalize_base(server).ok_or_else(|| RemoteError::BadUrl(server.to_owned()))?;
        let config = Agent::config_builder()
            .http_status_as_error(false)
            .timeout_resolve(Some(timeouts.connect))
            .timeout_connect(Some(timeouts.connect))
            .timeout_per_read(Some(timeouts.read))
            .timeout_per_write(Some(timeouts.read))
            .tls_config(auth.tls()?)
            .build();
        Ok(Remote {
            agent: config.into(),
            base,
            timeouts,
            auth,
        })
    }

    fn authorize<B>(&self, mut request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        if let Some(value) = &self.auth.authorization {
            request = request.header("Authorization", value);
        }
        if let Some(token) = &self.auth.keystone_token {
            request = request.header("X-Auth-Token", token);
        }
        request
    }

    /// Sends one request; the answer's body (empty for none).
    fn call(&self, method: Method, path: &str, body: Option<String>) -> Result<String> {
        let url = format!("{}{path}", self.base);
        let writes = method != Method::Get;
        let unreachable = |e: ureq::Error| transport_error(&self.base, self.timeouts, writes, e);
        let body = body.unwrap_or_default();
        let send = |request: ureq::RequestBuilder<ureq::typestate::WithBody>| {
            let request = self
                .authorize(request)
                .header("Content-Type", "application/json");
            // A large body waits for the server's go-ahead: over its body
            // limit the server answers 413 at once, which reads better than
            // the broken pipe of a connection closed mid-upload.
            if body.len() > EXPECT_CONTINUE_FROM {
                request.header("Expect", "100-continue").send(&body)
            } else {
                request.send(&body)
            }
        };
        let sent = match method {
            Method::Get => self.authorize(self.agent.get(&url)).call(),
            Method::Delete => self.authorize(self.agent.delete(&url)).call(),
            Method::Post => send(self.agent.post(&url)),
            Method::Put => send(self.agent.put(&url)),
        };
        let mut response = sent.map_err(unreachable)?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(BODY_LIMIT)
            .read_to_string()
            .map_err(unreachable)?;
        if (200..300).contains(&status) {
            Ok(text)
        } else {
            Err(api_error(status, &url, &text))
        }
    }

    /// A request whose answer is a `T`.
    fn typed<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> Result<T> {
        let body = body.map(|b| serde_json::to_string(b).expect("API bodies serialize"));
        let text = self.call(method, path, body)?;
        self.decode(path, &text)
    }

    /// An answer's body `text` (from `path`) as a `T`.
    fn decode<T: DeserializeOwned>(&self, path: &str, text: &str) -> Result<T> {
        wire::from_envelope(text).map_err(|e| RemoteError::BadAnswer {
            url: format!("{}{path}", self.base),
            status: 200,
            reason: if text.trim().is_empty() {
                "empty body".to_owned()
            } else {
                e.to_string()
            },
        })
    }

    /// A wire-JSON document (a Hash) from a `GET`.
    fn get_document(&self, path: &str) -> Result<Hash> {
        let api::WireValue(value) = self.typed(Method::Get, path, None::<&()>)?;
        match value {
            Value::Hash(h) => Ok(h),
            other => Err(RemoteError::BadAnswer {
                url: format!("{}{path}", self.base),
                status: 200,
                reason: format!("a document must be a Hash, got {}", other.class_name()),
            }),
        }
    }

    /// `GET /environments/{env}`; `None` when the server says 404.
    ///
    /// # Errors
    ///
    /// Transport and API errors other than 404.
    pub(crate) fn environment(&self, env: i64) -> Result<Option<api::Environment>> {
        let path = paths::fill(paths::ENVIRONMENT, &[&env.to_string()]);
        match self.typed(Method::Get, &path, None::<&()>) {
            Ok(environment) => Ok(Some(environment)),
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The resource names an environment defines (through its components),
    /// sorted.
    ///
    /// # Errors
    ///
    /// As the calls: unknown environment (404), transport.
    pub(crate) fn resource_names(&self, env: i64) -> Result<Vec<String>> {
        let Some(environment) = self.environment(env)? else {
            return Err(RemoteError::Api {
                status: 404,
                kind: "not_found".into(),
                message: format!("environment {env} does not exist"),
                class: None,
            });
        };
        let components: Vec<api::Component> =
            self.typed(Method::Get, paths::COMPONENTS, None::<&()>)?;
        let mut names: Vec<String> = components
            .into_iter()
            .filter(|c| environment.components.contains(&c.id))
            .flat_map(|c| c.resource_definitions.into_iter().map(|d| d.name))
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// `POST /components`; a 409 (it exists already) is fine.
    ///
    /// # Errors
    ///
    /// Other API and transport errors.
    pub(crate) fn ensure_component(&self, name: &str, resources: &[String]) -> Result<()> {
        let body = api::NewComponent {
            id: None,
            name: name.to_owned(),
            resource_definitions: resources
                .iter()
                .map(|name| api::NewResourceDefinition {
                    name: name.clone(),
                    content: Default::default(),
                })
                .collect(),
        };
        let sent: Result<api::Component> = self.typed(Method::Post, paths::COMPONENTS, Some(&body));
        match sent {
            Ok(_) => Ok(()),
            Err(e) if e.status() == Some(409) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `POST /environments` with an explicit id.
    ///
    /// # Errors
    ///
    /// API and transport errors.
    pub(crate) fn create_environment(
        &self,
        env: i64,
        new: &super::NewEnv,
    ) -> Result<api::Environment> {
        let body = api::NewEnvironment {
            retention: None,
            id: Some(env),
            components: vec![api::ComponentKey(ComponentRef::Name(new.component.clone()))],
            hierarchy_levels: new.levels.clone(),
            hiera: new.hiera,
        };
        self.typed(Method::Post, paths::ENVIRONMENTS, Some(&body))
    }

    /// `GET …/values?effective`: the effective document at `path`.
    ///
    /// # Errors
    ///
    /// Unknown environment, level or resource; transport.
    pub(crate) fn effective(&self, env: i64, path: &LevelPath, resource: &str) -> Result<Hash> {
        let url = doc_url(env, path, resource, DocKind::Values);
        self.get_document(&format!("{url}?effective"))
    }

    /// `GET …/{values|overrides}[?version=N]`: what is stored at exactly
    /// `at` (`{}` if nothing).
    ///
    /// # Errors
    ///
    /// As [`Remote::effective`]; an unknown version.
    pub(crate) fn stored(&self, at: &DocAddress, version: Option<u64>) -> Result<Hash> {
        let mut url = doc_url(at.env, &at.path, &at.resource, at.kind);
        if let Some(n) = version {
            url.push_str(&format!("?version={n}"));
        }
        self.get_document(&url)
    }

    /// `PUT …/{values|overrides}`: a new version of the whole document.
    ///
    /// # Errors
    ///
    /// As [`Remote::effective`].
    pub(crate) fn put(&self, at: &DocAddress, doc: &Hash) -> Result<()> {
        let body = wire::to_string(&Value::Hash(doc.clone()));
        self.call(Method::Put, &address_url(at), Some(body))?;
        Ok(())
    }

    /// `PUT …/{values|overrides}/keys/{key}`: one nested key of a stored
    /// document, changed in one transaction on the server.
    ///
    /// # Errors
    ///
    /// As [`Remote::effective`]; a key path that does not fit the document.
    pub(crate) fn put_key(&self, at: &DocAddress, key: &str, value: &Value) -> Result<()> {
        let url = format!("{}/keys/{}", address_url(at), encode(key, false));
        self.call(Method::Put, &url, Some(wire::to_string(value)))?;
        Ok(())
    }

    /// `GET …/{values|overrides}/keys/{key}`: one nested key of what is
    /// stored at `at`; `None` when the server says 404 (no such key, or
    /// nothing stored there).
    ///
    /// # Errors
    ///
    /// Transport and API errors other than 404.
    pub(crate) fn get_key(&self, at: &DocAddress, key: &str) -> Result<Option<Value>> {
        let url = format!("{}/keys/{}", address_url(at), encode(key, false));
        match self.typed(Method::Get, &url, None::<&()>) {
            Ok(api::WireValue(value)) => Ok(Some(value)),
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `GET …/history`.
    ///
    /// # Errors
    ///
    /// As [`Remote::effective`].
    pub(crate) fn history(&self, at: &DocAddress) -> Result<Vec<Version>> {
        let url = format!("{}/history", address_url(at));
        let versions: Vec<api::Version> = self.typed(Method::Get, &url, None::<&()>)?;
        Ok(versions.into_iter().map(Version::from).collect())
    }

    /// `POST …/restore?version=N`.
    ///
    /// # Errors
    ///
    /// As [`Remote::effective`]; no such version; a deletion marker.
    pub(crate) fn restore(&self, at: &DocAddress, version: u64) -> Result<Version> {
        let url = format!("{}/restore?version={version}", address_url(at));
        let restored: api::Version = self.typed(Method::Post, &url, None::<&()>)?;
        Ok(restored.into())
    }

    /// `DELETE …/{values|overrides}`: a deletion marker.
    ///
    /// # Errors
    ///
    /// As [`Remote::effective`]; nothing live to delete.
    pub(crate) fn delete(&self, at: &DocAddress) -> Result<()> {
        self.call(Method::Delete, &address_url(at), None)?;
        Ok(())
    }

    /// `POST /environments/{env}/import`: one level, all or nothing.
    ///
    /// # Errors
    ///
    /// API and transport errors; nothing is written on any of them.
    pub(crate) fn import(
        &self,
        env: i64,
        level: &LevelPath,
        kind: DocKind,
        replace: bool,
        register: bool,
        files: &[crate::tree::TreeFile],
    ) -> Result<ImportSummary> {
        let body = insight::import_request(level, kind, replace, register, files);
        let path = paths::fill(paths::IMPORT, &[&env.to_string()]);
        self.typed(Method::Post, &path, Some(&body))
            .map_err(|e| match e {
                // A level's whole tree is one request: say what to do.
                RemoteError::Api {
                    status: 413,
                    kind,
                    message,
                    class,
                } => RemoteError::Api {
                    status: 413,
                    kind,
                    message: format!(
                        "the server refused the import: {message} (the tree is sent as one request); import the tree in parts (a folder at a time), or start the server with a larger --body-limit"
                    ),
                    class,
                },
                e => e,
            })
    }

    /// `POST /api/v1/lookup`.
    ///
    /// # Errors
    ///
    /// A Hiera error is [`RemoteError::Api`] with `class` set (422); others
    /// as usual.
    pub(crate) fn lookup(&self, request: &api::LookupRequest) -> Result<api::LookupAnswer> {
        self.typed(Method::Post, paths::LOOKUP, Some(request))
    }
}

impl ConfigOps for Remote {
    fn environment(&self, env: i64) -> OpsResult<Option<Environment>> {
        Ok(Remote::environment(self, env)?.map(Environment::from))
    }

    fn ensure_component(&self, name: &str, resources: &[String]) -> OpsResult<()> {
        Ok(Remote::ensure_component(self, name, resources)?)
    }

    fn create_environment(&self, id: i64, new: &super::NewEnv) -> OpsResult<()> {
        Remote::create_environment(self, id, new)?;
        Ok(())
    }

    fn import(
        &self,
        env: i64,
        levels: &[LevelDocs],
        kind: DocKind,
        replace: bool,
        register: bool,
    ) -> OpsResult<ImportSummary> {
        let mut summary = ImportSummary::default();
        for (path, files) in levels {
            summary.add(Remote::import(
                self, env, path, kind, replace, register, files,
            )?);
        }
        Ok(summary)
    }

    fn resource_names(&self, env: i64) -> OpsResult<Vec<String>> {
        Ok(Remote::resource_names(self, env)?)
    }

    fn kept_file(&self, at: &DocAddress) -> OpsResult<Option<Unparsed>> {
        Ok(insight::kept_file(self, at)?)
    }

    fn effective(&self, env: i64, path: &LevelPath, resource: &str) -> OpsResult<Hash> {
        Ok(Remote::effective(self, env, path, resource)?)
    }

    fn write_encrypting(
        &self,
        at: &DocAddress,
        key: Option<&KeyPath>,
        value: &Value,
        encrypt: &[KeyPath],
    ) -> OpsResult<()> {
        let listed: Vec<&str> = encrypt.iter().map(KeyPath::as_str).collect();
        let query = format!("?encrypt={}", encode(&listed.join(","), false));
        let url = match key {
            None => address_url(at),
            Some(key) if !key.as_str().contains('/') => {
                format!("{}/keys/{}", address_url(at), encode(key.as_str(), false))
            }
            Some(key) => {
                return Err(super::OpsError::Refused(format!(
                    "--encrypt with --key {}: a key holding '/' cannot be written alone; write the whole document from stdin",
                    key.as_str()
                )));
            }
        };
        self.call(
            Method::Put,
            &format!("{url}{query}"),
            Some(wire::to_string(value)),
        )?;
        Ok(())
    }

    fn effective_decrypted(&self, env: i64, path: &LevelPath, resource: &str) -> OpsResult<Hash> {
        let url = doc_url(env, path, resource, DocKind::Values);
        Ok(self.get_document(&format!("{url}?effective&decrypt=true"))?)
    }

    fn show_lookup(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
    ) -> OpsResult<api::ShowLookup> {
        Ok(Remote::show_lookup(self, env, path, resource)?)
    }

    fn diff(&self, at: &DocAddress, range: &super::diffs::Range) -> OpsResult<api::DiffAnswer> {
        Ok(Remote::diff(self, at, range)?)
    }

    fn scope(&self, env: i64, node: &str) -> OpsResult<api::NodeScope> {
        Ok(Remote::scope(self, env, node)?)
    }

    fn put_scope(&self, env: i64, node: &str, scope: &super::ResourceContent) -> OpsResult<()> {
        Ok(Remote::put_scope(self, env, node, scope)?)
    }

    fn delete_scope(&self, env: i64, node: &str) -> OpsResult<()> {
        Ok(Remote::delete_scope(self, env, node)?)
    }

    fn scope_history(&self, env: i64, node: &str) -> OpsResult<Vec<Version>> {
        Ok(Remote::scope_history(self, env, node)?)
    }

    fn stored(&self, at: &DocAddress, version: Option<u64>) -> OpsResult<Hash> {
        Ok(Remote::stored(self, at, version)?)
    }

    fn put(&self, at: &DocAddress, doc: &Hash) -> OpsResult<()> {
        Ok(Remote::put(self, at, doc)?)
    }

    fn set_key(&self, at: &DocAddress, key: &KeyPath, value: &Value) -> OpsResult<()> {
        // The key route changes the key in one server-side transaction.
        // A key with a `/` cannot travel in a URL segment (servers decode
        // `%2F` before routing): read, change, write back.
        if !key.as_str().contains('/') {
            return Ok(self.put_key(at, key.as_str(), value)?);
        }
        let mut doc = Remote::stored(self, at, None)?;
        keypath::set(&mut doc, key, value.clone()).map_err(ConfigError::from)?;
        Ok(Remote::put(self, at, &doc)?)
    }

    fn history(&self, at: &DocAddress) -> OpsResult<Vec<Version>> {
        Ok(Remote::history(self, at)?)
    }

    fn restore(&self, at: &DocAddress, version: u64) -> OpsResult<Version> {
        Ok(Remote::restore(self, at, version)?)
    }

    fn delete(&self, at: &DocAddress) -> OpsResult<()> {
        Ok(Remote::delete(self, at)?)
    }

    fn tags(&self) -> OpsResult<Vec<crate::configdb::Tag>> {
        let tags: Vec<api::impact::Tag> = self.typed(Method::Get, paths::TAGS, None::<&()>)?;
        Ok(tags.into_iter().map(Into::into).collect())
    }

    fn create_tag(&self, name: &str, generation: Option<u64>) -> OpsResult<crate::configdb::Tag> {
        let new = api::impact::NewTag {
            name: name.to_owned(),
            generation,
        };
        let tag: api::impact::Tag = self.typed(Method::Post, paths::TAGS, Some(&new))?;
        Ok(tag.into())
    }

    fn delete_tag(&self, name: &str) -> OpsResult<()> {
        self.call(Method::Delete, &paths::fill(paths::TAG, &[name]), None)?;
        Ok(())
    }

    fn nodes_changed(
        &self,
        env: i64,
        since: &str,
        resource: Option<&str>,
        keys: &[String],
    ) -> OpsResult<api::impact::NodesChanged> {
        let mut url = paths::fill(paths::NODES_CHANGED, &[&env.to_string()]);
        url.push_str(&format!("?since={}", encode(since, false)));
        if let Some(resource) = resource {
            url.push_str(&format!("&resource={}", encode(resource, false)));
        }
        if !keys.is_empty() {
            let keys: Vec<String> = keys.iter().map(|k| encode(k, false)).collect();
            url.push_str(&format!("&keys={}", keys.join(",")));
        }
        Ok(self.typed(Method::Get, &url, None::<&()>)?)
    }

    fn dry_run(&self, at: &DocAddress, write: super::Write<'_>) -> OpsResult<api::impact::DryRun> {
        self.dry_run_of(at, write)
    }

    fn dry_run_import(
        &self,
        env: i64,
        (level, files): &LevelDocs,
        kind: DocKind,
        replace: bool,
        register: bool,
    ) -> OpsResult<api::impact::DryRun> {
        Ok(Remote::dry_run_import(
            self,
            env,
            (level, files),
            kind,
            (replace, register),
        )?)
    }

    fn register(&self, env: i64, level: &str) -> OpsResult<Option<Vec<String>>> {
        match self.typed::<api::Register>(Method::Get, &register_url(env, level), None::<&()>) {
            Ok(register) => Ok(Some(register.values)),
            Err(RemoteError::Api {
                status: 404,
                message,
                ..
            }) if message.contains("keeps no register") => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn set_register(&self, env: i64, level: &str, values: Option<&[String]>) -> OpsResult<()> {
        let url = register_url(env, level);
        match values {
            Some(values) => {
                self.typed::<api::Register>(Method::Put, &url, Some(&values))?;
            }
            None => {
                self.call(Method::Delete, &url, None)?;
            }
        }
        Ok(())
    }

    fn add_to_register(&self, env: i64, level: &str, values: &[String]) -> OpsResult<usize> {
        let url = register_url(env, level);
        let change: api::RegisterChange = self.typed(Method::Post, &url, Some(&values))?;
        Ok(change.changed)
    }

    fn resource_content(
        &self,
        component: &str,
        resource: &str,
    ) -> OpsResult<crate::ops::ResourceContent> {
        let url = definition_url(component, resource);
        let found = self.typed::<api::ResourceDefinition>(Method::Get, &url, None::<&()>)?;
        Ok(found.content)
    }

    fn set_resource_content(
        &self,
        component: &str,
        resource: &str,
        content: &crate::ops::ResourceContent,
    ) -> OpsResult<()> {
        let url = definition_url(component, resource);
        self.typed::<api::ResourceDefinition>(Method::Put, &url, Some(content))?;
        Ok(())
    }

    fn remove_from_register(&self, env: i64, level: &str, values: &[String]) -> OpsResult<usize> {
        let mut removed = 0;
        for value in values {
            let url = paths::fill(paths::REGISTER_VALUE, &[&env.to_string(), level, value]);
            match self.typed::<api::RegisterChange>(Method::Delete, &url, None::<&()>) {
                Ok(change) => removed += change.changed,
                Err(RemoteError::Api {
                    status: 404,
                    message,
                    ..
                }) if message.contains("is not in the register") => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(removed)
    }
}

/// The error of a non-2xx answer: the API's [`api::ErrorBody`] when it is
/// there, else the status and the start of the body.
fn api_error(status: u16, url: &str, text: &str) -> RemoteError {
    match serde_json::from_str::<api::ErrorBody>(text) {
        Ok(body) => RemoteError::Api {
            status,
            kind: body.error,
            message: body.message,
            class: body.class,
        },
        Err(_) => {
            let snippet: String = text.trim().chars().take(200).collect();
            RemoteError::Api {
                status,
                kind: String::new(),
                message: format!("HTTP {status} from {url}: {snippet}"),
                class: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_answers() {
        let cases: Vec<(u16, &str, &str)> = vec![
            (
                404,
                r#"{"error":"not_found","message":"environment 9 does not exist"}"#,
                "environment 9 does not exist",
            ),
            (
                422,
                r#"{"error":"hiera_error","class":"Hiera::InterpolationLoop","message":"Lookup recursion detected in [a]"}"#,
                "Lookup recursion detected in [a] (Hiera::InterpolationLoop)",
            ),
            (502, "Bad Gateway", "HTTP 502 from http://h/x: Bad Gateway"),
        ];
        for (status, body, want) in cases {
            let err = api_error(status, "http://h/x", body);
            assert_eq!(err.to_string(), want);
            assert_eq!(err.status(), Some(status));
        }
    }
}
