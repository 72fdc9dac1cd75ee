//! End to end: the real binary over TLS with an auth file made
//! by `hierad auth`, every way of authenticating (Basic, bearer tokens,
//! client certificates, Keystone tokens against a stand-in Keystone that
//! answers as the Keystone v3 API reference documents), roles,
//! environment limits, expiry and revocation, and a log of the whole run
//! that holds no password, token or document value.

use crate::binary::Args;
use crate::keystone::FakeKeystone;
use crate::pki::Pki;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

const HIERAD: &str = env!("CARGO_BIN_EXE_hierad");

/// A secret value of the sample (data/astute.yaml, `aodh.db_password`).
const SECRET: &str = "OhQJSjJm0wVaH1Zf4Cdhuc64";

struct Reply {
    status: u16,
    challenges: Vec<String>,
    body: String,
}

fn send(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> Reply {
    let mut builder = http::Request::builder().method(method).uri(url);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    // A body is JSON unless the headers say otherwise, as clients declare.
    if !body.is_empty()
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        builder = builder.header("content-type", "application/json");
    }
    let mut response = agent
        .run(builder.body(body.to_owned()).unwrap())
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    Reply {
        status: response.status().as_u16(),
        challenges: response
            .headers()
            .get_all("www-authenticate")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect(),
        body: response.body_mut().read_to_string().unwrap_or_default(),
    }
}

/// `hierad serve` with its whole stderr kept.
struct Server {
    child: Child,
    url: String,
    log: Arc<Mutex<String>>,
}

impl Server {
    fn start(args: &(impl Args + ?Sized), env: &[(&str, &str)]) -> Server {
        let mut command = Command::new(HIERAD);
        command
            .arg("serve")
            .args(args.words())
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("HIERAD_LOG", "info")
            .stderr(Stdio::piped());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let kept = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("listening on ") {
                    let _ = tx.send(url.to_owned());
                }
                let mut log = kept.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("hierad serve did not start: {}", log.lock().unwrap()));
        Server { child, url, log }
    }

    fn stop(mut self) -> String {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let _ = self.child.wait();
        std::thread::sleep(Duration::from_millis(200));
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `hierad auth ARGS`: its stdout, checking it succeeded.
fn auth(args: &(impl Args + ?Sized)) -> String {
    let args = args.words();
    let out = Command::new(HIERAD)
        .arg("auth")
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hierad auth {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A way of authenticating: its name, then a read principal's client and
/// headers, then a write principal's.
type Way<'a> = (
    &'a str,
    &'a ureq::Agent,
    Vec<(&'a str, &'a str)>,
    &'a ureq::Agent,
    Vec<(&'a str, &'a str)>,
);

/// The checks every way of authenticating must pass.
fn lookup(agent: &ureq::Agent, url: &str, env: i64, headers: &[(&str, &str)]) -> Reply {
    let body = format!(r#"{{"environment": {env}, "key": "aodh"}}"#);
    send(
        agent,
        "POST",
        &format!("{url}/api/v1/lookup"),
        &body,
        headers,
    )
}

/// Registers the sample's hierarchy (`POST /api/v1/hierarchies`).
fn register(agent: &ureq::Agent, url: &str, headers: &[(&str, &str)]) -> Reply {
    let mut all = headers.to_vec();
    all.push(("content-type", "application/json"));
    send(
        agent,
        "POST",
        &format!("{url}/api/v1/hierarchies"),
        r#"{"hierarchy": ["globals", "astute"]}"#,
        &all,
    )
}

fn put(agent: &ureq::Agent, url: &str, env: i64, headers: &[(&str, &str)]) -> Reply {
    let uri = format!("{url}/api/v1/config/environments/{env}/resources/globals/values");
    let mut all = headers.to_vec();
    all.push(("content-type", "application/json"));
    send(agent, "PUT", &uri, r#"{"written": "by a test"}"#, &all)
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// The users' passwords, as `hierad auth add-user` reads them from files.
const PASSWORDS: [(&str, &str); 3] = [
    ("rita", "read-pw-Xq81"),
    ("wade", "write-pw-Lm27"),
    ("ella", "env2-pw-Zp90"),
];

/// An auth file made by the commands, as an operator would, once for all
/// the cases: its text, its mode, and the tokens the commands printed.
struct Accounts {
    text: String,
    mode: u32,
    read_token: String,
    write_token: String,
    env2_token: String,
    expired: String,
    revoked: String,
}

fn accounts() -> &'static Accounts {
    static ACCOUNTS: OnceLock<Accounts> = OnceLock::new();
    ACCOUNTS.get_or_init(|| make_accounts(tempfile::tempdir().unwrap().path()))
}

fn write_passwords(d: &Path) {
    for (user, password) in PASSWORDS {
        std::fs::write(d.join(format!("{user}.pw")), format!("{password}\n")).unwrap();
    }
}

fn make_accounts(d: &Path) -> Accounts {
    let file = d.join("auth.toml");
    let f = file.to_str().unwrap();
    write_passwords(d);
    for ((user, _), (role, envs)) in
        PASSWORDS
            .iter()
            .zip([("read", None), ("write", None), ("admin", Some("2"))])
    {
        let pw = d.join(format!("{user}.pw"));
        let mut args = format!(
            "add-user --file {f} --role {role} --password-file {}",
            pw.display()
        );
        if let Some(env) = envs {
            args += &format!(" --env {env}");
        }
        auth(&format!("{args} {user}"));
    }
    let read_token = auth(&["add-token", "--file", f, "--role", "read", "reader"]);
    let write_token = auth(&format!(
        "add-token --file {f} --role write --expires 30d writer"
    ));
    let env2_token = auth(&format!("add-token --file {f} --role write --env 2 env2"));
    // `add-token` refuses an expiry already past: the entry is dated back
    // by hand, as a token that expired in service would be.
    let expired = auth(&format!(
        "add-token --file {f} --role admin --expires 2099-01-01T00:00:00Z old"
    ));
    let dated = std::fs::read_to_string(&file)
        .unwrap()
        .replace("2099-01-01T00:00:00Z", "2020-01-01T00:00:00Z");
    std::fs::write(&file, dated).unwrap();
    let revoked = auth(&["add-token", "--file", f, "--role", "admin", "gone"]);
    auth(&["revoke-token", "--file", f, "gone"]);
    Accounts {
        text: std::fs::read_to_string(&file).unwrap(),
        mode: std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        read_token,
        write_token,
        env2_token,
        expired,
        revoked,
    }
}

#[test]
fn the_auth_file_keeps_no_token_and_only_its_owner_reads_it() {
    let a = accounts();
    for token in [
        &a.read_token,
        &a.write_token,
        &a.env2_token,
        &a.expired,
        &a.revoked,
    ] {
        assert!(token.starts_with("hierad_") && !a.text.contains(token.as_str()));
    }
    assert_eq!(a.mode, 0o600);
}

/// A server over TLS with the accounts, client certificate rules, a
/// stand-in Keystone, and a second environment (for the environment
/// limits) made by an admin token added while it runs.
struct Site {
    dir: tempfile::TempDir,
    pki: Pki,
    reader_cert: (PathBuf, PathBuf),
    writer_cert: (PathBuf, PathBuf),
    stranger_cert: (PathBuf, PathBuf),
    keystone: FakeKeystone,
    server: Server,
    url: String,
    plain: ureq::Agent,
    admin_token: String,
}

fn site() -> Site {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pki = Pki::new(d);
    let server_cert = pki.issue("server", "localhost", &["localhost", "127.0.0.1"], false);
    let reader_cert = pki.issue("reader", "reader.test", &["reader.test"], true);
    let writer_cert = pki.issue("writer", "writer.test", &["writer.test"], true);
    let stranger_cert = pki.issue("stranger", "stranger.test", &[], true);
    let file = d.join("auth.toml");
    let f = file.to_str().unwrap();
    write_passwords(d);
    let keystone = FakeKeystone::start("svc-pw-Kk55");
    std::fs::write(d.join("ks.pw"), "svc-pw-Kk55\n").unwrap();
    let mut extra = format!(
        "[[client_cert]]\ncn = \"reader.test\"\nrole = \"read\"\n\n[[client_cert]]\nsan = \"writer.test\"\nrole = \"write\"\n\n\
         [keystone]\nurl = \"{}\"\nuser = \"hierad\"\npassword_file = \"{}\"\nproject = \"service\"\n[keystone.roles]\nreader = \"read\"\nmember = \"write\"\n\
         [keystone.projects]\nops = [1]\nenv2-project = [2]\n",
        keystone.url,
        d.join("ks.pw").display()
    );
    extra.insert_str(0, &accounts().text);
    std::fs::write(&file, extra).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();

    let db = d.join("hierad.db");
    let args = format!(
        "--listen 127.0.0.1:0 --db {} --auth {} --tls-cert {} --tls-key {} --tls-client-ca {}",
        db.display(),
        file.display(),
        server_cert.0.display(),
        server_cert.1.display(),
        d.join("ca.pem").display()
    );
    let server = Server::start(&args, &[]);
    let url = server.url.replace("127.0.0.1", "localhost");
    assert!(url.starts_with("https://"), "{url}");
    // A second environment for the environment limits.
    let plain = pki.client(None);
    let admin_token = auth(&["add-token", "--file", f, "--role", "admin", "root"]);
    Command::new("kill")
        .args(["-HUP", &server.child.id().to_string()])
        .status()
        .unwrap();
    let admin = bearer(&admin_token);
    let mut reloaded = false;
    for _ in 0..100 {
        let created = send(
            &plain,
            "POST",
            &format!("{url}/api/v1/config/environments"),
            r#"{"id": 2, "components": ["fuel"], "hierarchy_levels": ["nodes"]}"#,
            &[
                ("authorization", &admin),
                ("content-type", "application/json"),
            ],
        );
        if created.status == 201 {
            reloaded = true;
            break;
        }
        assert_eq!(created.status, 401, "{}", created.body);
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(reloaded, "the auth file was not reloaded");
    Site {
        dir,
        pki,
        reader_cert,
        writer_cert,
        stranger_cert,
        keystone,
        server,
        url,
        plain,
        admin_token,
    }
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

impl Site {
    /// Stops the server and returns its log, which shows the reload the
    /// SIGHUP made and holds no password, token or document value.
    fn finish(self) -> String {
        let log = self.server.stop();
        // The file changed too, so the reload may have come from either; the
        // SIGHUP made one of its own.
        assert!(
            log.contains("why=\"SIGHUP\" reloaded the auth file")
                || log.contains("why=SIGHUP reloaded the auth file")
                || log.contains("reloaded the auth file why=\"SIGHUP\"")
                || log.contains("reloaded the auth file why=SIGHUP"),
            "{log}"
        );
        let a = accounts();
        let mut secrets: Vec<&str> = vec![
            SECRET,
            "by a test",
            "svc-pw-Kk55",
            "svc-token",
            "ks-reader",
            "ks-member",
            "ks-env2",
            "ks-stray",
        ];
        secrets.extend(PASSWORDS.iter().map(|(_, p)| *p));
        for token in [
            &a.read_token,
            &a.write_token,
            &a.env2_token,
            &a.expired,
            &a.revoked,
            &self.admin_token,
        ] {
            secrets.push(token);
            secrets.push(token.trim_start_matches("hierad_"));
        }
        let headers = PASSWORDS.map(|(user, password)| basic(user, password));
        for header in &headers {
            secrets.push(header.trim_start_matches("Basic "));
        }
        for secret in secrets.iter().filter(|s| s.len() > 4) {
            assert!(!log.contains(secret), "{secret:?} is in the log:\n{log}");
        }
        log
    }
}

/// No credentials: 401 with the challenges, on every route but the
/// probes, /healthz and /readyz.
#[test]
fn without_credentials_every_route_but_the_probes_is_challenged() {
    let site = site();
    let (plain, url) = (&site.plain, &site.url);
    let none = lookup(plain, url, 1, &[]);
    assert_eq!(none.status, 401, "{}", none.body);
    assert!(
        none.challenges
            .iter()
            .any(|c| c.starts_with("Basic realm=\"hierad\"")),
        "{:?}",
        none.challenges
    );
    assert!(
        none.challenges.iter().any(|c| c.starts_with("Bearer")),
        "{:?}",
        none.challenges
    );
    assert!(
        none.challenges
            .iter()
            .any(|c| c.starts_with("Keystone uri=")),
        "{:?}",
        none.challenges
    );
    for probe in ["healthz", "readyz"] {
        assert_eq!(
            send(plain, "GET", &format!("{url}/{probe}"), "", &[]).status,
            200,
            "{probe}"
        );
    }
    assert_eq!(
        send(plain, "GET", &format!("{url}/metrics"), "", &[]).status,
        401
    );
    assert_eq!(
        send(plain, "GET", &format!("{url}/nowhere"), "", &[]).status,
        401
    );
    let stranger = register(plain, url, &[]);
    assert_eq!(stranger.status, 401, "{}", stranger.body);
    site.finish();
}

/// A way of authenticating: a reader's client and headers read, may
/// register, and may not write; a writer's write, and may not delete an
/// environment.
fn reads_as_a_reader_and_writes_as_a_writer(site: &Site, way: &Way) {
    let url = &site.url;
    let (way, read_agent, read, write_agent, write) = way;
    let found = lookup(read_agent, url, 1, read);
    assert_eq!(found.status, 200, "{way}: {}", found.body);
    assert!(found.body.contains(SECRET), "{way}: {}", found.body);
    // Whoever may look up may register the hierarchy it looks up with.
    let registered = register(read_agent, url, read);
    assert_eq!(registered.status, 200, "{way}: {}", registered.body);
    let id: serde_json::Value = serde_json::from_str(&registered.body).unwrap();
    let by_id = send(
        read_agent,
        "POST",
        &format!("{url}/api/v1/lookup"),
        &format!(
            r#"{{"environment": 1, "key": "aodh", "hierarchy_id": {}}}"#,
            id["id"]
        ),
        read,
    );
    assert_eq!(by_id.status, 200, "{way}: {}", by_id.body);
    assert!(by_id.body.contains(SECRET), "{way}: {}", by_id.body);
    let refused = put(read_agent, url, 1, read);
    assert_eq!(refused.status, 403, "{way}: {}", refused.body);
    assert!(
        refused.body.contains("needs write"),
        "{way}: {}",
        refused.body
    );
    assert_eq!(put(write_agent, url, 1, write).status, 204, "{way}");
    let admin_only = send(
        write_agent,
        "DELETE",
        &format!("{url}/api/v1/config/environments/2"),
        "",
        write,
    );
    assert_eq!(admin_only.status, 403, "{way}: {}", admin_only.body);
}

/// Basic, bearer tokens, client certificates and Keystone tokens each
/// read as a reader and write as a writer, and each write's version
/// names its author, whichever way it proved who.
#[test]
fn each_way_of_authenticating_reads_writes_and_signs_as_its_role() {
    let site = site();
    let (plain, url) = (&site.plain, &site.url);
    let a = accounts();
    let rita = basic("rita", PASSWORDS[0].1);
    let wade = basic("wade", PASSWORDS[1].1);
    let (rt, wt) = (bearer(&a.read_token), bearer(&a.write_token));
    let reader_agent = site.pki.client(Some(&site.reader_cert));
    let writer_agent = site.pki.client(Some(&site.writer_cert));
    let ways: Vec<Way> = vec![
        (
            "basic",
            plain,
            vec![("authorization", &rita)],
            plain,
            vec![("authorization", &wade)],
        ),
        (
            "bearer",
            plain,
            vec![("authorization", &rt)],
            plain,
            vec![("authorization", &wt)],
        ),
        ("client cert", &reader_agent, vec![], &writer_agent, vec![]),
        (
            "keystone",
            plain,
            vec![("x-auth-token", "ks-reader")],
            plain,
            vec![("x-auth-token", "ks-member")],
        ),
    ];
    for way in &ways {
        reads_as_a_reader_and_writes_as_a_writer(&site, way);
    }
    let history = send(
        plain,
        "GET",
        &format!("{url}/api/v1/config/environments/1/resources/globals/values/history"),
        "",
        &[("authorization", &rt)],
    );
    assert_eq!(history.status, 200, "{}", history.body);
    let versions: Vec<serde_json::Value> = serde_json::from_str(&history.body).unwrap();
    let authors: Vec<&str> = versions
        .iter()
        .filter_map(|v| v["author"].as_str())
        .collect();
    // The sample, loaded by `serve` itself: the server's Unix user.
    assert!(authors[0].starts_with("local:"), "{}", history.body);
    assert_eq!(
        authors[1..],
        [
            "wade",
            "token:writer",
            "cert:writer.test",
            "keystone:mel@Default"
        ],
        "{}",
        history.body
    );
    // Authors show in the access log.
    let log = site.finish();
    assert!(
        log.contains("principal=\"token:writer\" client=127.0.0.1")
            || log.contains("principal=token:writer client=127.0.0.1"),
        "{log}"
    );
    assert!(
        log.contains("route=/api/v1/lookup") || log.contains("route=\"/api/v1/lookup\""),
        "{log}"
    );
}

/// Environment-limited principals: 2 yes, 1 no (lookups and writes); a
/// Keystone token by its project (keystone.projects).
#[test]
fn environment_limited_principals_use_only_their_environments() {
    let site = site();
    let (plain, url) = (&site.plain, &site.url);
    let ella = basic("ella", PASSWORDS[2].1);
    let et = bearer(&accounts().env2_token);
    let limited = [
        ("authorization", ella.as_str()),
        ("authorization", et.as_str()),
        ("x-auth-token", "ks-env2"),
    ];
    for (name, value) in limited {
        let h = [(name, value)];
        assert_eq!(lookup(plain, url, 2, &h).status, 200);
        // A registration names no environment: any principal may.
        assert_eq!(register(plain, url, &h).status, 200);
        assert_eq!(put(plain, url, 2, &h).status, 204);
        let other = lookup(plain, url, 1, &h);
        assert_eq!(other.status, 403, "{}", other.body);
        assert!(
            other.body.contains("may not use environment 1"),
            "{}",
            other.body
        );
        assert_eq!(put(plain, url, 1, &h).status, 403);
        // The guard reads a lookup's body to learn its environment: within
        // the lookup limit, as the lookup itself does (read within the
        // general limit, this one would be parsed and refused 403).
        let padded = format!(
            r#"{{"environment": 1, "key": "aodh", "scope": {{"pad": "{}"}}}}"#,
            "x".repeat(1 << 20)
        );
        let over = send(plain, "POST", &format!("{url}/api/v1/lookup"), &padded, &h);
        assert_eq!(over.status, 413, "{}", over.body);
        assert!(over.body.contains("--lookup-body-limit"), "{}", over.body);
        let doc = send(
            plain,
            "GET",
            &format!("{url}/api/v1/config/environments/1/resources/astute/values"),
            "",
            &h,
        );
        assert_eq!(doc.status, 403);
        // The list of environments shows only its own.
        let listed = send(
            plain,
            "GET",
            &format!("{url}/api/v1/config/environments"),
            "",
            &h,
        );
        assert_eq!(listed.status, 200, "{}", listed.body);
        let ids: Vec<i64> = serde_json::from_str::<Vec<serde_json::Value>>(&listed.body)
            .unwrap()
            .iter()
            .map(|e| e["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, [2], "{}", listed.body);
    }
    // Unlimited, the list holds both.
    let rita = basic("rita", PASSWORDS[0].1);
    let all = send(
        plain,
        "GET",
        &format!("{url}/api/v1/config/environments"),
        "",
        &[("authorization", rita.as_str())],
    );
    assert!(
        all.body.contains("\"id\":1") && all.body.contains("\"id\":2"),
        "{}",
        all.body
    );
    site.finish();
}

/// Expired, revoked, wrong, unknown: 401 saying so, counted in /metrics.
#[test]
fn refused_credentials_say_why_and_are_counted() {
    let site = site();
    let (plain, url) = (&site.plain, &site.url);
    let a = accounts();
    let none = lookup(plain, url, 1, &[]);
    assert_eq!(none.status, 401, "{}", none.body);
    // A Keystone project keystone.projects does not list: refused.
    let stray = lookup(plain, url, 1, &[("x-auth-token", "ks-stray")]);
    assert_eq!(stray.status, 401, "{}", stray.body);
    for part in [
        "keystone:sam@Default",
        "elsewhere",
        "which keystone.projects does not list",
    ] {
        assert!(stray.body.contains(part), "{part}: {}", stray.body);
    }
    let old = lookup(plain, url, 1, &[("authorization", &bearer(&a.expired))]);
    assert_eq!(old.status, 401);
    assert!(
        old.body.contains("expired at 2020-01-01T00:00:00Z"),
        "{}",
        old.body
    );
    let gone = lookup(plain, url, 1, &[("authorization", &bearer(&a.revoked))]);
    assert_eq!(gone.status, 401);
    assert!(gone.body.contains("revoked"), "{}", gone.body);
    let wrong = lookup(plain, url, 1, &[("authorization", &basic("rita", "guess"))]);
    assert_eq!(wrong.status, 401);
    assert!(wrong.body.contains("wrong password"), "{}", wrong.body);
    // A certificate the CA signed but no rule names; Keystone refusals.
    let stranger = lookup(&site.pki.client(Some(&site.stranger_cert)), url, 1, &[]);
    assert_eq!(stranger.status, 401, "{}", stranger.body);
    assert_eq!(
        lookup(plain, url, 1, &[("x-auth-token", "ks-unknown")]).status,
        401
    );
    let nobody = lookup(plain, url, 1, &[("x-auth-token", "ks-nobody")]);
    assert_eq!(nobody.status, 401);
    assert!(
        nobody.body.contains("none of the Keystone roles"),
        "{}",
        nobody.body
    );
    // Failures show in /metrics.
    let metrics = send(
        plain,
        "GET",
        &format!("{url}/metrics"),
        "",
        &[("authorization", &bearer(&a.read_token))],
    );
    assert!(
        metrics
            .body
            .contains("hierad_auth_failures_total{reason=\"missing\"}"),
        "{}",
        metrics.body
    );
    assert!(
        metrics
            .body
            .contains("hierad_auth_failures_total{reason=\"expired\"} 1"),
        "{}",
        metrics.body
    );
    site.finish();
}

/// Keystone validations are cached until expiry; Keystone down is 503,
/// never a pass.
#[test]
fn keystone_validations_are_cached_and_keystone_down_is_503() {
    let site = site();
    let (plain, url) = (&site.plain, &site.url);
    let reader = [("x-auth-token", "ks-reader")];
    assert_eq!(lookup(plain, url, 1, &reader).status, 200);
    let before = site.keystone.validations.load(Ordering::Relaxed);
    assert_eq!(lookup(plain, url, 1, &reader).status, 200);
    assert_eq!(site.keystone.validations.load(Ordering::Relaxed), before);
    site.keystone.stop();
    let down = lookup(plain, url, 1, &[("x-auth-token", "ks-fresh")]);
    assert_eq!(down.status, 503, "{}", down.body);
    assert!(down.body.contains("Keystone"), "{}", down.body);
    site.finish();
}

#[test]
fn the_cli_reads_over_tls_with_each_kind_of_client_credentials() {
    let site = site();
    cli_over_tls(&site.url, site.dir.path(), &accounts().read_token);
    site.finish();
}

/// `hierad config get` over https with each kind of client credentials.
fn cli_over_tls(url: &str, d: &Path, token: &str) {
    let get = |extra: &[&str], env: &[(&str, &str)]| {
        let mut command = Command::new(HIERAD);
        command
            .args(["config", "get", "--server", url, "--cacert"])
            .arg(d.join("ca.pem"))
            .args("--env 1 --resource astute --key aodh.db_password".words())
            .args(extra);
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().unwrap()
    };
    let pw = d.join("rita.pw");
    let token_file = d.join("cli.token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let token_file = token_file.to_str().unwrap();
    let (cert, key) = (d.join("reader.pem"), d.join("reader.key"));
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    type Flags<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);
    let ways: [Flags; 5] = [
        (&[], &[("HIERAD_TOKEN", token)]),
        (&["--token-file", token_file], &[]),
        (&[], &[("HIERAD_TOKEN_FILE", token_file)]),
        (
            &["--user", "rita", "--password-file", pw.to_str().unwrap()],
            &[],
        ),
        (&["--client-cert", cert, "--client-key", key], &[]),
    ];
    for (extra, env) in ways {
        let out = get(extra, env);
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains(SECRET),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = get(&[], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("authentication required"),
        "{err}"
    );
}

#[test]
fn listening_beyond_loopback_needs_auth_or_insecure() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    let out = Command::new(HIERAD)
        .args(["serve", "--no-sample", "--listen", "0.0.0.0:0", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without authentication"),
        "{err}"
    );
    assert!(err.contains("--auth FILE"), "{err}");
    let args = format!(
        "--no-sample --listen 0.0.0.0:0 --insecure --db {}",
        db.display()
    );
    let server = Server::start(&args, &[]);
    let log = server.stop();
    assert!(
        log.contains("--insecure: serving without authentication"),
        "{log}"
    );
}
