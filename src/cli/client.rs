//! A small blocking HTTP client for hierad's API (`docs/api.md`), used by
//! `hierad config`, `import`, `export` and `lookup --server`: URL building
//! (level paths, resource names, percent-encoding), the JSON error form, and
//! the few typed calls the CLI needs. Values travel in the wire form
//! ([`crate::wire`]), so every Ruby type survives the trip.

use crate::configdb::{DocAddress, DocKind, Environment, LevelPath};
use crate::hiera::{Hash, Value};
use crate::wire;
use serde_json::{Value as Json, json};
use std::time::Duration;
use ureq::Agent;

/// Where the ConfigDB routes live under the server's base URL.
const CONFIG_API: &str = "/api/v1/config";

/// The largest answer read (an effective document of a big environment is
/// a few MiB; this only guards against a runaway server).
const BODY_LIMIT: u64 = 1 << 30;

/// What went wrong talking to the server.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No HTTP answer at all: refused, unknown host, timed out, …
    #[error("cannot reach the hierad server at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    /// The server answered with an error (`{"error", "message"}`).
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
    /// A `--server` value that is not an http:// URL.
    #[error("invalid server URL \"{0}\": give http://HOST:PORT")]
    BadUrl(String),
}

fn api_text(message: &str, class: Option<&str>) -> String {
    match class {
        // Ruby's rendering of an uncaught exception, as the local path.
        Some(class) => format!("{message} ({class})"),
        None => message.to_owned(),
    }
}

impl ClientError {
    /// The HTTP status of an API error.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }
}

pub type Result<T, E = ClientError> = std::result::Result<T, E>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Get,
    Post,
    Put,
}

/// A connection to one hierad server.
pub struct Client {
    agent: Agent,
    base: String,
}

impl Client {
    /// A client for `server` (`http://host:port`, a path prefix allowed; a
    /// bare `host:port` means http).
    ///
    /// # Errors
    ///
    /// [`ClientError::BadUrl`] for an empty URL or another scheme (this
    /// build speaks plain HTTP only).
    pub fn new(server: &str) -> Result<Client> {
        let base = normalize_base(server).ok_or_else(|| ClientError::BadUrl(server.to_owned()))?;
        let config = Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .build();
        Ok(Client {
            agent: config.into(),
            base,
        })
    }

    /// The server's base URL, as used in messages.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Sends one request; the answer's JSON (`None` for an empty body).
    fn call(&self, method: Method, path: &str, body: Option<&Json>) -> Result<Option<Json>> {
        let url = format!("{}{path}", self.base);
        let unreachable = |e: ureq::Error| ClientError::Unreachable {
            url: self.base.clone(),
            reason: e.to_string(),
        };
        let text = body.map(Json::to_string);
        let sent = match (method, text) {
            (Method::Get, _) => self.agent.get(&url).call(),
            (Method::Post, text) => self
                .agent
                .post(&url)
                .header("Content-Type", "application/json")
                .send(text.unwrap_or_default()),
            (Method::Put, text) => self
                .agent
                .put(&url)
                .header("Content-Type", "application/json")
                .send(text.unwrap_or_default()),
        };
        let mut response = sent.map_err(unreachable)?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(BODY_LIMIT)
            .read_to_string()
            .map_err(unreachable)?;
        let parsed = if text.trim().is_empty() {
            None
        } else {
            match serde_json::from_str::<Json>(&text) {
                Ok(json) => Some(json),
                Err(e) if (200..300).contains(&status) => {
                    return Err(ClientError::BadAnswer {
                        url,
                        status,
                        reason: format!("not JSON ({e})"),
                    });
                }
                Err(_) => None,
            }
        };
        if (200..300).contains(&status) {
            return Ok(parsed);
        }
        Err(api_error(status, &url, parsed.as_ref(), &text))
    }

    fn get(&self, path: &str) -> Result<Json> {
        let url = format!("{}{path}", self.base);
        self.call(Method::Get, path, None)?
            .ok_or_else(|| ClientError::BadAnswer {
                url,
                status: 200,
                reason: "empty body".into(),
            })
    }

    /// A wire-JSON document (a Hash) from a `GET`.
    fn get_document(&self, path: &str) -> Result<Hash> {
        let json = self.get(path)?;
        let url = format!("{}{path}", self.base);
        match decode(json, &url)? {
            Value::Hash(h) => Ok(h),
            other => Err(ClientError::BadAnswer {
                url,
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
    pub fn environment(&self, env: i64) -> Result<Option<RemoteEnvironment>> {
        let path = format!("{CONFIG_API}/environments/{env}");
        let json = match self.get(&path) {
            Ok(json) => json,
            Err(e) if e.status() == Some(404) => return Ok(None),
            Err(e) => return Err(e),
        };
        RemoteEnvironment::from_json(&json)
            .map(Some)
            .ok_or_else(|| ClientError::BadAnswer {
                url: format!("{}{path}", self.base),
                status: 200,
                reason: format!("not an environment: {json}"),
            })
    }

    /// The resource names an environment defines (through its components),
    /// sorted.
    ///
    /// # Errors
    ///
    /// As the calls: unknown environment (404), transport.
    pub fn resource_names(&self, env: i64) -> Result<Vec<String>> {
        let Some(environment) = self.environment(env)? else {
            return Err(ClientError::Api {
                status: 404,
                kind: "not_found".into(),
                message: format!("environment {env} does not exist"),
                class: None,
            });
        };
        let path = format!("{CONFIG_API}/components");
        let components = self.get(&path)?;
        let mut names = Vec::new();
        for component in components.as_array().into_iter().flatten() {
            let id = component.get("id").and_then(Json::as_i64);
            let name = component.get("name").and_then(Json::as_str);
            let used = environment.components.iter().any(|c| match c {
                Json::Number(n) => n.as_i64().is_some() && n.as_i64() == id,
                Json::String(s) => Some(s.as_str()) == name,
                _ => false,
            });
            if !used {
                continue;
            }
            let definitions = component
                .get("resource_definitions")
                .and_then(Json::as_array);
            for definition in definitions.into_iter().flatten() {
                if let Some(name) = definition.get("name").and_then(Json::as_str) {
                    names.push(name.to_owned());
                }
            }
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// `POST /components` with no resource definitions; a 409 (it exists
    /// already) is fine.
    ///
    /// # Errors
    ///
    /// Other API and transport errors.
    pub fn ensure_component(&self, name: &str) -> Result<()> {
        let body = json!({"name": name, "resource_definitions": []});
        match self.call(
            Method::Post,
            &format!("{CONFIG_API}/components"),
            Some(&body),
        ) {
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
    pub fn create_environment(&self, env: i64, component: &str, levels: &[String]) -> Result<()> {
        let body = json!({"id": env, "components": [component], "hierarchy_levels": levels});
        self.call(
            Method::Post,
            &format!("{CONFIG_API}/environments"),
            Some(&body),
        )?;
        Ok(())
    }

    /// `GET …/values?effective`: the effective document at `path`.
    ///
    /// # Errors
    ///
    /// Unknown environment, level or resource; transport.
    pub fn effective(&self, env: i64, path: &LevelPath, resource: &str) -> Result<Hash> {
        let url = doc_url(env, path, resource, DocKind::Values);
        self.get_document(&format!("{url}?effective"))
    }

    /// `GET …/{values|overrides}[?version=N]`: what is stored at exactly
    /// `path` (`{}` if nothing).
    ///
    /// # Errors
    ///
    /// As [`Client::effective`]; an unknown version.
    pub fn stored(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
        kind: DocKind,
        version: Option<u64>,
    ) -> Result<Hash> {
        let mut url = doc_url(env, path, resource, kind);
        if let Some(n) = version {
            url.push_str(&format!("?version={n}"));
        }
        self.get_document(&url)
    }

    /// `PUT …/{values|overrides}`: a new version of the whole document.
    ///
    /// # Errors
    ///
    /// As [`Client::effective`].
    pub fn put(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
        kind: DocKind,
        doc: &Hash,
    ) -> Result<()> {
        let body = wire::to_json(&Value::Hash(doc.clone()));
        self.call(
            Method::Put,
            &doc_url(env, path, resource, kind),
            Some(&body),
        )?;
        Ok(())
    }

    /// `PUT …/{values|overrides}/keys/{key}`: one nested key of a stored
    /// document, changed in one transaction on the server.
    ///
    /// # Errors
    ///
    /// As [`Client::effective`]; a key path that does not fit the document.
    pub fn put_key(&self, at: &DocAddress, key: &str, value: &Value) -> Result<()> {
        let url = format!(
            "{}/keys/{}",
            doc_url(at.env, &at.path, &at.resource, at.kind),
            encode(key, false)
        );
        self.call(Method::Put, &url, Some(&wire::to_json(value)))?;
        Ok(())
    }

    /// `POST /environments/{env}/import`.
    ///
    /// # Errors
    ///
    /// API and transport errors; nothing is written on any of them.
    pub fn import(&self, env: i64, request: &ImportRequest<'_>) -> Result<ImportSummary> {
        let documents: serde_json::Map<String, Json> = request
            .documents
            .iter()
            .map(|(name, doc)| {
                (
                    (*name).to_owned(),
                    wire::to_json(&Value::Hash((*doc).clone())),
                )
            })
            .collect();
        let body = json!({
            "level": request.level.to_string(),
            "replace": request.replace,
            "kind": request.kind.as_str(),
            "documents": documents,
        });
        let path = format!("{CONFIG_API}/environments/{env}/import");
        let json = self
            .call(Method::Post, &path, Some(&body))?
            .unwrap_or_default();
        let count = |field: &str| {
            json.get(field)
                .and_then(Json::as_u64)
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(0)
        };
        Ok(ImportSummary {
            written: count("written"),
            unchanged: count("unchanged"),
            deleted: count("deleted"),
            defined: json
                .get("defined")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect(),
        })
    }

    /// `POST /api/v1/lookup`.
    ///
    /// # Errors
    ///
    /// A Hiera error is [`ClientError::Api`] with `class` set (422); others
    /// as usual.
    pub fn lookup(&self, request: &Json) -> Result<LookupAnswer> {
        let path = "/api/v1/lookup";
        let url = format!("{}{path}", self.base);
        let json = self
            .call(Method::Post, path, Some(request))?
            .unwrap_or_default();
        LookupAnswer::from_json(json, &url)
    }
}

/// An environment as the server describes it. Components may be ids or
/// names (the API accepts both).
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteEnvironment {
    pub id: i64,
    pub components: Vec<Json>,
    pub hierarchy_levels: Vec<String>,
}

impl RemoteEnvironment {
    fn from_json(json: &Json) -> Option<RemoteEnvironment> {
        Some(RemoteEnvironment {
            id: json.get("id")?.as_i64()?,
            components: json.get("components")?.as_array()?.clone(),
            hierarchy_levels: json
                .get("hierarchy_levels")?
                .as_array()?
                .iter()
                .map(|l| l.as_str().map(str::to_owned))
                .collect::<Option<_>>()?,
        })
    }

    /// The model's form, for level checks (component ids are not needed).
    pub fn to_environment(&self) -> Environment {
        Environment {
            id: self.id,
            components: Vec::new(),
            hierarchy_levels: self.hierarchy_levels.clone(),
        }
    }
}

/// What `POST …/import` takes.
pub struct ImportRequest<'a> {
    pub level: &'a LevelPath,
    pub replace: bool,
    pub kind: DocKind,
    pub documents: Vec<(&'a str, &'a Hash)>,
}

/// What an import did, in counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    pub written: usize,
    pub unchanged: usize,
    pub deleted: usize,
    pub defined: Vec<String>,
}

/// One step of a server-side `--explain`.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteStep {
    pub depth: usize,
    pub key: String,
    pub source: String,
    pub outcome: String,
    pub value: Option<Value>,
}

/// The answer of `POST /api/v1/lookup`.
#[derive(Clone, Debug, PartialEq)]
pub struct LookupAnswer {
    pub found: bool,
    /// A default applied (`found` is then false).
    pub default: bool,
    /// The value (nil when nothing was found and no default applied).
    pub value: Value,
    pub explain: Vec<RemoteStep>,
}

impl LookupAnswer {
    fn from_json(json: Json, url: &str) -> Result<LookupAnswer> {
        let bad = |reason: String| ClientError::BadAnswer {
            url: url.to_owned(),
            status: 200,
            reason,
        };
        let Json::Object(mut map) = json else {
            return Err(bad(format!("not a lookup answer: {json}")));
        };
        let found = map
            .get("found")
            .and_then(Json::as_bool)
            .ok_or_else(|| bad("no \"found\" in the lookup answer".into()))?;
        let default = map.get("default").and_then(Json::as_bool).unwrap_or(false);
        let value = match map.remove("value") {
            Some(v) => decode(v, url)?,
            None => Value::Nil,
        };
        let mut explain = Vec::new();
        for step in map
            .remove("explain")
            .and_then(|e| match e {
                Json::Array(a) => Some(a),
                _ => None,
            })
            .unwrap_or_default()
        {
            let text = |field: &str| {
                step.get(field)
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            explain.push(RemoteStep {
                depth: step
                    .get("depth")
                    .and_then(Json::as_u64)
                    .and_then(|d| usize::try_from(d).ok())
                    .unwrap_or(0),
                key: text("key"),
                source: text("source"),
                outcome: text("outcome"),
                value: match step.get("value") {
                    Some(v) => Some(decode(v.clone(), url)?),
                    None => None,
                },
            });
        }
        Ok(LookupAnswer {
            found,
            default,
            value,
            explain,
        })
    }
}

fn decode(json: Json, url: &str) -> Result<Value> {
    wire::from_wire(json).map_err(|e| ClientError::BadAnswer {
        url: url.to_owned(),
        status: 200,
        reason: e.to_string(),
    })
}

/// The error of a non-2xx answer: the API's `{"error", "message"}` when
/// it is there, else the status and the start of the body.
fn api_error(status: u16, url: &str, json: Option<&Json>, text: &str) -> ClientError {
    let field = |name: &str| json.and_then(|j| j.get(name)).and_then(Json::as_str);
    match field("message") {
        Some(message) => ClientError::Api {
            status,
            kind: field("error").unwrap_or_default().to_owned(),
            message: message.to_owned(),
            class: field("class").map(str::to_owned),
        },
        None => {
            let snippet: String = text.trim().chars().take(200).collect();
            ClientError::Api {
                status,
                kind: String::new(),
                message: format!("HTTP {status} from {url}: {snippet}"),
                class: None,
            }
        }
    }
}

/// `http://host:port` without a trailing `/`; `None` if unusable.
fn normalize_base(server: &str) -> Option<String> {
    let server = server.trim();
    let with_scheme = if server.contains("://") {
        server.to_owned()
    } else {
        format!("http://{server}")
    };
    let rest = with_scheme.strip_prefix("http://")?;
    if rest.is_empty() || rest.starts_with('/') {
        return None;
    }
    Some(with_scheme.trim_end_matches('/').to_owned())
}

/// The URL path of one document: `/api/v1/config/environments/1/nodes/n1/resources/astute/values`.
pub fn doc_url(env: i64, path: &LevelPath, resource: &str, kind: DocKind) -> String {
    let mut url = format!("{CONFIG_API}/environments/{env}");
    for pair in path.pairs() {
        url.push('/');
        url.push_str(&encode(&pair.level, false));
        url.push('/');
        url.push_str(&encode(&pair.value, false));
    }
    url.push_str("/resources/");
    url.push_str(&encode(resource, true));
    url.push('/');
    url.push_str(kind.as_str());
    url
}

/// Percent-encodes a path segment: everything but RFC 3986's unreserved
/// characters (and `/` in resource names, which the API takes raw).
pub fn encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'.' | b'_' | b'~')
            || (keep_slash && byte == b'/');
        if keep {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        let cases: &[(&str, Option<&str>)] = &[
            ("http://127.0.0.1:8750", Some("http://127.0.0.1:8750")),
            ("http://127.0.0.1:8750/", Some("http://127.0.0.1:8750")),
            ("127.0.0.1:8750", Some("http://127.0.0.1:8750")),
            ("http://h/prefix/", Some("http://h/prefix")),
            ("https://h", None),
            ("ftp://h", None),
            ("http://", None),
            ("", None),
        ];
        for (input, want) in cases {
            assert_eq!(normalize_base(input).as_deref(), *want, "{input}");
        }
    }

    #[test]
    fn document_urls() {
        let node = LevelPath::parse_cli("nodes=node-1.domain.tld").unwrap();
        let cases: &[(&LevelPath, &str, DocKind, &str)] = &[
            (
                &LevelPath::root(),
                "astute",
                DocKind::Values,
                "/api/v1/config/environments/1/resources/astute/values",
            ),
            (
                &node,
                "override/node/node-1.domain.tld",
                DocKind::Overrides,
                "/api/v1/config/environments/1/nodes/node-1.domain.tld/resources/override/node/node-1.domain.tld/overrides",
            ),
            (
                &LevelPath::parse_cli("nodes=a b").unwrap(),
                "x?y#z%",
                DocKind::Values,
                "/api/v1/config/environments/1/nodes/a%20b/resources/x%3Fy%23z%25/values",
            ),
        ];
        for (path, resource, kind, want) in cases {
            assert_eq!(doc_url(1, path, resource, *kind), *want);
        }
        assert_eq!(encode("a.'b.c'.0", false), "a.%27b.c%27.0");
        assert_eq!(encode("é/x", false), "%C3%A9%2Fx");
    }

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
            let json = serde_json::from_str::<Json>(body).ok();
            let err = api_error(status, "http://h/x", json.as_ref(), body);
            assert_eq!(err.to_string(), want);
            assert_eq!(err.status(), Some(status));
        }
    }

    #[test]
    fn lookup_answers() {
        let cases: &[(&str, bool, bool, Value)] = &[
            (
                r#"{"found": true, "value": 15}"#,
                true,
                false,
                Value::Int(15),
            ),
            (r#"{"found": true, "value": null}"#, true, false, Value::Nil),
            (r#"{"found": false}"#, false, false, Value::Nil),
            (
                r#"{"found": false, "default": true, "value": "x"}"#,
                false,
                true,
                Value::str("x"),
            ),
            (
                r#"{"found": true, "value": {"__hierad__": "sym", "name": "a"}}"#,
                true,
                false,
                Value::Symbol("a".into()),
            ),
        ];
        for (text, found, default, value) in cases {
            let answer = LookupAnswer::from_json(serde_json::from_str(text).unwrap(), "u").unwrap();
            assert_eq!(
                (answer.found, answer.default, &answer.value),
                (*found, *default, value),
                "{text}"
            );
        }
        let with_explain = r#"{"found": true, "value": 1, "explain": [{"depth": 0, "key": "k", "source": "astute", "outcome": "found", "value": 1}, {"depth": 1, "key": "j", "source": "globals", "outcome": "no_key"}]}"#;
        let answer =
            LookupAnswer::from_json(serde_json::from_str(with_explain).unwrap(), "u").unwrap();
        assert_eq!(answer.explain.len(), 2);
        assert_eq!(answer.explain[0].value, Some(Value::Int(1)));
        assert_eq!(answer.explain[1].depth, 1);
        assert_eq!(answer.explain[1].value, None);
        assert!(LookupAnswer::from_json(serde_json::from_str("[1]").unwrap(), "u").is_err());
    }
}
