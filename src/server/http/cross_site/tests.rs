use super::*;
use crate::server::http::guard::Peer;

#[test]
fn authorities_split_into_host_and_port() {
    for (text, want) in [
        ("localhost", Some(("localhost", None))),
        ("localhost:8750", Some(("localhost", Some(8750)))),
        ("127.0.0.1:1", Some(("127.0.0.1", Some(1)))),
        ("[::1]:8750", Some(("[::1]", Some(8750)))),
        ("[::1]", Some(("[::1]", None))),
        ("Hierad.Example.com.", Some(("Hierad.Example.com.", None))),
        ("", None),
        (":80", None),
        ("x:", None),
        ("x:+80", None),
        ("x:65536", None),
        ("x:80:80", None),
        ("[::1", None),
        ("[nope]:80", None),
        ("[::1]x", None),
        ("a b", None),
        ("user@evil.example", None),
        ("x/y", None),
    ] {
        assert_eq!(split_authority(text), want, "{text:?}");
    }
}

/// A connection's known Host spares the parse of the same value only:
/// another Host on the same connection is checked, a refused one is
/// never known, and a Host known against other allowed names is
/// checked again.
#[test]
fn a_connections_known_host_is_the_allowed_value_alone() {
    let allowed = AllowedHosts::new(vec!["hierad.example.com".to_owned()]);
    let peer = Peer::new("127.0.0.1:4000".parse().unwrap(), None, false, None);
    let check_on = |peer: &Peer, allowed: &AllowedHosts, host: &str| {
        let mut request = Request::new(axum::body::Body::empty());
        request
            .headers_mut()
            .insert(header::HOST, HeaderValue::from_str(host).unwrap());
        request.extensions_mut().insert(Asker::new(peer.clone()));
        check(&request, allowed).map_err(|e| e.into_response().status().as_u16())
    };
    assert_eq!(check_on(&peer, &allowed, "evil.example"), Err(421));
    assert!(
        !peer
            .known_host
            .knows(&HeaderValue::from_static("evil.example"), &allowed)
    );
    for _ in 0..2 {
        assert_eq!(check_on(&peer, &allowed, "hierad.example.com:8080"), Ok(()));
        assert_eq!(check_on(&peer, &allowed, "evil.example"), Err(421));
        assert_eq!(check_on(&peer, &allowed, "evil.example:8080"), Err(421));
    }
    let known = HeaderValue::from_static("hierad.example.com:8080");
    assert!(peer.known_host.knows(&known, &allowed));
    let fewer = AllowedHosts::new(Vec::new());
    assert!(!peer.known_host.knows(&known, &fewer));
    assert_eq!(check_on(&peer, &fewer, "hierad.example.com:8080"), Err(421));
}

#[test]
fn ip_addresses_localhost_and_allowed_names_are_allowed() {
    let allowed = AllowedHosts::new(vec!["Hierad.Example.com".to_owned()]);
    for host in [
        "127.0.0.1",
        "10.1.2.3",
        "0.0.0.0",
        "[::1]",
        "[fe80::1]",
        "localhost",
        "LOCALHOST",
        "localhost.",
        "hierad.example.com",
        "HIERAD.example.COM.",
    ] {
        assert!(allowed.allows(host), "{host}");
    }
    for host in [
        "evil.example",
        "localhost.evil.example",
        "127.0.0.1.nip.io",
        "example.com",
        "x",
        "127.1",
    ] {
        assert!(!allowed.allows(host), "{host}");
    }
}

#[test]
fn allowed_host_values_are_names_alone() {
    assert_eq!(
        parse_allowed_host("hierad.example.com.").unwrap(),
        "hierad.example.com"
    );
    assert_eq!(parse_allowed_host("hierad").unwrap(), "hierad");
    for (bad, says) in [
        ("https://hierad.example.com", "is a URL"),
        ("hierad.example.com/", "is a URL"),
        ("hierad.example.com:443", "has a port"),
        ("", "not a host name"),
        ("a..b", "not a host name"),
        ("*.example.com", "not a host name"),
        ("a b", "not a host name"),
    ] {
        let e = parse_allowed_host(bad).unwrap_err();
        assert!(e.contains(says), "{bad:?}: {e}");
    }
}

#[test]
fn media_types_are_read_by_their_essence() {
    for (value, want) in [
        ("application/json", Some(Media::Json)),
        ("Application/JSON; charset=utf-8", Some(Media::Json)),
        ("application/yaml", Some(Media::Yaml)),
        ("text/yaml", Some(Media::Yaml)),
        ("application/x-yaml", Some(Media::Yaml)),
        ("text/plain", None),
        ("text/plain; x=application/json", None),
        ("application/x-www-form-urlencoded", None),
        ("multipart/form-data; boundary=x", None),
        ("application/jsonp", None),
        ("", None),
    ] {
        assert_eq!(
            Media::of(&HeaderValue::from_static(value)),
            want,
            "{value:?}"
        );
    }
}

/// The status and error kind of `request` answered by the whole
/// application (no environment exists: a request let through ends 404
/// or 400 in its handler, or 200 for `/healthz`).
fn answer(
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &'static str,
) -> (u16, String, String, HeaderMap) {
    let settings = crate::settings::Settings {
        allowed_hosts: AllowedHosts::new(vec!["hierad.example.com".to_owned()]),
        ..crate::settings::Settings::default()
    };
    let state = crate::server::AppState::in_memory(settings).unwrap();
    let mut request = axum::http::Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(axum::body::Body::from(body)).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let response = tower::ServiceExt::oneshot(crate::server::app(state), request)
            .await
            .unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let kind = body["error"].as_str().unwrap_or_default().to_owned();
        let message = body["message"].as_str().unwrap_or_default().to_owned();
        (status, kind, message, headers)
    })
}

const LOOKUP: &str = "/api/v1/lookup";
const ASK: &str = r#"{"environment": 9, "key": "k"}"#;
const HOST: (&str, &str) = ("host", "localhost:8750");
const JSON: (&str, &str) = ("content-type", "application/json");

#[test]
fn bodies_must_be_declared_json_or_yaml() {
    for (method, uri, content_type, body, want) in [
        (
            "POST",
            LOOKUP,
            Some("application/json"),
            ASK,
            (404, "not_found"),
        ),
        (
            "POST",
            LOOKUP,
            Some("Application/JSON; charset=utf-8"),
            ASK,
            (404, "not_found"),
        ),
        (
            "POST",
            LOOKUP,
            Some("text/plain"),
            ASK,
            (415, "unsupported_media_type"),
        ),
        (
            "POST",
            LOOKUP,
            Some("text/plain;charset=UTF-8"),
            ASK,
            (415, "unsupported_media_type"),
        ),
        (
            "POST",
            LOOKUP,
            Some("application/x-www-form-urlencoded"),
            ASK,
            (415, "unsupported_media_type"),
        ),
        (
            "POST",
            LOOKUP,
            Some("multipart/form-data; boundary=x"),
            ASK,
            (415, "unsupported_media_type"),
        ),
        ("POST", LOOKUP, None, ASK, (415, "unsupported_media_type")),
        // A route that reads JSON alone.
        (
            "POST",
            LOOKUP,
            Some("application/yaml"),
            "key: k",
            (415, "unsupported_media_type"),
        ),
        (
            "POST",
            "/api/v1/config/environments/9/import",
            Some("text/yaml"),
            "a: 1",
            (415, "unsupported_media_type"),
        ),
        // A document write reads YAML (then finds no environment 9).
        (
            "PUT",
            "/api/v1/config/environments/9/resources/a/values",
            Some("application/yaml"),
            "k: v",
            (404, "not_found"),
        ),
        (
            "PUT",
            "/api/v1/config/environments/9/resources/a/values",
            Some("text/plain"),
            "k: v",
            (415, "unsupported_media_type"),
        ),
        // No body: no type needed, but a form's type is refused.
        (
            "POST",
            "/api/v1/config/environments/9/restore",
            None,
            "",
            (404, "not_found"),
        ),
        (
            "POST",
            "/api/v1/config/environments/9/restore",
            Some("text/plain"),
            "",
            (415, "unsupported_media_type"),
        ),
        (
            "DELETE",
            "/api/v1/config/environments/9",
            Some("application/x-www-form-urlencoded"),
            "",
            (415, "unsupported_media_type"),
        ),
        (
            "DELETE",
            "/api/v1/config/environments/9",
            None,
            "",
            (404, "not_found"),
        ),
        ("GET", "/healthz", Some("text/plain"), "", (200, "")),
        ("GET", "/healthz", None, "", (200, "")),
    ] {
        let mut headers = vec![HOST];
        headers.extend(content_type.map(|t| ("content-type", t)));
        let (status, kind, message, _) = answer(method, uri, &headers, body);
        assert_eq!(
            (status, kind.as_str()),
            want,
            "{method} {uri} {content_type:?}: {message}"
        );
        if status == 415 {
            assert!(
                message.contains("send `Content-Type: application/json`"),
                "{message}"
            );
        }
    }
}

#[test]
fn changes_from_another_origin_are_refused() {
    let cross = (403, "cross_origin");
    for (method, host, origin, want) in [
        ("POST", "localhost:8750", None, (404, "not_found")),
        (
            "POST",
            "localhost:8750",
            Some("http://localhost:8750"),
            (404, "not_found"),
        ),
        (
            "POST",
            "LOCALHOST:8750",
            Some("http://localhost:8750"),
            (404, "not_found"),
        ),
        (
            "POST",
            "127.0.0.1:8750",
            Some("http://127.0.0.1:8750"),
            (404, "not_found"),
        ),
        (
            "POST",
            "[::1]:8750",
            Some("http://[::1]:8750"),
            (404, "not_found"),
        ),
        // Behind a proxy that ends TLS: the port the scheme implies.
        (
            "POST",
            "hierad.example.com",
            Some("https://hierad.example.com"),
            (404, "not_found"),
        ),
        (
            "POST",
            "hierad.example.com:443",
            Some("https://hierad.example.com"),
            (404, "not_found"),
        ),
        (
            "POST",
            "localhost:8750",
            Some("https://evil.example"),
            cross,
        ),
        ("POST", "localhost:8750", Some("null"), cross),
        (
            "POST",
            "localhost:8750",
            Some("http://localhost:3000"),
            cross,
        ),
        ("POST", "localhost:8750", Some("http://localhost"), cross),
        (
            "POST",
            "localhost:8750",
            Some("http://127.0.0.1:8750"),
            cross,
        ),
        (
            "POST",
            "localhost:8750",
            Some("file://localhost:8750"),
            cross,
        ),
        (
            "POST",
            "localhost:8750",
            Some("http://localhost:8750/path"),
            cross,
        ),
        (
            "POST",
            "hierad.example.com",
            Some("https://hierad.example.com:8443"),
            cross,
        ),
        ("PUT", "localhost:8750", Some("https://evil.example"), cross),
        (
            "DELETE",
            "localhost:8750",
            Some("https://evil.example"),
            cross,
        ),
        (
            "OPTIONS",
            "localhost:8750",
            Some("https://evil.example"),
            cross,
        ),
        // Reads are not refused for their origin (the browser keeps
        // their answers from the page: no CORS headers).
        (
            "GET",
            "localhost:8750",
            Some("https://evil.example"),
            (404, "not_found"),
        ),
        (
            "HEAD",
            "localhost:8750",
            Some("https://evil.example"),
            (404, ""),
        ),
    ] {
        let mut headers = vec![("host", host), JSON];
        headers.extend(origin.map(|o| ("origin", o)));
        let uri = match method {
            "POST" => LOOKUP,
            _ => "/api/v1/config/environments/9",
        };
        let body = if method == "POST" { ASK } else { "" };
        let (status, kind, message, answered) = answer(method, uri, &headers, body);
        assert_eq!(
            (status, kind.as_str()),
            want,
            "{method} {host} {origin:?}: {message}"
        );
        if status == 403 {
            assert!(message.contains(origin.unwrap()), "{message}");
        }
        let cors = answered
            .keys()
            .find(|name| name.as_str().starts_with("access-control-"));
        assert_eq!(cors, None, "{method} {origin:?}");
    }
    // Without a Host, no Origin can be the server's own.
    let (status, _, _, _) = answer("POST", LOOKUP, &[JSON, ("origin", "http://localhost")], ASK);
    assert_eq!(status, 403);
}

#[test]
fn hosts_must_be_addresses_localhost_or_allowed_names() {
    for host in [
        "localhost",
        "localhost:8750",
        "127.0.0.1:8750",
        "[::1]:8750",
        "10.0.0.1:1",
        "0.0.0.0",
        "hierad.example.com",
        "HIERAD.EXAMPLE.COM.:443",
    ] {
        let (status, kind, message, _) = answer("GET", "/healthz", &[("host", host)], "");
        assert_eq!((status, kind.as_str()), (200, ""), "{host}: {message}");
    }
    // No Host at all: HTTP/1.0, in-process clients.
    assert_eq!(answer("GET", "/healthz", &[], "").0, 200);
    for (host, why) in [
        ("evil.example:8750", "evil.example:8750"),
        ("x", "\"x\""),
        ("127.0.0.1.nip.io", "127.0.0.1.nip.io"),
        ("localhost.evil.example:8750", "localhost.evil.example"),
    ] {
        for (method, uri) in [("GET", "/api/v1/data/1/a"), ("POST", LOOKUP)] {
            let origin = format!("http://{host}");
            let headers = [("host", host), JSON, ("origin", origin.as_str())];
            let (status, kind, message, _) = answer(method, uri, &headers, ASK);
            assert_eq!(
                (status, kind.as_str()),
                (421, "unknown_host"),
                "{host}: {message}"
            );
            assert!(message.contains(why), "{message}");
            assert!(message.contains("--allowed-host NAME"), "{message}");
        }
    }
    // An absolute target names the host too.
    let (status, ..) = answer("GET", "http://evil.example/healthz", &[HOST], "");
    assert_eq!(status, 421);
    for headers in [
        &[("host", "localhost"), ("host", "evil.example")][..],
        &[("host", "user@localhost")],
        &[("host", "localhost:x")],
    ] {
        let (status, kind, message, _) = answer("GET", "/healthz", headers, "");
        assert_eq!(
            (status, kind.as_str()),
            (400, "bad_request"),
            "{headers:?}: {message}"
        );
    }
}
