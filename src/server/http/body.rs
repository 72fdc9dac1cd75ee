//! Request bodies: JSON in the wire form, or YAML when the client says
//! so, read up to the configured limit.

use crate::hiera::{Value, yaml};
use crate::server::http::cross_site::{Media, SEND_JSON};
use crate::server::http::error::ApiError;
use crate::server::state::AppState;
use crate::wire;
use axum::body::{Body as RawBody, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, EXPECT};
use bytes::BytesMut;
use http_body_util::BodyExt;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A request body read within `--body-limit`, as raw bytes, with its
/// [`BigTurn`]: a handler binds it to a name (not `_`), so that it is
/// held until the request is handled.
pub(crate) struct LimitedBytes(pub(crate) Bytes, pub(crate) BigTurn);

impl FromRequest<AppState> for LimitedBytes {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        json_only(&request)?;
        any(request, state).await
    }
}

/// A body of any type this server reads, within `--body-limit`.
async fn any(request: Request, state: &AppState) -> Result<LimitedBytes, ApiError> {
    let limit = BodyLimit::Any(state.settings().body_limit);
    let (bytes, turn) = read(request, limit, state.big_bodies()).await?;
    Ok(LimitedBytes(bytes, turn))
}

/// Refuses a body declared YAML to a route that reads JSON alone (the
/// other types are refused before routing, `cross_site`).
fn json_only(request: &Request) -> Result<(), ApiError> {
    match request.headers().get(CONTENT_TYPE).and_then(Media::of) {
        Some(Media::Yaml) => Err(ApiError::UnsupportedMediaType(format!(
            "this route takes a JSON body, not YAML (only document writes take YAML); send `{SEND_JSON}`"
        ))),
        _ => Ok(()),
    }
}

/// Bodies over this many bytes are handled one at a time ([`BigTurn`]).
const BIG_BODY: usize = 1024 * 1024;

/// The turn a body over [`BIG_BODY`] bytes holds while its request is
/// handled (smaller ones need none). Such a body is parsed into a tree
/// some 20 to 70 times its size, and the writes it carries wait for one
/// another anyway: one at a time, the server holds one big body's tree
/// (beside its data), however many clients send one at once. Measured:
/// eight 16 MiB documents at once peaked at 2.1 GB, now 0.96 GB; one alone
/// at 0.53 GB. A body waits for its turn once its bytes have arrived,
/// within the request time limit, so a slow upload holds no turn.
#[derive(Debug)]
pub(crate) struct BigTurn {
    /// Held for its drop, which gives the turn back.
    _permit: Option<OwnedSemaphorePermit>,
}

/// A lookup's or a hierarchy registration's body, read within
/// `--lookup-body-limit`: such a body is parsed whole into a tree some 70
/// times its size (measured: a 16 MiB registration of empty levels peaked
/// at 1.2 GB), and any principal that may look up may send one. With its
/// [`BigTurn`], if the limit was raised above [`BIG_BODY`].
pub(crate) struct LookupBytes(pub(crate) Bytes, pub(crate) BigTurn);

impl FromRequest<AppState> for LookupBytes {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        json_only(&request)?;
        let settings = state.settings();
        // Never more than any body may hold: then that limit is the one
        // to name.
        let limit = if settings.lookup_body_limit < settings.body_limit {
            BodyLimit::Lookup(settings.lookup_body_limit)
        } else {
            BodyLimit::Any(settings.body_limit)
        };
        let (bytes, turn) = read(request, limit, state.big_bodies()).await?;
        Ok(LookupBytes(bytes, turn))
    }
}

/// The limit a body is read within, named as the client is told (413).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyLimit {
    /// `--body-limit`: any request's.
    Any(usize),
    /// `--lookup-body-limit`: a lookup's or a hierarchy registration's.
    Lookup(usize),
}

impl BodyLimit {
    fn bytes(self) -> usize {
        match self {
            BodyLimit::Any(bytes) | BodyLimit::Lookup(bytes) => bytes,
        }
    }
}

impl std::fmt::Display for BodyLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes = self.bytes();
        write!(
            f,
            "the request body is larger than the limit of {bytes} bytes"
        )?;
        match self {
            BodyLimit::Any(_) => Ok(()),
            BodyLimit::Lookup(_) => {
                f.write_str(" for lookups and hierarchy registrations (--lookup-body-limit)")
            }
        }
    }
}

/// `request`'s body, whole, if it is within `limit`, and its turn from
/// `big` (one permit) once it has arrived, if it is over [`BIG_BODY`].
async fn read(
    request: Request,
    limit: BodyLimit,
    big: &Arc<Semaphore>,
) -> Result<(Bytes, BigTurn), ApiError> {
    // A client that sent `Expect: 100-continue` (curl does for large
    // bodies, `hierad import` too) waits for the go-ahead before it
    // uploads: a declared length over the limit is refused before the
    // body is touched, so it reads this 413 instead of a connection
    // reset halfway through its upload. Without the header the client
    // is already sending, and reading up to the limit first gives it
    // the best chance to finish writing and read the answer.
    let headers = request.headers();
    let waits = headers
        .get(EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    // The declared length matters only to a client that waits.
    let declared = || {
        headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
    };
    if waits && declared().is_some_and(|len| len > limit.bytes() as u64) {
        return Err(ApiError::TooLarge(limit));
    }
    let bytes = collect(request.into_body(), limit.bytes())
        .await
        .map_err(|e| match e {
            Unread::TooLarge => ApiError::TooLarge(limit),
            // Bad chunked framing, or the client went away.
            Unread::Failed(e) => ApiError::BadRequest(format!("cannot read the request body: {e}")),
        })?;
    if bytes.len() <= BIG_BODY {
        return Ok((bytes, BigTurn { _permit: None }));
    }
    let turn = Arc::clone(big)
        .acquire_owned()
        .await
        .map_err(|e| ApiError::Internal(format!("big body turns closed: {e}")))?;
    Ok((
        bytes,
        BigTurn {
            _permit: Some(turn),
        },
    ))
}

/// Why a body was not read whole.
#[derive(Debug)]
enum Unread {
    /// It is longer than the limit.
    TooLarge,
    /// Its framing is broken, or the client went away.
    Failed(axum::Error),
}

/// The body's bytes within `limit`: what `axum::body::to_bytes` does,
/// without its `Limited`, `MapErr` and `Collect` layers and their buffer
/// list (2,560 instructions of a cached lookup, bench/LOG.md "Where a
/// cached lookup's instructions go"). A body that arrives in one piece (a
/// lookup's, nearly always) is that piece, not a copy. Each piece is
/// counted before it is kept, so no more than `limit` bytes are ever held.
async fn collect(mut body: RawBody, limit: usize) -> Result<Bytes, Unread> {
    let mut first = Bytes::new();
    let mut joined: Option<BytesMut> = None;
    let mut total = 0usize;
    while let Some(frame) = body.frame().await {
        // Trailers carry no body bytes.
        let Ok(piece) = frame.map_err(Unread::Failed)?.into_data() else {
            continue;
        };
        total = total.saturating_add(piece.len());
        if total > limit {
            return Err(Unread::TooLarge);
        }
        if piece.is_empty() {
            continue;
        }
        match &mut joined {
            Some(joined) => joined.extend_from_slice(&piece),
            None if first.is_empty() => first = piece,
            None => {
                let mut both = BytesMut::with_capacity(first.len() + piece.len());
                both.extend_from_slice(&first);
                both.extend_from_slice(&piece);
                joined = Some(both);
            }
        }
        // A body whose declared length has arrived is whole: asked again,
        // hyper's channel answers only once its connection has seen the
        // end, often a turn of the scheduler later.
        if axum::body::HttpBody::is_end_stream(&body) {
            break;
        }
    }
    Ok(joined.map_or(first, BytesMut::freeze))
}

/// A request body parsed into a value: YAML for `application/yaml` (or
/// `text/yaml`, `application/x-yaml`, `text/x-yaml`), wire JSON otherwise; with its [`BigTurn`], taken before
/// the parse.
pub(crate) struct Body(pub(crate) Value, pub(crate) BigTurn);

impl FromRequest<AppState> for Body {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        let is_yaml = request.headers().get(CONTENT_TYPE).and_then(Media::of) == Some(Media::Yaml);
        let LimitedBytes(bytes, turn) = any(request, state).await?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| ApiError::BadRequest("the request body is not UTF-8".to_owned()))?;
        if is_yaml {
            yaml::load(text)
                .map(|value| Body(value, turn))
                .map_err(|e| ApiError::BadRequest(format!("malformed YAML: {}", e.message)))
        } else {
            wire::from_str(text)
                .map(|value| Body(value, turn))
                .map_err(|e| ApiError::BadRequest(e.to_string()))
        }
    }
}

/// The body as a document: it must be a Hash (a JSON object).
pub(crate) fn document(value: Value) -> Result<crate::hiera::Hash, ApiError> {
    match value {
        Value::Hash(h) => Ok(h),
        other => Err(ApiError::BadRequest(format!(
            "a document must be a JSON object, not {}",
            describe(&other)
        ))),
    }
}

/// How a value is named in messages about the request.
pub(crate) fn describe(v: &Value) -> &'static str {
    match v {
        Value::Nil => "null",
        Value::Bool(_) => "a boolean",
        Value::Int(_) | Value::BigInt(_) | Value::Float(_) => "a number",
        Value::String(_) | Value::Symbol(_) => "a string",
        Value::Array(_) => "an array",
        Value::Hash(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::HttpBody;
    use hyper::body::Frame;
    use std::collections::VecDeque;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A body that arrives in the given pieces.
    struct Pieces(VecDeque<Bytes>);

    impl HttpBody for Pieces {
        type Data = Bytes;
        type Error = axum::BoxError;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
            Poll::Ready(self.0.pop_front().map(|piece| Ok(Frame::data(piece))))
        }
    }

    fn collected(pieces: &[&'static str], limit: usize) -> Result<Bytes, Unread> {
        let body = RawBody::new(Pieces(
            pieces
                .iter()
                .map(|p| Bytes::from_static(p.as_bytes()))
                .collect(),
        ));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(collect(body, limit))
    }

    #[test]
    fn pieces_are_joined_and_one_piece_is_kept_as_it_came() {
        let one = "{\"environment\":1}";
        let whole = collected(&[one], 100).unwrap();
        assert_eq!(whole, one);
        // The very bytes received, not a copy.
        assert_eq!(whole.as_ptr(), one.as_ptr());
        for pieces in [
            &["{\"a\"", ":", "1}"][..],
            &["", "{\"a\":1}", ""],
            &["{\"a\":", "", "1}"],
            &["{", "\"a\":1", "}"],
        ] {
            assert_eq!(collected(pieces, 100).unwrap(), "{\"a\":1}", "{pieces:?}");
        }
        assert_eq!(collected(&[], 100).unwrap(), "");
        assert_eq!(collected(&["", ""], 100).unwrap(), "");
    }

    #[test]
    fn a_body_over_the_limit_is_refused_in_one_piece_or_several() {
        for pieces in [&["0123456789a"][..], &["01234", "56789", "a"]] {
            let e = collected(pieces, 10).unwrap_err();
            assert!(matches!(e, Unread::TooLarge), "{pieces:?}: {e:?}");
        }
        assert_eq!(collected(&["01234", "56789"], 10).unwrap(), "0123456789");
    }

    fn of_len(len: usize) -> Request {
        Request::new(RawBody::from(vec![b'x'; len]))
    }

    /// A body over [`BIG_BODY`] bytes waits for the one turn once it has
    /// arrived and holds it until its [`BigTurn`] is dropped; a smaller one
    /// never waits.
    #[test]
    fn big_bodies_take_turns() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let big = Arc::new(Semaphore::new(1));
            let limit = BodyLimit::Any(4 * BIG_BODY);
            let (_, first) = read(of_len(BIG_BODY + 1), limit, &big).await.unwrap();
            assert_eq!(big.available_permits(), 0);
            let (small, _) = read(of_len(BIG_BODY), limit, &big).await.unwrap();
            assert_eq!(small.len(), BIG_BODY);
            let second = tokio::spawn({
                let big = Arc::clone(&big);
                async move {
                    let (bytes, _turn) = read(of_len(BIG_BODY + 1), limit, &big).await?;
                    Ok::<_, ApiError>(bytes.len())
                }
            });
            // One thread: the second runs whenever this one yields.
            for _ in 0..100 {
                tokio::task::yield_now().await;
            }
            assert!(!second.is_finished(), "a second big body did not wait");
            drop(first);
            assert_eq!(second.await.unwrap().unwrap(), BIG_BODY + 1);
            assert_eq!(big.available_permits(), 1, "the turn was not given back");
        });
    }
}
