//! What one principal may do to everyone else's data, and what a stranger
//! learns (issue "Attacks that still work", items 6, 7 and 10): component
//! resource definitions are an admin's, a schema refusal never quotes the
//! refused document, writers have quotas, and `/healthz` and register
//! 404s name nothing a principal may not read.

use crate::binary;
use crate::server::{Reply, TestServer, call};

/// A server over the sample with an auth file holding an admin, an
/// unlimited writer and a writer limited to environment 1; with the
/// `Authorization` header of each.
struct Authed {
    server: TestServer,
    admin: String,
    writer: String,
    limited: String,
    _dir: tempfile::TempDir,
}

impl Authed {
    fn start(extra: &[&str]) -> Authed {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.toml");
        let f = file.to_str().unwrap();
        let token = |role: &str, name: &str, env: &[&str]| {
            let mut args = vec!["auth", "add-token", "--file", f, "--role", role];
            args.extend_from_slice(env);
            args.push(name);
            format!("Bearer {}", binary::ok(&args).trim())
        };
        let admin = token("admin", "root", &[]);
        let writer = token("write", "deployer", &[]);
        let limited = token("write", "env1", &["--env", "1"]);
        let mut args = vec!["--auth", f];
        args.extend_from_slice(extra);
        let server = TestServer::start_on(&dir.path().join("hierad.db"), &args);
        Authed {
            server,
            admin,
            writer,
            limited,
            _dir: dir,
        }
    }

    fn send(&self, who: &str, method: &str, path: &str, body: Option<&str>) -> Reply {
        call(
            method,
            &format!("{}{path}", self.server.url),
            body,
            &[("authorization", who), ("content-type", "application/json")],
        )
    }
}

const DEFINITION: &str =
    "/api/v1/config/components/fuel/resource_definitions/override/configuration/cluster";

/// A definition's content (its schema) checks writes in every environment
/// using the component, so changing it is an admin's: an unlimited writer
/// could set `{"schema": {"not": {}}}` and block the resource everywhere.
#[test]
fn only_an_admin_may_change_a_resource_definition() {
    let authed = Authed::start(&[]);
    let block = r#"{"schema": {"not": {}}}"#;
    for who in [&authed.writer, &authed.limited] {
        let reply = authed.send(who, "PUT", DEFINITION, Some(block));
        assert_eq!(reply.status, 403, "{}", reply.body);
        assert!(reply.body.contains("needs admin"), "{}", reply.body);
    }
    // Reading it is still a reader's; nothing changed.
    let reply = authed.send(&authed.writer, "GET", DEFINITION, None);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(!reply.body.contains("\"not\""), "{}", reply.body);
    let reply = authed.send(&authed.admin, "PUT", DEFINITION, Some(block));
    assert_eq!(reply.status, 200, "{}", reply.body);
}

/// A schema refusal names the failing path and rule, never the value:
/// the refused document may hold a password, and the refusal reaches the
/// writer's terminal and the logs.
#[test]
fn a_schema_refusal_does_not_quote_the_document() {
    let authed = Authed::start(&[]);
    let secret = "s3cret-pa55word-never-shown";
    let path = "/api/v1/config/environments/1/resources/override/configuration/cluster/values";
    for body in [
        format!(r#"{{"configuration_options": {{"create": "{secret}"}}}}"#),
        format!(r#"{{"defaults": {{"file": "{secret}"}}}}"#),
    ] {
        let reply = authed.send(&authed.writer, "PUT", path, Some(&body));
        assert_eq!(reply.status, 400, "{}", reply.body);
        assert!(reply.body.contains("(rule /"), "{}", reply.body);
        assert!(!reply.body.contains(secret), "{}", reply.body);
    }
    // A schema refusing everything: the whole document was quoted.
    let reply = authed.send(
        &authed.admin,
        "PUT",
        DEFINITION,
        Some(r#"{"schema": {"not": {}}}"#),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = format!(r#"{{"password": "{secret}"}}"#);
    let reply = authed.send(&authed.writer, "PUT", path, Some(&body));
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(!reply.body.contains(secret), "{}", reply.body);
    assert!(reply.body.contains("at /: "), "{}", reply.body);
}
