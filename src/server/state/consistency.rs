//! Consistency a client can ask for (docs/api.md): every answer says which
//! generation it reflects (`X-Hierad-Generation`), and a request may name
//! the least generation it accepts (`X-Hierad-Min-Generation: N` or
//! `?min_generation=N`): it then waits, bounded, until this replica has
//! published it. A client that wrote through one replica reads its write
//! on any other by passing on the generation the write answered.

use crate::server::http::error::ApiError;
use crate::server::state::AppState;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method};
use axum::response::Response;

/// The generation an answer reflects: for a read, at least the data it
/// was answered from; for a write, at or past the write's own.
pub(crate) const GENERATION: &str = "x-hierad-generation";
/// The least generation a request accepts.
pub(crate) const MIN_GENERATION: &str = "x-hierad-min-generation";
/// [`GENERATION`] and [`MIN_GENERATION`] as header names, made once: a
/// `&str` name is parsed and checked again at every use.
static GENERATION_NAME: HeaderName = HeaderName::from_static(GENERATION);
static MIN_GENERATION_NAME: HeaderName = HeaderName::from_static(MIN_GENERATION);
/// The version a document write made, or a document read holds; what a
/// conditional write names in `If-Match`.
pub(crate) const VERSION: &str = "x-hierad-version";

/// What a request's answer is stamped with: the generation taken before
/// a read's snapshot, or, for a write, the one published after it.
pub(crate) struct Stamp {
    /// The least generation the request accepts.
    wanted: Option<u64>,
    read: bool,
    /// The generation when the request's wait ended.
    before: u64,
}

impl Stamp {
    /// What `request` asks for (400 for a malformed minimum generation).
    pub(crate) fn asked(request: &Request) -> Result<Stamp, ApiError> {
        let wanted = min_generation(request.headers(), request.uri().query())?;
        // A hierarchy's registration writes no data: stamped as a read.
        let path = request.uri().path();
        let read = matches!(*request.method(), Method::GET | Method::HEAD)
            || path.starts_with(crate::api::paths::LOOKUP)
            || path == crate::api::paths::HIERARCHIES;
        Ok(Stamp {
            wanted,
            read,
            before: 0,
        })
    }

    /// Waits for the generation the request named, if any; then notes
    /// the generation a read answers from (it takes its snapshot after
    /// this).
    pub(crate) async fn wait(mut self, state: &AppState) -> Result<Stamp, ApiError> {
        if let Some(wanted) = self.wanted {
            state.wait_for(wanted).await?;
        }
        self.before = state.generation();
        Ok(self)
    }

    /// Stamps the generation on `response` (a write publishes before it
    /// answers).
    pub(crate) fn put(self, state: &AppState, response: &mut Response) {
        let generation = if self.read {
            self.before
        } else {
            state.generation()
        };
        response
            .headers_mut()
            .insert(GENERATION_NAME.clone(), generation_value(generation));
    }
}

/// `generation` as a header value: made once per generation and thread,
/// then shared (formatting it allocated, per request).
fn generation_value(generation: u64) -> HeaderValue {
    thread_local! {
        static MADE: std::cell::RefCell<(u64, HeaderValue)> =
            const { std::cell::RefCell::new((0, HeaderValue::from_static("0"))) };
    }
    MADE.with(|made| {
        let mut made = made.borrow_mut();
        if made.0 != generation {
            *made = (generation, HeaderValue::from(generation));
        }
        made.1.clone()
    })
}

/// The minimum generation from the header or the query: the largest of
/// all they name, a header sent twice included: the first alone would
/// quietly accept an answer older than a later one asks for.
fn min_generation(headers: &HeaderMap, query: Option<&str>) -> Result<Option<u64>, ApiError> {
    let parse = |text: &str, from: &str| {
        text.trim().parse::<u64>().map_err(|_| {
            ApiError::BadRequest(format!(
                "{from} must be a generation number (what X-Hierad-Generation answered), not {:?}",
                truncate(text)
            ))
        })
    };
    let mut wanted: Option<u64> = None;
    for value in headers.get_all(&MIN_GENERATION_NAME) {
        let text = value
            .to_str()
            .map_err(|_| ApiError::BadRequest(format!("{MIN_GENERATION} must be a number")))?;
        wanted = wanted.max(Some(parse(text, MIN_GENERATION)?));
    }
    for pair in query.unwrap_or_default().split('&') {
        if let Some(text) = pair.strip_prefix("min_generation=") {
            wanted = wanted.max(Some(parse(text, "min_generation")?));
        }
    }
    Ok(wanted)
}

/// The version an `If-Match` header names (`3` or `"3"`), if any.
///
/// # Errors
///
/// The header is not one version number.
pub(crate) fn if_match(headers: &HeaderMap) -> Result<Option<u64>, ApiError> {
    let Some(value) = headers.get(axum::http::header::IF_MATCH) else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or_default().trim();
    let number = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    number.parse().map(Some).map_err(|_| {
        ApiError::BadRequest(format!(
            "If-Match must name one document version (a number, as X-Hierad-Version answers; 0: not written yet), not {:?}",
            truncate(text)
        ))
    })
}

fn truncate(text: &str) -> String {
    text.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_static(v));
        }
        map
    }

    /// Each generation's own value, whichever came before on the thread.
    #[test]
    fn generation_values_follow_the_generation() {
        for generation in [0, 7, 7, 8, 0, u64::MAX, 12] {
            assert_eq!(
                generation_value(generation),
                generation.to_string().as_str()
            );
        }
    }

    #[test]
    fn minimum_generations_from_the_header_and_the_query() {
        let none = headers(&[]);
        assert_eq!(min_generation(&none, None).unwrap(), None);
        assert_eq!(min_generation(&none, Some("level=x")).unwrap(), None);
        assert_eq!(
            min_generation(&none, Some("a=1&min_generation=7")).unwrap(),
            Some(7)
        );
        let h = headers(&[(MIN_GENERATION, " 9 ")]);
        assert_eq!(min_generation(&h, None).unwrap(), Some(9));
        assert_eq!(
            min_generation(&h, Some("min_generation=12")).unwrap(),
            Some(12)
        );
        assert_eq!(
            min_generation(&h, Some("min_generation=3")).unwrap(),
            Some(9)
        );
        // Sent twice, or a list: the largest of all, wherever it is.
        let mut twice = headers(&[(MIN_GENERATION, "3")]);
        twice.append(MIN_GENERATION, HeaderValue::from_static("11"));
        assert_eq!(min_generation(&twice, None).unwrap(), Some(11));
        assert_eq!(
            min_generation(&twice, Some("min_generation=5&min_generation=2")).unwrap(),
            Some(11)
        );
        twice.append(MIN_GENERATION, HeaderValue::from_static("x"));
        assert!(min_generation(&twice, None).is_err());
        for (h, q) in [
            (headers(&[(MIN_GENERATION, "soon")]), None),
            (none.clone(), Some("min_generation=-1")),
            (none.clone(), Some("min_generation=")),
        ] {
            match min_generation(&h, q) {
                Err(ApiError::BadRequest(m)) => assert!(m.contains("generation number"), "{m}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn if_match_takes_one_version_quoted_or_not() {
        assert_eq!(if_match(&headers(&[])).unwrap(), None);
        assert_eq!(if_match(&headers(&[("if-match", "3")])).unwrap(), Some(3));
        assert_eq!(
            if_match(&headers(&[("if-match", "\"0\"")])).unwrap(),
            Some(0)
        );
        for bad in ["*", "W/\"3\"", "\"3\", \"4\"", ""] {
            let mut h = HeaderMap::new();
            h.insert("if-match", HeaderValue::from_str(bad).unwrap());
            match if_match(&h) {
                Err(ApiError::BadRequest(m)) => assert!(m.contains("one document version"), "{m}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }
}
