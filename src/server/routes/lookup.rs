//! The lookup API (docs/api.md): one request is one Hiera lookup (or
//! several keys under one context), answered from the published snapshot,
//! with hot answers cached until the next write.

use crate::api::{self, WireValue};
use crate::auth::Principal;
use crate::cache::{self, Configured};
use crate::configdb::HieraVersion;
use crate::configdb::{Interpolated, LevelPath, Snapshot};
use crate::hiera::budget::{Budget, Limit, Meter};
use crate::hiera::hierarchy::Hierarchy;
use crate::hiera::lookup::{Answer, Outcome as StepOutcome, Resolution, Step};
use crate::hiera::{HieraError, Value};
use crate::lookup::{lookup, scope_variables};
use crate::lookup5::{self, Request5};
use crate::server::http::body::LookupBytes;
use crate::server::http::conn::Room;
use crate::server::http::error::ApiError;
use crate::server::http::guard::Peer;
use crate::server::http::templates::Answering;
use crate::server::routes::env::{self, Env};
use crate::server::routes::params::Params;
use crate::server::routes::rest::Rest;
use crate::server::secrets::Reveal;
use crate::server::state::AppState;
use crate::server::state::metrics::Metrics;
use crate::wire;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::borrow::Cow;

mod request;
pub(crate) use request::BAD_HIERARCHY;
#[cfg(test)]
pub(crate) use request::PARSES;
use request::{Parsed, bad, parse_request};

/// The lookup routes, with their full paths (merged into the
/// application's router, not nested: see [`crate::server::app`]).
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route(api::paths::LOOKUP, post(lookup_handler))
        .route(api::paths::DATASOURCE, get(datasource))
        .route(api::paths::SCOPE, get(scope))
}

/// The lookup route's handler as `Harden` calls it, past axum's router
/// (src/server/http/templates.rs, `Templates::direct`).
pub(crate) fn direct(request: axum::extract::Request, state: AppState) -> Answering {
    axum::handler::Handler::call(lookup_handler, request, state)
}

/// The data route's GETs, the same way.
pub(crate) fn datasource_direct(request: axum::extract::Request, state: AppState) -> Answering {
    axum::handler::Handler::call(datasource, request, state)
}

/// Made once (a `&str` name is parsed and checked at every use).
static X_CACHE: header::HeaderName = header::HeaderName::from_static("x-cache");
static X_TAGGED: header::HeaderName = header::HeaderName::from_static("x-hierad-tagged");

/// `body` as an answer: whether its text holds a tag's name as a JSON
/// string (src/wire.rs). The shim walks the decoded answer only then, and
/// without the `X-Hierad-Tagged` header it searches the text itself,
/// several times slower (bench/LOG.md, "The shim's JSON parser, and
/// X-Hierad-Tagged").
fn tag_checked(body: Bytes, env: i64) -> cache::Answer {
    let tagged = TAG_FINDER.find(&body).is_some();
    cache::Answer { body, tagged, env }
}

fn json_bytes(status: StatusCode, answer: cache::Answer, x_cache: &'static str) -> Response {
    let cache::Answer { body, tagged, .. } = answer;
    // Built in place. Its header map is not reserved: reserved for these
    // three, it grew again for X-Hierad-Generation; its first insert
    // makes room for six.
    let mut response = Response::new(axum::body::Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(X_CACHE.clone(), HeaderValue::from_static(x_cache));
    headers.insert(
        X_TAGGED.clone(),
        HeaderValue::from_static(if tagged { "true" } else { "false" }),
    );
    response
}

/// [`wire::TAG`] as JSON text.
const TAG_STRING: &[u8] = b"\"__hierad__\"";

/// Its searcher, made once (made per answer, it cost a third of the
/// search).
static TAG_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(TAG_STRING));

async fn lookup_handler(
    State(state): State<AppState>,
    peer: Option<Peer>,
    who: Option<Principal>,
    reveal: Reveal,
    LookupBytes(bytes, _turn): LookupBytes,
) -> Result<Response, ApiError> {
    // An explanation (an answer made per request, often large) is
    // refused before it is made when the unread-answer budget has no
    // room for one.
    let room = peer.and_then(|peer| peer.room.clone());
    let check = move |room: &Option<Room>, explain: bool| match room {
        Some(room) if explain => room.check(),
        _ => Ok(()),
    };
    // Read before the snapshot: writers publish a snapshot, then bump the
    // generation, so nothing kept under a generation (answers, configs)
    // comes from a snapshot older than the one it stands for.
    let generation = state.generation();
    let miss = match state.cache().get(generation, &bytes) {
        Ok(hit) => {
            env::permitted(who.as_ref(), hit.env)?;
            state.metrics().cache_hit();
            if let Some(plain) = reveal.answer(&hit, &bytes)? {
                return Ok(json_bytes(StatusCode::OK, plain, "HIT"));
            }
            // The cache's own bytes: not a copy per connection.
            return Ok(crate::server::state::unread::shared(json_bytes(
                StatusCode::OK,
                hit,
                "HIT",
            )));
        }
        Err(miss) => miss,
    };
    state.metrics().cache_miss();
    let snapshot = state.snapshot();
    let budget = state.settings().lookup_budget;
    // Most lookups take microseconds: answered right here, on a small
    // budget. One that outgrows it is redone where it cannot hold up the
    // async workers (and so /healthz); the work lost is that small budget.
    // A large body is not even parsed here: its tree is some 10 to 70
    // times its size, and parsing a few hundred of them at once held the
    // async workers for seconds.
    // A lookup at a generation or a tag is answered from that
    // generation's snapshot: parsed here, its pin is known; a body not
    // parsed here is searched for the fields' names (a scope that merely
    // holds them takes the pinned path, which answers it alike). A
    // lookup naming a node reads its scope from the store: never on an
    // async worker, so it is parsed again on a lookup worker. (Searching
    // every body for these names cost a full lookup 680 instructions.)
    if bytes.len() <= INLINE_BODY {
        let parsed = parse_request(&bytes)?;
        if parsed.pin.is_some() {
            return pinned_lookup(&state, who, room, bytes, parsed).await;
        }
        if parsed.node.is_none() {
            let (parsed, configured) =
                prepare_parsed(&state, &snapshot, (generation, who.as_ref()), parsed)?;
            check(&room, parsed.request.explain)?;
            let inline = INLINE_BUDGET.min(budget);
            if parsed.is_small() {
                match answer_body(&snapshot, &configured, &parsed, inline) {
                    Err(e) if Limit::of(&e).is_some() && !budget.within(inline) => {}
                    done => {
                        let body = done.map_err(|e| refusal(e, budget, state.metrics()))?;
                        let answer = tag_checked(body, parsed.request.env);
                        state.cache().admit(miss, &answer);
                        let answer = reveal.answer(&answer, &bytes)?.unwrap_or(answer);
                        return Ok(json_bytes(StatusCode::OK, answer, "MISS"));
                    }
                }
            }
        }
    } else if super::pinned::names_a_pin(&bytes) {
        let parsed = parse_request(&bytes)?;
        return pinned_lookup(&state, who, room, bytes, parsed).await;
    }
    // Queued by its body's size, parsed again (or first) on the lookup
    // worker: what waits for a turn is at most `--lookup-queue-mib` of
    // bodies, never their trees.
    let queued = state.queue_lookup(bytes.len())?;
    let worker = state.clone();
    let request = bytes.clone();
    // Boxed: held inline, this rare path's future (the request, the
    // semaphore's wait) made every lookup's future larger, and every move
    // of it a longer copy.
    let (body, env) = Box::pin(state.costly_lookup(move || {
        let _queued = queued;
        let (parsed, configured) = prepare(&worker, &snapshot, (generation, who.as_ref()), &bytes)?;
        check(&room, parsed.request.explain)?;
        let body = answer_body(&snapshot, &configured, &parsed, budget);
        Ok((body, parsed.request.env))
    }))
    .await?;
    let body = body.map_err(|e| refusal(e, budget, state.metrics()))?;
    let answer = tag_checked(body, env);
    state.cache().admit(miss, &answer);
    let answer = reveal.answer(&answer, &request)?.unwrap_or(answer);
    Ok(json_bytes(StatusCode::OK, answer, "MISS"))
}

/// A lookup that may name a generation or a tag, answered from that
/// generation's snapshot (`state/pinned.rs`) on a lookup worker. The
/// configuration cache is keyed by generation, so it takes the pinned
/// one's safely; the answer cache is not (its key is the body under the
/// newest generation, and a tag's generation is not part of it), so the
/// answer is not kept. `parsed` is `bytes` parsed, for its environment
/// and pin; the lookup worker parses the body again, so that no tree
/// waits for a turn.
async fn pinned_lookup(
    state: &AppState,
    who: Option<Principal>,
    room: Option<Room>,
    bytes: Bytes,
    parsed: Parsed,
) -> Result<Response, ApiError> {
    let env = env::permitted(who.as_ref(), parsed.request.env)?;
    if parsed.request.explain {
        room.as_ref().map_or(Ok(()), Room::check)?;
    }
    let pin = parsed.pin.clone();
    // The tree dropped before the wait for a turn.
    drop(parsed);
    let (generation, snapshot) = match pin {
        Some(pin) => super::pinned::snapshot_at(state, pin, env).await?,
        None => (state.generation(), state.snapshot()),
    };
    let budget = state.settings().lookup_budget;
    let queued = state.queue_lookup(bytes.len())?;
    let worker = state.clone();
    let body = Box::pin(state.costly_lookup(move || {
        let _queued = queued;
        let (parsed, configured) = prepare(&worker, &snapshot, (generation, who.as_ref()), &bytes)?;
        Ok(answer_body(&snapshot, &configured, &parsed, budget))
    }))
    .await?
    .map_err(|e| refusal(e, budget, state.metrics()))?;
    let mut response = json_bytes(StatusCode::OK, tag_checked(body, env), "MISS");
    response
        .headers_mut()
        .insert(super::pinned::PINNED, HeaderValue::from(generation));
    Ok(response)
}

/// Lookup bodies over this many bytes are parsed on a lookup worker, not
/// on the async worker that read them: a few dozen scope variables and
/// keys parse in microseconds, a megabyte in milliseconds.
const INLINE_BODY: usize = 64 * 1024;

/// `bytes` parsed (its one parse) and checked: its environment against
/// the limits of `who`, the rest against `snapshot` (read at
/// `generation`); with the configuration the lookup runs under.
///
/// # Errors
///
/// A malformed request, an unknown environment, level or registered
/// hierarchy, an unreadable document the lookup may read.
fn prepare(
    state: &AppState,
    snapshot: &Snapshot,
    asker: (u64, Option<&Principal>),
    bytes: &[u8],
) -> Result<(Parsed, Engine), ApiError> {
    prepare_parsed(state, snapshot, asker, parse_request(bytes)?)
}

/// [`prepare`] for a request already parsed.
fn prepare_parsed(
    state: &AppState,
    snapshot: &Snapshot,
    (generation, who): (u64, Option<&Principal>),
    mut parsed: Parsed,
) -> Result<(Parsed, Engine), ApiError> {
    env::permitted(who, parsed.request.env)?;
    if let Some(node) = parsed.node.take() {
        let over = std::mem::take(&mut parsed.request.scope);
        parsed.request.scope =
            super::scopes::layered(state.store().as_ref(), parsed.request.env, &node, over)?;
    }
    if let Some(id) = parsed.hierarchy_id {
        // A pointer's clone: the registered list is shared.
        let levels = state.hierarchies().get(id).ok_or_else(|| {
            ApiError::Conflict(format!(
                "hierarchy_id {id} is not registered on this server (it restarted, or dropped its oldest registrations, or another server registered it): register the hierarchy with POST {}, then send the lookup again",
                api::paths::HIERARCHIES
            ))
        })?;
        parsed.request.hierarchy = Some(levels);
    }
    let Some(environment) = snapshot.environment(parsed.request.env) else {
        return Err(env::missing(parsed.request.env));
    };
    if let Some(field) = parsed.misplaced(environment.hiera) {
        return Err(bad(misplaced(field, parsed.request.env, environment.hiera)));
    }
    if !parsed.request.level.is_root() {
        parsed.request.level.check(environment)?;
    }
    // A lookup that may read an unreadable document fails rather than
    // answer as if it were empty. Datasources named outright tell which;
    // interpolated ones, or the environment's own hierarchy, may be any.
    // (Most environments have none: their levels are not looked at.)
    if snapshot.unreadable_in(parsed.request.env, None).is_some() {
        let named = named_sources(parsed.request.hierarchy.as_deref().map(Hierarchy::written));
        if let Some(doc) = snapshot.unreadable_in(parsed.request.env, named.as_deref()) {
            return Err(crate::configdb::ConfigError::Unreadable(Box::new(doc.clone())).into());
        }
    }
    if environment.hiera == HieraVersion::Five {
        return Ok((parsed, Engine::Hiera5));
    }
    let configured = state.configs().get(generation, snapshot, &parsed.request)?;
    Ok((parsed, Engine::Hiera3(configured)))
}

/// What answers a lookup: Hiera 3 under the environment's configuration,
/// or Hiera 5 (`crate::lookup5`).
pub(super) enum Engine {
    Hiera3(Configured),
    Hiera5,
}

/// Why a request's `field` does not fit environment `env`'s Hiera.
fn misplaced(field: &str, env: i64, hiera: HieraVersion) -> String {
    match hiera {
        HieraVersion::Five => format!(
            "environment {env} is a Hiera 5 environment: its lookups take key or keys, scope (the node's facts), node, merge, default and explain, not {field}"
        ),
        HieraVersion::Three => format!(
            "environment {env} is a Hiera 3 environment: {field} is for Hiera 5 environments (give resolution)"
        ),
    }
}

/// The budget of a lookup's first attempt, on the async worker that
/// received it: a few dozen tokens and their strings take microseconds.
const INLINE_BUDGET: Budget = Budget {
    steps: 100,
    bytes: 256 * 1024,
};

/// Requests with more keys, or a hierarchy of more levels, than this are
/// not tried inline: their cost grows with them whatever the data.
const INLINE_KEYS: usize = 16;
const INLINE_LEVELS: usize = 64;

/// The body answering `parsed`, all its keys spending from one `budget`.
///
/// # Errors
///
/// A one-key request's Hiera error; a budget refusal for any request (the
/// other errors of a several-key request are listed with their keys).
fn answer_body(
    snapshot: &Snapshot,
    engine: &Engine,
    parsed: &Parsed,
    budget: Budget,
) -> Result<Bytes, HieraError> {
    let configured = match engine {
        Engine::Hiera3(configured) => configured,
        Engine::Hiera5 => return answer_body5(snapshot, parsed, budget),
    };
    let (config, hierarchy) = (configured.config(), configured.hierarchy(&parsed.request));
    let mut meter = Meter::new(budget);
    let body = match &parsed.keys {
        None if !parsed.request.explain => {
            let outcome = lookup(snapshot, config, hierarchy, &parsed.request, &mut meter)?;
            return Ok(match &outcome.answer {
                // Borrowed: a stored final value or a kept merge of this
                // snapshot, whose body the snapshot keeps once made.
                Answer::Found(Cow::Borrowed(v)) => {
                    snapshot.memo().body(v, |v| value_answer(FOUND, v))
                }
                other => answer_text(other),
            });
        }
        None => {
            let outcome = lookup(snapshot, config, hierarchy, &parsed.request, &mut meter)?;
            serde_json::to_string(&answer_json(&outcome.answer, Some(&outcome.steps)))
        }
        Some(keys) => {
            let mut answers = Vec::with_capacity(keys.len());
            // One copy of the request (its scope may be large), its key
            // changed for each.
            let mut request = parsed.request.clone();
            for key in keys {
                request.key.clone_from(key);
                let outcome = match lookup(snapshot, config, hierarchy, &request, &mut meter) {
                    Ok(outcome) => api::KeyOutcome::Answered(answer_json(
                        &outcome.answer,
                        request.explain.then_some(&outcome.steps),
                    )),
                    Err(e) if Limit::of(&e).is_some() => return Err(e),
                    Err(e) => api::KeyOutcome::Failed {
                        error: api::HieraFailure {
                            class: e.class.ruby_name().to_owned(),
                            message: e.message,
                        },
                    },
                };
                answers.push(api::KeyAnswer {
                    outcome,
                    key: key.clone(),
                });
            }
            serde_json::to_string(&api::KeysAnswer { answers })
        }
    }
    // Answers hold only String-keyed objects: writing them cannot fail.
    .expect("a lookup answer is plain JSON");
    Ok(Bytes::from(body))
}

/// [`answer_body`] in a Hiera 5 environment: one key's answer, or each
/// key's as for Hiera 3.
///
/// # Errors
/// A one-key request's error, as `crate::lookup5::error` classes it.
/// A budget refusal for any request, as for Hiera 3: all its keys
/// spend from one `budget`.
fn answer_body5(snapshot: &Snapshot, parsed: &Parsed, budget: Budget) -> Result<Bytes, HieraError> {
    // `hiera`'s array and hash resolutions are Puppet's unique and hash.
    let resolved = match &parsed.request.resolution {
        Resolution::Array => Some(Value::str("unique")),
        Resolution::Hash => Some(Value::str("hash")),
        _ => None,
    };
    let request = Request5 {
        env: parsed.request.env,
        facts: &parsed.request.scope,
        merge: parsed.merge.as_ref().or(resolved.as_ref()),
    };
    let meter = std::cell::RefCell::new(Meter::new(budget));
    let answer = |key: &str| -> Result<Answer<'static>, HieraError> {
        Ok(
            match (
                lookup5::lookup(snapshot, &request, key, &mut meter.borrow_mut())?,
                &parsed.request.default,
            ) {
                (Some(v), _) => Answer::Found(Cow::Owned(v)),
                (None, Some(default)) => Answer::Default(default.clone()),
                (None, None) => Answer::NotFound,
            },
        )
    };
    if parsed.request.explain {
        return explained5(snapshot, parsed, &request, Meter::new(budget));
    }
    let Some(keys) = &parsed.keys else {
        return Ok(answer_text(&answer(&parsed.request.key)?));
    };
    let answers = keys
        .iter()
        .map(|key| {
            let outcome = match answer(key) {
                Ok(a) => api::KeyOutcome::Answered(answer_json(&a, None)),
                Err(e) if Limit::of(&e).is_some() => return Err(e),
                Err(e) => api::KeyOutcome::Failed {
                    error: api::HieraFailure {
                        class: e.class.ruby_name().to_owned(),
                        message: e.message,
                    },
                },
            };
            Ok(api::KeyAnswer {
                key: key.clone(),
                outcome,
            })
        })
        .collect::<Result<_, _>>()?;
    let body =
        serde_json::to_string(&api::KeysAnswer { answers }).expect("a lookup answer is plain JSON");
    Ok(Bytes::from(body))
}

/// A Hiera 5 lookup with `explain`: one lookup of its key or keys (the
/// first found answers, as `puppet lookup KEY…` does), with `puppet
/// lookup --explain`'s explanation; a failed lookup is explained, not
/// refused (docs/api.md).
///
/// # Errors
/// What `puppet lookup --explain` refuses too (a bad `merge`), and a
/// lookup over its budget.
fn explained5(
    snapshot: &Snapshot,
    parsed: &Parsed,
    request: &Request5<'_>,
    meter: Meter,
) -> Result<Bytes, HieraError> {
    let keys = match &parsed.keys {
        Some(keys) => keys.clone(),
        None => vec![parsed.request.key.clone()],
    };
    let default = &parsed.request.default;
    let explained = lookup5::explain(snapshot, request, &keys, default.is_some(), meter)?;
    let answer = match (explained.found, default) {
        (Some(v), _) => Answer::Found(Cow::Owned(v)),
        (None, Some(d)) if explained.failure.is_none() => Answer::Default(d.clone()),
        _ => Answer::NotFound,
    };
    let mut json = answer_json(&answer, None);
    json.explanation = Some(api::Explanation {
        text: explained.explanation.text,
        tree: WireValue(explained.explanation.tree),
        error: explained.failure.map(|e| api::HieraFailure {
            class: e.class.ruby_name().to_owned(),
            message: e.message,
        }),
    });
    let body = serde_json::to_string(&json).expect("a lookup answer is plain JSON");
    Ok(Bytes::from(body))
}

/// The API error of a failed lookup run on `budget` (refusals counted).
fn refusal(error: HieraError, budget: Budget, metrics: &Metrics) -> ApiError {
    match Limit::of(&error) {
        Some(limit) => {
            metrics.budget_refusal(limit.name());
            ApiError::OverBudget {
                limit,
                value: limit.of_budget(budget),
                error,
            }
        }
        None => ApiError::Hiera(error),
    }
}

/// [`answer_json`] without steps, as text, written straight from the
/// value into the response's buffer (no JSON tree of a large answer is
/// built, nor copied).
fn answer_text(answer: &Answer) -> Bytes {
    match answer {
        Answer::Found(v) => value_answer(FOUND, v),
        Answer::Default(v) => value_answer(b"{\"found\":false,\"default\":true,\"value\":", v),
        Answer::NotFound => Bytes::from_static(b"{\"found\":false}"),
    }
}

const FOUND: &[u8] = b"{\"found\":true,\"value\":";

fn value_answer(open: &[u8], v: &Value) -> Bytes {
    let mut out = Vec::with_capacity(ANSWER_CAPACITY);
    out.extend_from_slice(open);
    wire::write_to(&mut out, v);
    out.push(b'}');
    Bytes::from(out)
}

/// Most answers are a short String or a small Hash.
const ANSWER_CAPACITY: usize = 128;

/// An answer, with the steps of an `explain`.
fn answer_json(answer: &Answer, steps: Option<&Vec<Step>>) -> api::LookupAnswer {
    let (found, default, value) = match answer {
        Answer::Found(v) => (true, false, Some(v.as_ref())),
        Answer::Default(v) => (false, true, Some(v)),
        Answer::NotFound => (false, false, None),
    };
    let explain = steps.map(|steps| {
        steps
            .iter()
            .map(|s| {
                let (outcome, value) = match &s.outcome {
                    StepOutcome::BadDefinition => ("bad_definition", None),
                    StepOutcome::NoData => ("no_data", None),
                    StepOutcome::NoKey => ("no_key", None),
                    StepOutcome::Found(v) => ("found", Some(WireValue(v.clone()))),
                };
                api::ExplainStep {
                    depth: s.depth,
                    key: s.key.clone(),
                    source: s.source.clone(),
                    outcome: outcome.to_owned(),
                    value,
                    keys: s.keys.as_ref().map(|k| k.iter().cloned().collect()),
                }
            })
            .collect()
    });
    api::LookupAnswer {
        found,
        default,
        value: value.cloned().map(WireValue),
        explain,
        explanation: None,
    }
}

impl Parsed {
    /// Whether the request is worth trying inline (see [`INLINE_KEYS`]).
    fn is_small(&self) -> bool {
        self.keys.as_ref().is_none_or(|k| k.len() <= INLINE_KEYS)
            && match self.request.hierarchy.as_deref().map(Hierarchy::written) {
                Some(Value::Array(levels)) => levels.len() <= INLINE_LEVELS,
                _ => true,
            }
    }
}

/// A request's levels when they all name their datasource outright (no
/// `%{` to interpolate), else `None` (they may name any).
fn named_sources(hierarchy: Option<&Value>) -> Option<Vec<String>> {
    let Some(Value::Array(levels)) = hierarchy else {
        return None;
    };
    levels
        .iter()
        .map(|level| match level {
            Value::String(s) if !s.contains("%{") => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// One whole effective datasource, for Hiera 5's `data_hash`: Puppet
/// merges and interpolates itself. Revalidated with its ETag.
async fn datasource(
    State(state): State<AppState>,
    Env(env): Env,
    Rest(resource): Rest,
    Params(query): Params,
    reveal: Reveal,
    // The request itself, for If-None-Match: a `HeaderMap` extractor
    // copies every header (bench/LOG.md, "the fixed cost of a request").
    request: axum::extract::Request,
) -> Result<Response, ApiError> {
    let level = match query.get("level").map(|l| LevelPath::parse_interpolated(l)) {
        None => LevelPath::root(),
        Some(Ok(Interpolated::Path(level))) => level,
        Some(Ok(Interpolated::Unset(names))) => return unset_level(&state, env, &names),
        Some(Err(e)) => return Err(bad(e.to_string())),
    };
    if let Some(pin) = super::pinned::pin_of(&query)? {
        return super::pinned::datasource(&state, pin, env, &level, &resource, &reveal).await;
    }
    let snapshot = state.snapshot();
    let doc = snapshot.try_encoded(env, &level, &resource)?;
    if let Some(plain) = reveal.effective(&doc, None)? {
        return Ok(plain);
    }
    super::encoded::revalidated(&doc, request.headers())
}

/// The data route's answer for a level whose value Puppet interpolated
/// empty: empty data, as over the files, where the path Puppet reads
/// (`nodes/.yaml`) is no file and its lookup goes on to the next level.
/// The environment and the level names are still checked.
fn unset_level(state: &AppState, env: i64, names: &LevelPath) -> Result<Response, ApiError> {
    let snapshot = state.snapshot();
    let Some(environment) = snapshot.environment(env) else {
        return Err(env::missing(env));
    };
    names.check(environment)?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        "{}",
    )
        .into_response())
}

async fn scope(
    State(state): State<AppState>,
    Env(env): Env,
) -> Result<Json<api::ScopeVariables>, ApiError> {
    let snapshot = state.snapshot();
    if snapshot.environment(env).is_none() {
        return Err(env::missing(env));
    }
    Ok(Json(api::ScopeVariables {
        variables: scope_variables(&snapshot, env),
    }))
}

#[cfg(test)]
mod tests;
