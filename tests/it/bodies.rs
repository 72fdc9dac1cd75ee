//! Request bodies over the server (in process): lookups and hierarchy
//! registrations have a limit of their own (`--lookup-body-limit`), big
//! bodies take turns, and limits no request could meet are refused at
//! start.

use crate::in_process::InProcess;
use crate::server::{Reply, Served, call};
use serde_json::json;

/// A lookup body of exactly `len` bytes (its scope padded), of a key the
/// sample holds.
fn lookup_of_len(len: usize) -> String {
    let body = |pad: &str| {
        json!({ "environment": 1, "key": "fqdn", "hierarchy": ["astute"], "scope": { "pad": pad } })
            .to_string()
    };
    let body = body(&"x".repeat(len - body("").len()));
    assert_eq!(body.len(), len);
    body
}

/// Lookups and registrations are parsed whole into trees many times their
/// size (a 16 MiB registration of empty levels peaked at 1.2 GB RSS), so
/// their bodies have a limit of their own, `--lookup-body-limit`, below
/// the one for documents: over it, 413 naming the flag, and the server's
/// memory untouched; at it, answered. A document over it is still taken.
#[test]
fn lookup_bodies_have_a_limit_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let server = InProcess::start_on(
        &dir.path().join("hierad.db"),
        &["--lookup-body-limit", "4096"],
    );
    let at = server.post_json("/api/v1/lookup", &lookup_of_len(4096));
    assert_eq!(at.status, 200, "{}", at.body);
    let refused = |r: Reply, limit: &str, flag: bool| {
        assert_eq!(r.status, 413, "{}", r.body);
        assert_eq!(r.json()["error"], "payload_too_large", "{}", r.body);
        let message = r.json()["message"].as_str().unwrap().to_owned();
        assert!(
            message.contains(&format!("limit of {limit} bytes")),
            "{message}"
        );
        assert_eq!(message.contains("--lookup-body-limit"), flag, "{message}");
    };
    refused(
        server.post_json("/api/v1/lookup", &lookup_of_len(4097)),
        "4096",
        true,
    );
    // A registration of many levels: refused over the limit, taken at it.
    let levels = |n: usize| json!({ "hierarchy": vec!["level"; n] }).to_string();
    let fits = (1..)
        .take_while(|n| levels(*n).len() <= 4096)
        .last()
        .unwrap();
    assert_eq!(
        server
            .post_json("/api/v1/hierarchies", &levels(fits))
            .status,
        200
    );
    refused(
        server.post_json("/api/v1/hierarchies", &levels(fits + 1)),
        "4096",
        true,
    );
    // Documents keep --body-limit (16 MiB).
    let big = json!({ "blob": "y".repeat(64 * 1024) }).to_string();
    let put = call(
        "PUT",
        &format!(
            "{}/api/v1/config/environments/1/resources/astute/values",
            server.url
        ),
        Some(&big),
        &[("content-type", "application/json")],
    );
    assert_eq!(put.status, 204, "{}", put.body);

    // A --body-limit below the lookup limit is the one that applies, and
    // the one named.
    let dir = tempfile::tempdir().unwrap();
    let server = InProcess::start_on(&dir.path().join("hierad.db"), &["--body-limit", "2048"]);
    assert_eq!(
        server
            .post_json("/api/v1/lookup", &lookup_of_len(2048))
            .status,
        200
    );
    refused(
        server.post_json("/api/v1/lookup", &lookup_of_len(2049)),
        "2048",
        false,
    );
}

/// Bodies over 1 MiB are handled one at a time (the server's memory then
/// holds one big body's tree, not one per client): sent at once, every
/// one is still written, none waits on another forever.
#[test]
fn big_bodies_sent_at_once_are_all_written() {
    let server = InProcess::with_sample();
    let put = |n: usize| {
        let body = json!({ "blob": format!("{n}:{}", "y".repeat(3 * 1024 * 1024)) }).to_string();
        call(
            "PUT",
            &format!(
                "{}/api/v1/config/environments/1/resources/astute/values",
                server.url
            ),
            Some(&body),
            &[("content-type", "application/json")],
        )
    };
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let all: Vec<_> = (0..4).map(|n| s.spawn(move || put(n).status)).collect();
        all.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(statuses, [204; 4]);
    let history = call(
        "GET",
        &format!(
            "{}/api/v1/config/environments/1/resources/astute/values/history",
            server.url
        ),
        None,
        &[],
    );
    assert_eq!(history.status, 200, "{}", history.body);
    let big = history
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["size"].as_u64() > Some(3 << 20))
        .count();
    assert_eq!(big, 4, "{}", history.body);
}

/// A body limit under 1 KiB (no lookup fits) is refused at start, naming
/// the flag, before anything is opened.
#[test]
fn body_limits_under_a_kibibyte_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--lookup-body-limit", "--body-limit"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hierad"))
            .args(["serve", "--listen", "127.0.0.1:0", "--db"])
            .arg(dir.path().join("hierad.db"))
            .args([flag, "0"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flag}: {stderr}");
        assert!(
            stderr.contains(&format!("invalid value '0' for '{flag}")),
            "{stderr}"
        );
        assert!(
            !dir.path().join("hierad.db").exists(),
            "{flag}: a database was made"
        );
    }
}
