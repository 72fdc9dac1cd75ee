//! The change feed in process (`oneshot`): what changed past a
//! generation, the long poll that a write wakes, the bound on waiters
//! and a hung-up waiter's turn given back, and the event stream.

use super::generations::{ROOT_A, call_full, generation, ok_json, put, setup, state};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use hierad::server::{AppState, app};
use hierad::settings::Settings;
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use std::time::Duration;
use tower::ServiceExt as _;

/// Waits, a bounded number of times, until `state` has `n` waiters.
async fn waiters(state: &AppState, n: usize) {
    for _ in 0..500 {
        if state.change_waiters() == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{} waiters, not {n}", state.change_waiters());
}

#[tokio::test]
async fn the_feed_lists_what_changed_past_a_generation() {
    let state = state();
    setup(&state, &["n1"]).await;
    let g0 = generation(&state).await;
    put(&state, ROOT_A, json!({"k": 1})).await;
    put(
        &state,
        "/api/v1/config/environments/5/nodes/n1/resources/a/overrides",
        json!({"k": 2}),
    )
    .await;
    let feed = ok_json(&state, "GET", &format!("/api/v1/changes?since={g0}"), "").await;
    let g = generation(&state).await;
    assert_eq!(feed["generation"], json!(g));
    let changes = feed["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "{feed}");
    assert_eq!(changes[0]["generation"], json!(g0 + 1));
    assert_eq!(changes[0]["environment"], json!(5));
    assert_eq!(changes[0]["level"], json!(""));
    assert_eq!(changes[0]["resource"], json!("a"));
    assert_eq!(changes[0]["kind"], json!("values"));
    assert_eq!(changes[0]["version"], json!(1));
    assert!(changes[0]["created_at"].as_i64().is_some(), "{feed}");
    assert_eq!(changes[1]["level"], json!("nodes/n1"));
    assert_eq!(changes[1]["kind"], json!("overrides"));
    // Nothing past the newest: at once without wait.
    let none = ok_json(&state, "GET", &format!("/api/v1/changes?since={g}"), "").await;
    assert_eq!(none, json!({"generation": g, "changes": []}));
    let other = ok_json(
        &state,
        "GET",
        &format!("/api/v1/changes?since={g0}&env=6"),
        "",
    )
    .await;
    assert_eq!(other["changes"], json!([]));
    for bad in ["", "?since=x", "?since=1&wait=61", "?since=1&env=x"] {
        let (status, _, body) =
            call_full(&state, "GET", &format!("/api/v1/changes{bad}"), "").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
}

#[tokio::test]
async fn a_write_wakes_every_waiter() {
    let state = state();
    setup(&state, &["n1"]).await;
    let g = generation(&state).await;
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let state = state.clone();
        tasks.push(tokio::spawn(async move {
            ok_json(
                &state,
                "GET",
                &format!("/api/v1/changes?since={g}&wait=25"),
                "",
            )
            .await
        }));
    }
    waiters(&state, 20).await;
    put(&state, ROOT_A, json!({"k": 1})).await;
    for task in tasks {
        let feed = task.await.unwrap();
        assert_eq!(feed["changes"].as_array().map(Vec::len), Some(1), "{feed}");
        assert_eq!(feed["generation"], json!(g + 1));
    }
    waiters(&state, 0).await;
}

#[tokio::test]
async fn waiters_are_bounded_and_a_hung_up_one_gives_its_turn_back() {
    let settings = Settings::default().with_change_waiters(2);
    let state = AppState::in_memory(settings).unwrap();
    setup(&state, &["n1"]).await;
    let g = generation(&state).await;
    let wait = format!("/api/v1/changes?since={g}&wait=25");
    let first = {
        let (state, wait) = (state.clone(), wait.clone());
        tokio::spawn(async move { call_full(&state, "GET", &wait, "").await })
    };
    let second = {
        let (state, wait) = (state.clone(), wait.clone());
        tokio::spawn(async move { call_full(&state, "GET", &wait, "").await })
    };
    waiters(&state, 2).await;
    let (status, headers, body) = call_full(&state, "GET", &wait, "").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(headers.contains_key("retry-after"));
    assert!(body.contains("--max-change-waiters"), "{body}");
    // A client that hangs up: its handler is dropped with its turn.
    first.abort();
    waiters(&state, 1).await;
    put(&state, ROOT_A, json!({"k": 1})).await;
    let (status, _, body) = second.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    waiters(&state, 0).await;
}

#[tokio::test]
async fn the_event_stream_sends_each_change_as_an_event() {
    let state = state();
    setup(&state, &["n1"]).await;
    let g = generation(&state).await;
    put(&state, ROOT_A, json!({"k": 1})).await;
    let request = Request::get(format!("/api/v1/changes?since={g}"))
        .header("accept", "text/event-stream")
        .body(Body::empty())
        .unwrap();
    let response = app(state.clone()).oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let mut next_event = async || -> Value {
        let mut text = String::new();
        for _ in 0..20 {
            let frame = tokio::time::timeout(Duration::from_secs(20), body.frame())
                .await
                .expect("an event within 20 s")
                .unwrap()
                .unwrap();
            if let Ok(data) = frame.into_data() {
                text.push_str(std::str::from_utf8(&data).unwrap());
            }
            if text.contains("\n\n") && text.contains("data:") {
                break;
            }
        }
        assert!(text.contains("id: "), "{text}");
        let data = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
        serde_json::from_str(data).unwrap()
    };
    let first = next_event().await;
    assert_eq!(first["generation"], json!(g + 1));
    assert_eq!(state.change_waiters(), 1);
    put(&state, ROOT_A, json!({"k": 2})).await;
    let second = next_event().await;
    assert_eq!(
        (second["generation"].clone(), second["version"].clone()),
        (json!(g + 2), json!(2))
    );
    drop(body);
    waiters(&state, 0).await;
}

/// The status line and headers of an event stream opened on `url`, and
/// the connection to read it from.
fn open_stream(url: &str) -> (String, std::net::TcpStream) {
    use std::io::{BufRead, BufReader, Write};
    let address = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let request = format!(
        "GET /api/v1/changes?since=0 HTTP/1.1\r\nhost: {address}\r\naccept: text/event-stream\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        head.push_str(&line);
    }
    (head, stream)
}

#[test]
fn shutdown_with_a_waiter_stops_promptly() {
    use std::io::Read;
    let mut server = crate::server::TestServer::empty();
    let (head, mut stream) = open_stream(&server.url);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    // The stream holds a waiter's turn from here on; SIGTERM must end it
    // well before the 10 s drain deadline (`stop` allows 5 s).
    let status = server.stop();
    assert!(status.success(), "{status}");
    let mut rest = Vec::new();
    let read = stream.read_to_end(&mut rest);
    assert!(read.is_ok(), "the stream ended with {read:?}");
}

#[tokio::test]
async fn a_node_scope_write_is_listed_as_a_scope_change() {
    let state = state();
    setup(&state, &["n1"]).await;
    let g0 = generation(&state).await;
    let scope = "/api/v1/config/environments/5/nodes/n1/scope";
    let (status, _, body) = call_full(&state, "PUT", scope, r#"{"role": "db"}"#).await;
    assert!(status.is_success(), "PUT {scope}: {status} {body}");
    let g1 = generation(&state).await;
    assert_eq!(g1, g0 + 1, "a scope write takes a generation");
    let (status, _, body) = call_full(&state, "DELETE", scope, "").await;
    assert!(status.is_success(), "DELETE {scope}: {status} {body}");
    let feed = ok_json(&state, "GET", &format!("/api/v1/changes?since={g0}"), "").await;
    let changes = feed["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "{feed}");
    // Each row names the version its write made, with that version's
    // author and time, as the scope's history has them.
    let history = ok_json(&state, "GET", &format!("{scope}/history"), "").await;
    let history = history.as_array().unwrap();
    assert_eq!(history.len(), 2, "{history:?}");
    for ((change, g), version) in changes.iter().zip([g1, g1 + 1]).zip(history) {
        assert_eq!(change["version"], version["version"], "{feed}");
        assert!(change["created_at"].as_i64().is_some(), "{feed}");
        assert_eq!(change["created_at"], version["created_at"], "{feed}");
        assert_eq!(change.get("author"), version.get("author"), "{feed}");
        assert_eq!(change["generation"], json!(g), "{feed}");
        assert_eq!(change["environment"], json!(5), "{feed}");
        assert_eq!(change["kind"], json!("scope"), "{feed}");
        assert_eq!(change["level"], json!("nodes/n1"), "{feed}");
        assert_eq!(change["node"], json!("n1"), "{feed}");
        assert!(change.get("resource").is_none(), "{feed}");
    }
}
