//! A request head moved out of hyper's read buffer, for [`super::Tracked`].
//!
//! hyper parses a head in place: the request target and every header
//! value are slices of the connection's 8 KiB read buffer, which cannot be
//! reused while one of them lives. hyper reads on while a request is
//! answered (to see the client hang up), so with the head still alive it
//! allocates a second 8 KiB buffer. A long poll keeps its request alive
//! for its whole wait: every change-feed waiter held two read buffers
//! (heaptrack, bench/LOG.md). One copy of the head's few hundred bytes,
//! made before the router sees the request, leaves the buffer to hyper.
//! Only the change feed's heads are copied: for a request answered at
//! once the second buffer lives as briefly as the request, and the copy
//! cost every request 1,300-1,800 instructions (bench/instructions.sh).

use bytes::{Bytes, BytesMut};
use hyper::Request;
use hyper::http::{HeaderValue, Uri};

/// Whether a request to `uri` may wait for long: a change-feed long
/// poll or event stream (`routes/changes.rs`).
pub(super) fn may_wait(uri: &Uri) -> bool {
    uri.path() == crate::api::paths::CHANGES
}

/// Replaces `request`'s target and header values with copies that share
/// nothing with the buffer they were parsed from. A value that would not
/// parse again (none that hyper accepted) is left as it is.
pub(super) fn detach<B>(request: &mut Request<B>) {
    if let Ok(uri) = Uri::try_from(request.uri().to_string()) {
        *request.uri_mut() = uri;
    }
    let headers = request.headers_mut();
    let mut copy = BytesMut::with_capacity(headers.values().map(HeaderValue::len).sum());
    for value in headers.values() {
        copy.extend_from_slice(value.as_bytes());
    }
    let copy: Bytes = copy.freeze();
    let mut at = 0;
    // `values` and `values_mut` walk the map in the same order.
    for value in headers.values_mut() {
        let end = at + value.len();
        if let Ok(mut fresh) = HeaderValue::from_maybe_shared(copy.slice(at..end)) {
            fresh.set_sensitive(value.is_sensitive());
            *value = fresh;
        }
        at = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::http::header::{AUTHORIZATION, HOST};

    #[test]
    fn a_detached_request_holds_nothing_of_the_buffer_it_was_parsed_from() {
        // As hyper parses it: the target and the values slice one buffer.
        let target = "/api/v1/changes?since=4&wait=25";
        let buffer = Bytes::from(format!("{target}localhost:8080Bearer t0ken").into_bytes());
        let (t, h) = (target.len(), target.len() + "localhost:8080".len());
        let mut request = Request::new(());
        *request.uri_mut() = Uri::from_maybe_shared(buffer.slice(..t)).unwrap();
        let headers = request.headers_mut();
        headers.insert(
            HOST,
            HeaderValue::from_maybe_shared(buffer.slice(t..h)).unwrap(),
        );
        let mut token = HeaderValue::from_maybe_shared(buffer.slice(h..)).unwrap();
        token.set_sensitive(true);
        headers.append(AUTHORIZATION, token);
        headers.append(HOST, HeaderValue::from_static("second"));
        assert!(!buffer.is_unique(), "the request does not share the buffer");

        detach(&mut request);

        assert!(buffer.is_unique(), "the request still holds the buffer");
        assert_eq!(request.uri(), target);
        let hosts: Vec<_> = request.headers().get_all(HOST).iter().collect();
        assert_eq!(hosts, ["localhost:8080", "second"]);
        let token = &request.headers()[AUTHORIZATION];
        assert_eq!(token, "Bearer t0ken");
        assert!(token.is_sensitive());
    }

    #[test]
    fn only_the_change_feed_may_wait() {
        assert!(may_wait(&Uri::from_static(
            "/api/v1/changes?since=4&wait=25"
        )));
        assert!(!may_wait(&Uri::from_static("/api/v1/lookup")));
        assert!(!may_wait(&Uri::from_static("/api/v1/changes/x")));
    }

    #[test]
    fn an_absolute_target_keeps_its_parts() {
        let mut request = Request::new(());
        *request.uri_mut() =
            Uri::from_maybe_shared(Bytes::from_static(b"http://example.com:8080/healthz?x=1"))
                .unwrap();
        detach(&mut request);
        let uri = request.uri();
        assert_eq!(uri.scheme_str(), Some("http"));
        assert_eq!(
            uri.authority().map(|a| a.as_str()),
            Some("example.com:8080")
        );
        assert_eq!(uri.path(), "/healthz");
        assert_eq!(uri.query(), Some("x=1"));
    }
}
