//! In process, through the whole app: who reads plaintext, over which
//! connections, what a bad block answers, and the keys reloaded.

use super::*;
use crate::auth::verify::{hex, sha256};
use crate::auth::{AuthFile, Authenticator};
use crate::secrets::KeyFiles;
use crate::secrets::keyring::tests::write_pair;
use crate::server::app;
use crate::server::http::guard::Peer;
use crate::settings::Settings;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value as Json, json};
use std::net::SocketAddr;
use tower::ServiceExt as _;

const ADMIN: &str = "hierad_admin-token";
/// `read`, `decrypt = true`: a Puppet master.
const MASTER: &str = "hierad_master-token";
/// `read`, no `decrypt`.
const READER: &str = "hierad_reader-token";

fn token(name: &str, role: &str, token: &str, decrypt: bool) -> String {
    format!(
        "[[token]]\nname = \"{name}\"\nrole = \"{role}\"\nsha256 = \"{}\"\ndecrypt = {decrypt}\n",
        hex(&sha256(token.as_bytes()))
    )
}

/// Where a request comes from.
#[derive(Clone, Copy)]
enum From {
    /// TLS from another host.
    Tls,
    /// Plain HTTP from another host.
    Plain,
    /// No connection at all (in process).
    Nowhere,
}

struct World {
    state: AppState,
    keys: KeyFiles,
    _dir: tempfile::TempDir,
}

const PASSWORD: &str = "s3cret-db-pw";

/// Environment 1 (levels [nodes]) with `common` holding an encrypted
/// `db_password`, a value interpolating it, a nested block, and
/// `extra` (whatever the test adds).
async fn world(extra: Json) -> World {
    let dir = tempfile::tempdir().unwrap();
    let keys = write_pair(dir.path(), "a");
    let state = AppState::in_memory(Settings {
        eyaml: Some(keys.clone()),
        ..Settings::default()
    })
    .unwrap();
    let text = [
        token("admin", "admin", ADMIN, false),
        token("master", "read", MASTER, true),
        token("reader", "read", READER, false),
    ]
    .concat();
    let file = AuthFile::parse(&text).unwrap();
    state.set_authenticator(Arc::new(Authenticator::new(&file).unwrap()));
    let keyring = load(state.settings()).unwrap().unwrap();
    state.secrets().install(keyring, 1 << 20);
    let block = state
        .secrets()
        .current()
        .unwrap()
        .keyring()
        .encrypt(PASSWORD)
        .unwrap();
    let component = json!({"name": "app", "resource_definitions": [{"name": "common"}]});
    let environment = json!({"id": 1, "components": ["app"], "hierarchy_levels": ["nodes"]});
    let mut doc = json!({
        "db_password": block,
        "db_url": "postgres://nova:%{hiera('db_password')}@db",
        "users": [{"name": "a", "password": format!("pw: {block}")}],
        "plain": "nothing secret",
    });
    for (k, v) in extra.as_object().unwrap() {
        doc[k] = v.clone();
    }
    for (method, path, body) in [
        ("POST", "/api/v1/config/components", component),
        ("POST", "/api/v1/config/environments", environment),
        (
            "PUT",
            "/api/v1/config/environments/1/resources/common/values",
            doc,
        ),
    ] {
        let (status, body) = call(&state, ADMIN, From::Tls, method, path, &body.to_string()).await;
        assert!(status.is_success(), "{status} {body}");
    }
    World {
        state,
        keys,
        _dir: dir,
    }
}

async fn call(
    state: &AppState,
    token: &str,
    from: From,
    method: &str,
    path: &str,
    body: &str,
) -> (StatusCode, Json) {
    let (status, _, body) = exchange(state, token, from, method, path, body).await;
    (status, body)
}

async fn exchange(
    state: &AppState,
    token: &str,
    from: From,
    method: &str,
    path: &str,
    body: &str,
) -> (StatusCode, axum::http::HeaderMap, Json) {
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    let remote: SocketAddr = "192.0.2.7:40000".parse().unwrap();
    match from {
        From::Tls => {
            request
                .extensions_mut()
                .insert(Asker::new(Peer::new(remote, None, true, None)));
        }
        From::Plain => {
            request
                .extensions_mut()
                .insert(Asker::new(Peer::new(remote, None, false, None)));
        }
        From::Nowhere => {}
    }
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        headers,
        serde_json::from_slice(&bytes).unwrap_or(Json::Null),
    )
}

fn lookup(key: &str) -> String {
    json!({"environment": 1, "key": key, "hierarchy": ["common"]}).to_string()
}

const LOOKUP: &str = "/api/v1/lookup";
const EFFECTIVE: &str = "/api/v1/config/environments/1/resources/common/values?effective=true";
/// Effective reads decrypt only when asked: tools that write values
/// back (export, `config set`) read them too.
const DECRYPTED: &str =
    "/api/v1/config/environments/1/resources/common/values?effective=true&decrypt=true";

fn is_block(v: &Json) -> bool {
    v.as_str().is_some_and(|s| s.starts_with("ENC[PKCS7,MII"))
}

#[tokio::test]
async fn a_decrypting_principal_reads_plaintext_the_others_the_stored_block() {
    let w = world(json!({})).await;
    let s = &w.state;
    // The reader first: its answer is the one the cache keeps.
    for round in 0..2 {
        let (status, body) =
            call(s, READER, From::Tls, "POST", LOOKUP, &lookup("db_password")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(is_block(&body["value"]), "round {round}: {body}");
        let (status, body) =
            call(s, MASTER, From::Tls, "POST", LOOKUP, &lookup("db_password")).await;
        assert_eq!(
            (status, &body["value"]),
            (StatusCode::OK, &json!(PASSWORD)),
            "round {round}"
        );
    }
    // Interpolated into another value, as hiera-eyaml answers it.
    let (_, body) = call(s, MASTER, From::Tls, "POST", LOOKUP, &lookup("db_url")).await;
    assert_eq!(
        body["value"],
        json!(format!("postgres://nova:{PASSWORD}@db"))
    );
    let (_, body) = call(s, READER, From::Tls, "POST", LOOKUP, &lookup("db_url")).await;
    assert!(
        body["value"].as_str().unwrap().contains("ENC[PKCS7,"),
        "{body}"
    );
    // Several keys, nested values.
    let keys = json!({"environment": 1, "keys": ["users", "plain"], "hierarchy": ["common"]});
    let (_, body) = call(s, MASTER, From::Tls, "POST", LOOKUP, &keys.to_string()).await;
    assert_eq!(
        body["answers"][0]["value"][0]["password"],
        json!(format!("pw: {PASSWORD}")),
        "{body}"
    );
    assert_eq!(body["answers"][1]["value"], json!("nothing secret"));

    // Effective reads, asked to decrypt: the document, and one key.
    let (status, headers, body) = exchange(s, MASTER, From::Tls, "GET", DECRYPTED, "").await;
    assert_eq!(
        (status, &body["db_password"]),
        (StatusCode::OK, &json!(PASSWORD))
    );
    assert_eq!(headers[header::CACHE_CONTROL], "private, no-store");
    let (_, body) = call(s, MASTER, From::Tls, "GET", EFFECTIVE, "").await;
    assert!(is_block(&body["db_password"]), "not asked: {body}");
    let (_, body) = call(s, READER, From::Tls, "GET", DECRYPTED, "").await;
    assert!(is_block(&body["db_password"]), "{body}");
    let key = format!("{DECRYPTED}&key=users.0.password");
    let (_, body) = call(s, MASTER, From::Tls, "GET", &key, "").await;
    assert_eq!(body, json!(format!("pw: {PASSWORD}")));
    // Stored reads stay as stored for everyone: what an edit starts from.
    let stored = "/api/v1/config/environments/1/resources/common/values";
    let (_, body) = call(s, MASTER, From::Tls, "GET", stored, "").await;
    assert!(is_block(&body["db_password"]), "{body}");

    // The data route.
    let data = "/api/v1/data/1/common";
    let (status, body) = call(s, MASTER, From::Tls, "GET", data, "").await;
    assert_eq!(
        (status, &body["db_password"]),
        (StatusCode::OK, &json!(PASSWORD)),
        "{data}"
    );
    let (_, body) = call(s, READER, From::Tls, "GET", data, "").await;
    assert!(is_block(&body["db_password"]), "{body}");
}

#[tokio::test]
async fn reads_at_a_generation_decrypt_as_the_newest_reads_do() {
    let w = world(json!({})).await;
    let s = &w.state;
    let (_, headers, _) = exchange(s, MASTER, From::Tls, "GET", EFFECTIVE, "").await;
    let generation = headers["x-hierad-generation"].to_str().unwrap().to_owned();
    let pinned = |path: &str| format!("{path}&generation={generation}");
    let data = format!("/api/v1/data/1/common?generation={generation}");
    let key = pinned(&format!("{DECRYPTED}&key=users.0.password"));
    for (path, field) in [
        (pinned(DECRYPTED), "/db_password"),
        (data, "/db_password"),
        (key, ""),
    ] {
        let (status, headers, body) = exchange(s, MASTER, From::Tls, "GET", &path, "").await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert_eq!(
            headers["x-hierad-read-generation"].to_str().unwrap(),
            generation,
            "{path}"
        );
        let plain = body
            .pointer(field)
            .and_then(Json::as_str)
            .unwrap_or_default();
        assert!(plain.contains(PASSWORD), "{path}: {body}");
        let (_, _, body) = exchange(s, READER, From::Tls, "GET", &path, "").await;
        let stored = body
            .pointer(field)
            .and_then(Json::as_str)
            .unwrap_or_default();
        assert!(stored.contains("ENC[PKCS7,"), "{path}: {body}");
    }
}

#[tokio::test]
async fn plaintext_is_refused_over_plain_http_off_loopback() {
    let w = world(json!({})).await;
    let s = &w.state;
    for from in [From::Plain, From::Nowhere] {
        for (method, path, body) in [
            ("POST", LOOKUP, lookup("plain")),
            ("GET", DECRYPTED, String::new()),
            ("GET", "/api/v1/data/1/common", String::new()),
        ] {
            let (status, answer) = call(s, MASTER, from, method, path, &body).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
            assert!(
                answer["message"]
                    .as_str()
                    .unwrap()
                    .contains("neither TLS nor loopback")
            );
        }
        // Others, and the master's other routes, are served as before.
        let (status, body) = call(s, READER, from, "POST", LOOKUP, &lookup("db_password")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(is_block(&body["value"]));
        for path in ["/api/v1/config/environments", EFFECTIVE] {
            let (status, _) = call(s, MASTER, from, "GET", path, "").await;
            assert_eq!(status, StatusCode::OK, "{path}");
        }
    }
}

#[tokio::test]
async fn a_bad_block_fails_its_value_only_and_names_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let other = Keyring::load(&write_pair(dir.path(), "other")).unwrap();
    let foreign = other.encrypt("not for us").unwrap();
    let corrupt = "ENC[PKCS7,MIIBiQYJKoZIhvcNAQcDoIIBejCCAXYCAQAxggEhMIIBHQIBADAFMAACAQEw]";
    let w = world(json!({"foreign": foreign, "corrupt": {"deep": corrupt}})).await;
    let s = &w.state;
    for (key, path) in [("foreign", "foreign"), ("corrupt", "corrupt.deep")] {
        let (status, body) = call(s, MASTER, From::Tls, "POST", LOOKUP, &lookup(key)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("cannot decrypt the value at {path}:")),
            "{message}"
        );
        assert!(!message.contains("MII"), "{message}");
    }
    let keys =
        json!({"environment": 1, "keys": ["foreign", "db_password"], "hierarchy": ["common"]});
    let (_, body) = call(s, MASTER, From::Tls, "POST", LOOKUP, &keys.to_string()).await;
    assert_eq!(
        body["answers"][0]["error"]["class"], "RuntimeError",
        "{body}"
    );
    assert_eq!(body["answers"][1]["value"], json!(PASSWORD));
    let (status, headers, body) = exchange(s, MASTER, From::Tls, "GET", DECRYPTED, "").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["db_password"], json!(PASSWORD));
    assert_eq!(body["foreign"], json!(foreign), "kept as stored");
    let listed = headers[UNDECRYPTED].to_str().unwrap();
    assert!(
        listed.contains("foreign") && listed.contains("corrupt.deep"),
        "{listed}"
    );
    assert!(!listed.contains("MII"), "{listed}");
}

#[tokio::test]
async fn keys_are_reloaded_with_an_empty_cache_and_a_bad_reload_keeps_the_old() {
    use std::os::unix::fs::PermissionsExt as _;
    let w = world(json!({})).await;
    let s = &w.state;
    let (_, body) = call(s, MASTER, From::Tls, "POST", LOOKUP, &lookup("db_password")).await;
    assert_eq!(body["value"], json!(PASSWORD), "decrypted, and cached");
    let first = s.secrets().current().unwrap();
    assert!(!first.keyring().changed_on_disk());

    // A private key others may read: refused, the old keys stay.
    let private = w.keys.private_key.clone().unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(first.keyring().changed_on_disk());
    assert!(!reload(s, "test"));
    assert!(Arc::ptr_eq(&first, &s.secrets().current().unwrap()));
    let (_, body) = call(s, MASTER, From::Tls, "POST", LOOKUP, &lookup("db_password")).await;
    assert_eq!(body["value"], json!(PASSWORD));

    // Another key pair in the same files: its keys, and nothing of the
    // old cache (the stored block was for the old key).
    let dir = tempfile::tempdir().unwrap();
    let new = write_pair(dir.path(), "b");
    for (from, to) in [
        (&new.private_key, &w.keys.private_key),
        (&new.public_key, &w.keys.public_key),
    ] {
        std::fs::rename(from.as_ref().unwrap(), to.as_ref().unwrap()).unwrap();
    }
    assert!(reload(s, "test"));
    let (status, body) = call(s, MASTER, From::Tls, "POST", LOOKUP, &lookup("db_password")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
}

#[tokio::test]
async fn writes_encrypt_on_the_server_before_anything_is_stored() {
    let w = world(json!({})).await;
    let s = &w.state;
    let values = "/api/v1/config/environments/1/resources/common/values";
    let doc = json!({"api_key": "k3y-plain", "n": 1, "db_password": "n3w-pw"});
    let url = format!("{values}?encrypt=api_key,db_password");
    let (status, body) = call(s, ADMIN, From::Tls, "PUT", &url, &doc.to_string()).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let key_url = format!("{values}/keys/nested.secret?encrypt=nested.secret");
    let (status, body) = call(s, ADMIN, From::Tls, "PUT", &key_url, "\"n3sted-pw\"").await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    // Stored, and in the history: blocks only.
    let (_, stored) = call(s, ADMIN, From::Tls, "GET", values, "").await;
    assert!(
        is_block(&stored["api_key"]) && is_block(&stored["nested"]["secret"]),
        "{stored}"
    );
    assert_eq!(stored["n"], json!(1));
    let mut text = stored.to_string();
    for version in 1..=3 {
        let (status, old) = call(
            s,
            ADMIN,
            From::Tls,
            "GET",
            &format!("{values}?version={version}"),
            "",
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{old}");
        text.push_str(&old.to_string());
    }
    for plain in ["k3y-plain", "n3w-pw", "n3sted-pw"] {
        assert!(!text.contains(plain), "{plain} in {text}");
    }
    let (_, body) = call(s, MASTER, From::Tls, "POST", LOOKUP, &lookup("api_key")).await;
    assert_eq!(body["value"], json!("k3y-plain"));
    let (_, body) = call(s, MASTER, From::Tls, "POST", LOOKUP, &lookup("nested")).await;
    assert_eq!(body["value"]["secret"], json!("n3sted-pw"));

    // Mistakes: named, nothing written.
    for (url, body, status, wanted) in [
        (
            format!("{values}?encrypt=n"),
            doc.to_string(),
            400,
            "only Strings are encrypted",
        ),
        (
            format!("{values}?encrypt=nope"),
            doc.to_string(),
            400,
            "no value there",
        ),
        (
            format!("{values}/keys/n?encrypt=api_key"),
            "2".to_owned(),
            400,
            "not the key this request writes",
        ),
    ] {
        let (got, answer) = call(s, ADMIN, From::Tls, "PUT", &url, &body).await;
        assert_eq!(got.as_u16(), status, "{url}: {answer}");
        assert!(
            answer["message"].as_str().unwrap().contains(wanted),
            "{answer}"
        );
    }
    let (_, after) = call(s, ADMIN, From::Tls, "GET", values, "").await;
    assert_eq!(after, stored, "nothing written");
    let bare = AppState::in_memory(Settings::default()).unwrap();
    let value = crate::hiera::Value::str("x");
    let paths = [KeyPath::parse("a").unwrap()];
    let refused = encrypt(&bare, &paths, Some(&paths[0]), value).unwrap_err();
    assert!(
        matches!(&refused, ApiError::Conflict(m) if m.contains("--eyaml-public-key")),
        "{refused:?}"
    );
}
