//! hierad against the real Keystone: Debian's python3-keystone
//! (`bash .ci/run` installs it), bootstrapped in a throwaway folder (a
//! SQLite database, Fernet keys) and served by its own WSGI script on a
//! free port of 127.0.0.1. Its users, projects and role assignments are
//! made through its API as an operator would; hierad validates their
//! tokens with the service account the auth file names. The stand-in of
//! tests/common/keystone.rs covers the faults a real Keystone will not
//! produce on demand; this one shows the two agree on the real thing:
//! Fernet tokens, implied roles, `expires_at` with microseconds,
//! revocation, Keystone's own 404s.

use crate::server::{Reply, TestServer, call};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ADMIN_PASSWORD: &str = "adm-pw-Kq27Lx";
const SERVICE_PASSWORD: &str = "svc-pw-Rl58Dn";
const USER_PASSWORD: &str = "usr-pw-Wz61Mc";
const DOCUMENT_SECRET: &str = "db-pw-Ks9Vt2Qa";

/// How long Keystone may take to answer its first request.
const START_TIMEOUT: Duration = Duration::from_secs(90);

/// A real Keystone, stopped and removed when dropped.
struct Keystone {
    /// `http://127.0.0.1:PORT/v3`.
    url: String,
    child: Option<Child>,
    dir: tempfile::TempDir,
}

impl Keystone {
    fn start() -> Keystone {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/v3");
        std::fs::write(
            d.join("keystone.conf"),
            format!(
                "[DEFAULT]\nlog_file = {log}\n[database]\nconnection = sqlite:///{db}\n\
                 [token]\nprovider = fernet\nexpiration = 3600\n\
                 [fernet_tokens]\nkey_repository = {keys}\n[fernet_receipts]\nkey_repository = {keys}\n\
                 [credential]\nkey_repository = {credentials}\n",
                log = d.join("keystone.log").display(),
                db = d.join("keystone.db").display(),
                keys = d.join("fernet-keys").display(),
                credentials = d.join("credential-keys").display(),
            ),
        )
        .unwrap();
        let (user, group) = (id("-un"), id("-gn"));
        let owner = ["--keystone-user", &user, "--keystone-group", &group];
        manage(d, &["db_sync"]);
        manage(d, &[&["fernet_setup"][..], &owner].concat());
        manage(d, &[&["credential_setup"][..], &owner].concat());
        manage(
            d,
            &[
                "bootstrap",
                "--bootstrap-password",
                ADMIN_PASSWORD,
                "--bootstrap-public-url",
                &url,
                "--bootstrap-region-id",
                "RegionOne",
            ],
        );
        let out = std::fs::File::create(d.join("serve.out")).unwrap();
        let child = crate::tools::command("keystone-wsgi-public")
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .env("OS_KEYSTONE_CONFIG_DIR", d)
            .env("OS_KEYSTONE_CONFIG_FILES", "keystone.conf")
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        let keystone = Keystone {
            url,
            child: Some(child),
            dir,
        };
        let start = Instant::now();
        let agent = plain_agent();
        while !agent
            .get(&keystone.url)
            .call()
            .is_ok_and(|answer| answer.status() == 200)
        {
            assert!(
                start.elapsed() < START_TIMEOUT,
                "Keystone did not answer within {START_TIMEOUT:?}: {}",
                keystone.output()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        keystone
    }

    fn output(&self) -> String {
        let d = self.dir.path();
        let read = |f: &str| std::fs::read_to_string(d.join(f)).unwrap_or_default();
        format!("{}\n{}", read("serve.out"), read("keystone.log"))
    }

    /// A token of `user` (domain Default), scoped to `project` or to none.
    fn token(&self, user: &str, password: &str, project: Option<&str>) -> String {
        let mut auth = json!({"identity": {"methods": ["password"], "password": {"user": {
            "name": user, "domain": {"name": "Default"}, "password": password}}}});
        if let Some(project) = project {
            auth["scope"] = json!({"project": {"name": project, "domain": {"name": "Default"}}});
        }
        let agent = plain_agent();
        let mut answer = agent
            .post(&format!("{}/auth/tokens", self.url))
            .send_json(json!({ "auth": auth }))
            .unwrap();
        assert_eq!(answer.status(), 201, "{user}: {}", self.output());
        let token = answer.headers()["x-subject-token"]
            .to_str()
            .unwrap()
            .to_owned();
        let _ = answer.body_mut().read_to_string();
        token
    }

    /// `method` of `path` with the admin's `token`: the answer's JSON.
    fn admin(&self, token: &str, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string());
        let reply = call(
            method,
            &format!("{}{path}", self.url),
            body.as_deref(),
            &[
                ("x-auth-token", token),
                ("content-type", "application/json"),
            ],
        );
        assert!(
            (200..300).contains(&reply.status),
            "{method} {path}: {} {}",
            reply.status,
            reply.body
        );
        if reply.body.is_empty() {
            Value::Null
        } else {
            reply.json()
        }
    }

    /// A project and its id.
    fn project(&self, admin: &str, name: &str) -> String {
        let body = json!({"project": {"name": name, "domain_id": "default"}});
        self.admin(admin, "POST", "/projects", Some(body))["project"]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// A user with `role` on `project`.
    fn user(&self, admin: &str, name: &str, password: &str, project: &str, role: &str) {
        let body = json!({"user": {"name": name, "password": password, "domain_id": "default"}});
        let user = self.admin(admin, "POST", "/users", Some(body))["user"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let roles = self.admin(admin, "GET", &format!("/roles?name={role}"), None);
        let role = roles["roles"][0]["id"].as_str().unwrap().to_owned();
        self.admin(
            admin,
            "PUT",
            &format!("/projects/{project}/users/{user}/roles/{role}"),
            None,
        );
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Keystone {
    fn drop(&mut self) {
        self.stop();
    }
}

fn plain_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// `keystone-manage --config-file … ARGS` in `dir`, which must succeed.
fn manage(dir: &Path, args: &[&str]) {
    let out = crate::tools::command("keystone-manage")
        .arg("--config-file")
        .arg(dir.join("keystone.conf"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "keystone-manage {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `id FLAG`: this process's user or group name (the Fernet keys' owner).
fn id(flag: &str) -> String {
    let out = Command::new("id").arg(flag).output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn lookup(url: &str, token: &str) -> Reply {
    let body = r#"{"environment": 1, "key": "mysql", "hierarchy": ["astute"]}"#;
    call(
        "POST",
        &format!("{url}/api/v1/lookup"),
        Some(body),
        &[
            ("content-type", "application/json"),
            ("x-auth-token", token),
        ],
    )
}

fn put(url: &str, token: &str) -> Reply {
    call(
        "PUT",
        &format!("{url}/api/v1/config/environments/1/resources/astute/values"),
        Some(&format!(
            r#"{{"mysql": {{"root_password": "{DOCUMENT_SECRET}"}}}}"#
        )),
        &[
            ("content-type", "application/json"),
            ("x-auth-token", token),
        ],
    )
}

/// The auth file: Keystone's reader → read, member → write; tokens of
/// project `ops` may use environment 1, `lab`'s none.
fn auth_file(dir: &Path, keystone: &Keystone) -> PathBuf {
    std::fs::write(dir.join("ks.pw"), format!("{SERVICE_PASSWORD}\n")).unwrap();
    let file = dir.join("auth.toml");
    std::fs::write(
        &file,
        format!(
            "[keystone]\nurl = \"{}\"\nuser = \"hierad\"\npassword_file = \"{}\"\nproject = \"service\"\n\
             [keystone.roles]\nreader = \"read\"\nmember = \"write\"\n\
             [keystone.projects]\nops = [1]\nlab = [2]\n",
            keystone.url,
            dir.join("ks.pw").display()
        ),
    )
    .unwrap();
    file
}

#[test]
fn hierad_validates_the_real_keystones_tokens() {
    let mut keystone = Keystone::start();
    let admin = keystone.token("admin", ADMIN_PASSWORD, Some("admin"));
    // The service account, as OpenStack services have theirs: admin on
    // the project `service`, which lets it validate others' tokens.
    let service = keystone.project(&admin, "service");
    keystone.user(&admin, "hierad", SERVICE_PASSWORD, &service, "admin");
    let ops = keystone.project(&admin, "ops");
    let lab = keystone.project(&admin, "lab");
    keystone.user(&admin, "rhea", USER_PASSWORD, &ops, "reader");
    keystone.user(&admin, "mark", USER_PASSWORD, &ops, "member");
    keystone.user(&admin, "olga", USER_PASSWORD, &lab, "member");
    let reader = keystone.token("rhea", USER_PASSWORD, Some("ops"));
    let member = keystone.token("mark", USER_PASSWORD, Some("ops"));
    let elsewhere = keystone.token("olga", USER_PASSWORD, Some("lab"));
    let unscoped = keystone.token("rhea", USER_PASSWORD, None);
    let revoked = keystone.token("mark", USER_PASSWORD, Some("ops"));
    let fresh = keystone.token("rhea", USER_PASSWORD, Some("ops"));
    let revocation = call(
        "DELETE",
        &format!("{}/auth/tokens", keystone.url),
        None,
        &[("x-auth-token", &admin), ("x-subject-token", &revoked)],
    );
    assert_eq!(revocation.status, 204, "{}", revocation.body);

    let dir = tempfile::tempdir().unwrap();
    let file = auth_file(dir.path(), &keystone);
    let db = dir.path().join("hierad.db");
    let mut server = TestServer::start_logging(&db, &["--auth", file.to_str().unwrap()], "info");
    let url = server.url.clone();

    // member → write; reader → read, not write. The role comes through
    // Keystone's implied roles too: member implies reader.
    let written = put(&url, &member);
    assert_eq!(written.status, 204, "{}", written.body);
    let read = lookup(&url, &reader);
    assert_eq!(read.status, 200, "{}", read.body);
    assert!(read.body.contains(DOCUMENT_SECRET), "{}", read.body);
    let refused = put(&url, &reader);
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused.body.contains("keystone:rhea@Default"),
        "{}",
        refused.body
    );
    // A project the auth file maps elsewhere, and a token of no project.
    let other = lookup(&url, &elsewhere);
    assert_eq!(other.status, 403, "{}", other.body);
    assert!(
        other.body.contains("may not use environment 1"),
        "{}",
        other.body
    );
    assert_eq!(lookup(&url, &unscoped).status, 401);
    // Keystone's own refusals: revoked, never issued.
    let gone = lookup(&url, &revoked);
    assert_eq!(gone.status, 401, "{}", gone.body);
    assert!(
        gone.body.contains("Keystone refused the token"),
        "{}",
        gone.body
    );
    assert_eq!(lookup(&url, "gAAAAABnot-a-fernet-token").status, 401);

    // Keystone down: a validated token stays valid until its expiry; one
    // never validated is 503, never a pass.
    keystone.stop();
    assert_eq!(lookup(&url, &reader).status, 200);
    let down = lookup(&url, &fresh);
    assert_eq!(down.status, 503, "{}", down.body);
    assert!(down.body.contains("Keystone"), "{}", down.body);

    server.stop();
    let log = server.log();
    assert!(log.contains("keystone:mark@Default"), "{log}");
    for secret in [
        ADMIN_PASSWORD,
        SERVICE_PASSWORD,
        USER_PASSWORD,
        DOCUMENT_SECRET,
        &admin,
        &reader,
        &member,
        &elsewhere,
        &unscoped,
        &revoked,
        &fresh,
    ] {
        assert!(!log.contains(secret), "{secret:?} is in the log:\n{log}");
    }
}
