//! The change feed, `GET /api/v1/changes?since=G[&wait=S][&env=E]`: what
//! the change log holds past generation G (`Store::logged_since`, read
//! and encoded once per generation for every request, `state/feed.rs`), of the
//! environments the principal may use. Nothing yet: it waits up to `wait`
//! seconds for the next publish (the generation watch every write and
//! catch-up bumps, `state/mod.rs`), a long poll; with `Accept:
//! text/event-stream` it streams every change as one event. Waiters are
//! bounded (`--max-change-waiters`); one whose client hangs up is
//! dropped with its turn.

use super::env;
use super::params::{Params, Query};
use crate::api::impact::{Change, Changes};
use crate::auth::Principal;
use crate::server::http::error::ApiError;
use crate::server::state::AppState;
use crate::server::state::feed::{Answer, LogPage, PAGE};
use crate::store::Logged;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use bytes::Bytes;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// The change feed's route, with its full path.
pub(crate) fn routes() -> Router<AppState> {
    Router::new().route(crate::api::paths::CHANGES, get(changes))
}

/// The longest `wait=`, in seconds.
const MAX_WAIT: u64 = 60;

/// How often an event stream sends a comment, so proxies and the
/// server's own idle timeouts see it alive.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// What a request asks.
#[derive(Clone)]
struct Asked {
    since: u64,
    wait: Duration,
    env: Option<i64>,
    who: Option<Principal>,
}

fn number(query: &Query, name: &str) -> Result<Option<u64>, ApiError> {
    query
        .get(name)
        .map(|v| {
            v.parse().map_err(|_| {
                ApiError::BadRequest(format!(
                    "{name} must be a number, not {:?}",
                    crate::configdb::Truncated(v, 32).to_string()
                ))
            })
        })
        .transpose()
}

fn asked_of(
    query: &Query,
    who: Option<Principal>,
    request_timeout: Duration,
) -> Result<Asked, ApiError> {
    let since = number(query, "since")?.ok_or_else(|| {
        ApiError::BadRequest(
            "the change feed needs since=GENERATION (0: from the log's start)".to_owned(),
        )
    })?;
    let wait = number(query, "wait")?.unwrap_or(0);
    if wait > MAX_WAIT {
        return Err(ApiError::BadRequest(format!(
            "wait is at most {MAX_WAIT} seconds, not {wait}"
        )));
    }
    // Answered before the request time limit would cut it (408).
    let wait =
        Duration::from_secs(wait).min(request_timeout.saturating_sub(Duration::from_secs(1)));
    let env = match query.get("env") {
        None => None,
        Some(text) => {
            let id = text.parse::<i64>().map_err(|_| {
                ApiError::BadRequest(format!(
                    "env must be an environment id, not {:?}",
                    crate::configdb::Truncated(text, 32).to_string()
                ))
            })?;
            Some(env::permitted(who.as_ref(), id)?)
        }
    };
    Ok(Asked {
        since,
        wait,
        env,
        who,
    })
}

/// One log entry as the API shows it.
fn change(l: &Logged) -> Change {
    // A scope row names its node's register level and the node.
    let scope = l.kind == crate::store::SCOPE;
    let level = match (l.resource.is_some() || scope, l.level.is_empty()) {
        (true, false) => format!("{}/{}", l.level, l.value),
        _ => l.level.clone(),
    };
    Change {
        generation: l.generation,
        environment: l.env,
        level,
        resource: l.resource.clone(),
        kind: l.kind.clone(),
        node: scope.then_some(l.value.clone()),
        version: l.version,
        author: l.author.clone(),
        created_at: l.created_at,
    }
}

/// The changes of `page` that `asked` may see, with the generation to
/// ask from next: the newest, or where a full page ended (a generation
/// is never split between two answers unless it alone fills a page).
fn changes_in(page: &LogPage, asked: &Asked) -> Changes {
    let (newest, logged) = (page.newest, &page.logged);
    let mut generation = newest;
    let mut before = u64::MAX;
    if logged.len() == PAGE {
        let last = logged.last().map_or(newest, |l| l.generation);
        if logged.first().is_some_and(|l| l.generation < last) {
            before = last;
            generation = last - 1;
        } else {
            generation = last;
        }
    }
    let changes = logged
        .iter()
        .filter(|l| l.generation < before)
        .filter(|l| asked.env.is_none_or(|e| e == l.env))
        .filter(|l| asked.who.as_ref().is_none_or(|who| who.may_use(l.env)))
        .map(change)
        .collect();
    Changes {
        generation,
        changes,
    }
}

/// The changes past `asked.since` that `asked` may see.
async fn read(state: &AppState, asked: &Asked) -> Result<Changes, ApiError> {
    let page = state.logged_since(asked.since).await?;
    Ok(changes_in(&page, asked))
}

/// [`read`] as a response body, encoded once for every request that
/// reads the same page and sees the same part of it: a publish answers
/// thousands of waiters with one encoding.
async fn answer(state: &AppState, asked: &Asked) -> Result<Arc<Answer>, ApiError> {
    let page = state.logged_since(asked.since).await?;
    let seen = (
        asked.env,
        asked.who.as_ref().and_then(|w| w.environments.clone()),
    );
    Ok(page.answer(seen, |page| {
        let changes = changes_in(page, asked);
        Answer {
            generation: changes.generation,
            empty: changes.changes.is_empty(),
            // Numbers and strings only: nothing in it can fail to encode.
            body: Bytes::from(serde_json::to_vec(&changes).expect("a Changes encodes")),
        }
    }))
}

fn respond(answer: &Answer) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        answer.body.clone(),
    )
        .into_response()
}

async fn changes(
    State(state): State<AppState>,
    who: Option<Principal>,
    Params(query): Params,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let asked = asked_of(&query, who, state.settings().request_timeout)?;
    let streams = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"));
    // Not held while waiting: thousands of waiters each kept a copy.
    drop((query, headers));
    if streams {
        return stream(state, asked);
    }
    // Subscribed before the first read: a publish in between still wakes.
    let mut published = state.published();
    published.borrow_and_update();
    let first = answer(&state, &asked).await?;
    if !first.empty || asked.wait.is_zero() {
        return Ok(respond(&first));
    }
    let _turn = state.change_waiter()?;
    let deadline = tokio::time::Instant::now() + asked.wait;
    let mut asked = asked;
    asked.since = first.generation;
    drop(first);
    // Until the wait is over, or the server shuts down.
    loop {
        let woke = tokio::select! {
            woke = tokio::time::timeout_at(deadline, published.changed()) => woke,
            () = state.closed() => break,
        };
        if !matches!(woke, Ok(Ok(()))) {
            break;
        }
        let now = answer(&state, &asked).await?;
        if !now.empty {
            return Ok(respond(&now));
        }
        asked.since = now.generation;
    }
    Ok(Json(Changes {
        generation: asked.since,
        changes: Vec::new(),
    })
    .into_response())
}

/// What an event stream carries from one poll to the next.
struct Streaming {
    state: AppState,
    asked: Asked,
    published: tokio::sync::watch::Receiver<u64>,
    pending: VecDeque<Change>,
    _turn: tokio::sync::OwnedSemaphorePermit,
}

/// Every change past `asked.since`, then each as it is published: one
/// event each (`id:` its generation, `data:` the change).
fn stream(state: AppState, asked: Asked) -> Result<Response, ApiError> {
    let turn = state.change_waiter()?;
    let mut published = state.published();
    published.borrow_and_update();
    let start = Streaming {
        state,
        asked,
        published,
        pending: VecDeque::new(),
        _turn: turn,
    };
    let events = futures_util::stream::unfold(start, |mut s| async move {
        loop {
            if let Some(c) = s.pending.pop_front() {
                let event = Event::default()
                    .id(c.generation.to_string())
                    .json_data(&c)
                    .unwrap_or_else(|_| Event::default().comment("unencodable change"));
                return Some((Ok::<_, Infallible>(event), s));
            }
            let Ok(read) = read(&s.state, &s.asked).await else {
                return None;
            };
            s.asked.since = read.generation;
            s.pending.extend(read.changes);
            if s.pending.is_empty() {
                let woke = tokio::select! {
                    woke = s.published.changed() => woke.is_ok(),
                    () = s.state.closed() => false,
                };
                if !woke {
                    return None;
                }
            }
        }
    });
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response())
}
