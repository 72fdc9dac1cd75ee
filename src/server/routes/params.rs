//! A request's query parameters, read strictly: a `%` that is not a
//! percent-escape, bytes that are not UTF-8 once decoded, or a parameter
//! given twice are refused (400) rather than guessed at. axum's `Query`
//! kept a bad escape as it was (`?key=%zz` looked for a key `%zz`) and the
//! last of two values (`?version=1&version=2` restored version 2).

use crate::server::http::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;

/// Parameters by name, in the order given. A list, not a hash map: a
/// query holds a few short names, and hashing each name to insert it
/// and again to look it up cost more than comparing it with the others
/// (bench/LOG.md, "The access lines written in batches"). A query holds
/// at most [`MAX_PARAMS`] of them.
#[derive(Debug, Default)]
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    /// The value of parameter `name`, if given.
    pub(crate) fn get(&self, name: &str) -> Option<&String> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    pub(crate) fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
impl std::ops::Index<&str> for Query {
    type Output = String;
    fn index(&self, name: &str) -> &String {
        self.get(name).expect("no such parameter")
    }
}

/// The query's parameters by name (`application/x-www-form-urlencoded`:
/// `+` is a space). A name without `=` has the empty value.
#[derive(Debug, Default)]
pub(crate) struct Params(pub(crate) Query);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parse(parts.uri.query().unwrap_or_default()).map(Params)
    }
}

/// A boolean query parameter: absent, `true` or `false`.
pub(crate) fn flag(query: &Query, name: &str) -> Result<bool, ApiError> {
    match query.get(name).map(String::as_str) {
        None | Some("false") => Ok(false),
        Some("true" | "") => Ok(true),
        Some(other) => Err(ApiError::BadRequest(format!(
            "{name} must be true or false, not {other:?}"
        ))),
    }
}

/// The most parameters a query may give: each is compared with those
/// before it, and no route takes a tenth of this many.
pub(crate) const MAX_PARAMS: usize = 64;

/// The parameters of `query` (without its `?`).
///
/// # Errors
///
/// A part that does not decode, a name given twice, more than
/// [`MAX_PARAMS`] parameters.
pub(crate) fn parse(query: &str) -> Result<Query, ApiError> {
    let mut params = Query::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        if params.0.len() == MAX_PARAMS {
            return Err(ApiError::BadRequest(format!(
                "the query has more than {MAX_PARAMS} parameters; no route takes that many"
            )));
        }
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = decode(name, || "a query parameter's name".to_owned())?;
        let value = decode(value, || format!("query parameter {name:?}"))?;
        if params.contains_key(&name) {
            return Err(ApiError::BadRequest(format!(
                "query parameter {name:?} is given twice; give it once"
            )));
        }
        params.0.push((name, value));
    }
    Ok(params)
}

/// `part` percent-decoded; `what` it is, for the refusal (named only
/// then: formatted for every parameter, it cost 490 instructions a
/// request, bench/LOG.md).
fn decode(part: &str, what: impl Fn() -> String) -> Result<String, ApiError> {
    let bytes = part.as_bytes();
    // Most parts have nothing to decode: copied whole, not byte by byte.
    if !bytes.iter().any(|b| matches!(b, b'%' | b'+')) {
        return Ok(part.to_owned());
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'+' => out.push(b' '),
            b'%' => {
                let escape = bytes
                    .get(at + 1..at + 3)
                    .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
                    .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
                let Some(byte) = escape else {
                    let shown: String = part[at..].chars().take(3).collect();
                    return Err(ApiError::BadRequest(format!(
                        "{} does not decode: {shown:?} is not a percent-escape (% and two hex digits; a % itself is %25)",
                        what()
                    )));
                };
                out.push(byte);
                at += 2;
            }
            byte => out.push(byte),
        }
        at += 1;
    }
    String::from_utf8(out).map_err(|_| {
        ApiError::BadRequest(format!(
            "{} does not decode: its escapes are not UTF-8",
            what()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(query: &str) -> String {
        match parse(query) {
            Err(ApiError::BadRequest(m)) => m,
            other => panic!("{query}: {other:?}"),
        }
    }

    #[test]
    fn parameters_decode_as_forms_do() {
        let params = parse("key=a%2Eb+c&effective&version=3&&x=%C3%A9").unwrap();
        assert_eq!(params["key"], "a.b c");
        assert_eq!(params["effective"], "");
        assert_eq!(params["version"], "3");
        assert_eq!(params["x"], "é");
        assert!(parse("").unwrap().is_empty());
    }

    #[test]
    fn what_does_not_decode_or_repeats_is_refused() {
        assert!(
            refusal("key=%zz").contains(
                "query parameter \"key\" does not decode: \"%zz\" is not a percent-escape"
            )
        );
        assert!(refusal("key=ab%").contains("\"%\" is not a percent-escape"));
        assert!(refusal("%zz").contains("a query parameter's name does not decode"));
        assert!(refusal("key=%ff").contains("not UTF-8"));
        assert!(refusal("version=1&version=2").contains("\"version\" is given twice"));
        assert!(refusal("effective&effective=false").contains("given twice"));
        // An escaped name is the same name.
        assert!(refusal("key=a&k%65y=b").contains("given twice"));
    }

    #[test]
    fn a_query_of_more_parameters_than_any_route_takes_is_refused() {
        let most: Vec<String> = (0..MAX_PARAMS).map(|n| format!("p{n}=v")).collect();
        let params = parse(&most.join("&")).unwrap();
        assert_eq!(params.get("p63").map(String::as_str), Some("v"));
        assert!(params.get("p64").is_none());
        let over = format!("{}&p{MAX_PARAMS}", most.join("&"));
        assert!(refusal(&over).contains("more than 64 parameters"));
        // Empty parts are no parameters.
        assert!(parse(&format!("{}{}", most.join("&"), "&".repeat(1000))).is_ok());
    }
}
