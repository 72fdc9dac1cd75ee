//! The shim end to end over hierad's own TLS and authentication (issue
//! 10): the real `hierad serve --tls-cert … --tls-client-ca … --auth FILE`,
//! its auth file made with `hierad auth`, its certificates (a CA, the
//! server's, a Puppet master's client certificate) made with the `openssl`
//! command at test time, Keystone the stand-in of tests/common/keystone.rs.
//!
//! - Puppet (`puppet lookup`) through both Hiera 5 functions gives what
//!   `yaml_data` gives with each of the shim's ways of authenticating:
//!   Basic (`user`/`password`), a bearer `token`, a `keystone_token`, and
//!   the Puppet master's certificate (`cert_file`/`key_file`), each with
//!   the `ca_file`; with a wrong password it fails naming the server.
//! - The Hiera 3 backend (tests/oracle/shim/tls_check.rb): eight threads
//!   sharing one backend give the yaml backend's answers over a few
//!   keep-alive connections; Basic credentials; a wrong token and a missing
//!   CA file are errors naming the server, never the default; `failure:
//!   stale` answers through an outage (the server stopped) what it answered
//!   before, and nothing else.

use super::env::{ENV, Hierad};
use super::oracle::{ROOT, ruby_json, shim_lib};
use super::puppet::{FUEL_LEVEL, NODE, PuppetTree, fuel_node, import, text};
use crate::keystone::FakeKeystone;
use crate::server::TestServer;
use serde_json::{Value as Json, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const USER: &str = "puppet";
const PASSWORD: &str = "pass word:1";
/// The Puppet master's certificate name (its `certname`).
const MASTER: &str = "puppet-master.test";

fn openssl(dir: &Path, args: &[&str]) {
    let out = crate::tools::command("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A throwaway CA and a certificate for 127.0.0.1 it signed: (CA file,
/// server certificate, server key).
fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=hierad test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    );
    std::fs::write(dir.join("san.cnf"), "subjectAltName = IP:127.0.0.1\n").unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            "san.cnf",
            "-out",
            "server.pem",
        ],
    );
    // A Puppet master's certificate, as the Puppet CA issues it: its
    // certname as CN, for client authentication.
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            &format!("/CN={MASTER}"),
            "-keyout",
            "master.key",
            "-out",
            "master.csr",
        ],
    );
    std::fs::write(
        dir.join("client.cnf"),
        format!("subjectAltName = DNS:{MASTER}\nextendedKeyUsage = clientAuth\n"),
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "master.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            "client.cnf",
            "-out",
            "master.pem",
        ],
    );
    (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    )
}

/// `hierad auth ARGS`: its stdout, checking it succeeded.
fn auth(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hierad"))
        .arg("auth")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hierad auth {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// The auth file: the user [`USER`], a read token (returned), the Puppet
/// master's certificate by CN, Keystone's `reader` role as `read`.
fn auth_file(dir: &Path, keystone: &FakeKeystone) -> (PathBuf, String) {
    let file = dir.join("auth.toml");
    let f = file.to_str().unwrap();
    let pw = dir.join("puppet.pw");
    std::fs::write(&pw, format!("{PASSWORD}\n")).unwrap();
    let pw = pw.to_str().unwrap();
    auth(&[
        "add-user",
        "--file",
        f,
        "--role",
        "read",
        "--password-file",
        pw,
        USER,
    ]);
    let token = auth(&["add-token", "--file", f, "--role", "read", "shim"]);
    std::fs::write(dir.join("ks.pw"), "svc-pw-Tt31\n").unwrap();
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&format!(
        "\n[[client_cert]]\ncn = \"{MASTER}\"\nrole = \"read\"\n\n\
         [keystone]\nurl = \"{}\"\nuser = \"hierad\"\npassword_file = \"{}\"\nproject = \"service\"\n\
         [keystone.roles]\nreader = \"read\"\n",
        keystone.url,
        dir.join("ks.pw").display()
    ));
    std::fs::write(&file, text).unwrap();
    (file, token)
}

#[test]
fn every_shim_option_against_hierads_own_tls_and_auth() {
    // The data goes in through a plain server on loopback; the server
    // under test serves the same database over TLS with authentication.
    let plain = Hierad::start();
    import(&plain);
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certificates(dir.path());
    let keystone = FakeKeystone::start("svc-pw-Tt31");
    let (file, token) = auth_file(dir.path(), &keystone);
    let db = plain.server.db().unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let (file, cert, key, ca_s) = (s(&file), s(&cert), s(&key), s(&ca));
    let server = TestServer::start_on(
        &db,
        &[
            "--no-sample",
            "--auth",
            &file,
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
            "--tls-client-ca",
            &ca_s,
        ],
    );
    let url = server.url.clone();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");

    // Puppet, both Hiera 5 functions, each way of authenticating.
    let with = |extra: Json| {
        let mut options = json!({"url": url, "ca_file": ca});
        for (k, v) in extra.as_object().unwrap() {
            options[k] = v.clone();
        }
        PuppetTree::with_options(&options)
    };
    let token_file = dir.path().join("puppet.token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let ways = [
        ("basic", json!({"user": USER, "password": PASSWORD})),
        ("token", json!({"token": token})),
        ("token file", json!({"token_file": token_file})),
        ("keystone", json!({"keystone_token": "ks-reader"})),
        (
            "client certificate",
            json!({"cert_file": dir.path().join("master.pem"), "key_file": dir.path().join("master.key")}),
        ),
    ];
    let keys = ["--merge", "deep", "network_scheme", "shimtest::port"];
    let refused = with(json!({"user": USER, "password": "wrong"}));
    let yaml_tree = with(json!({}));
    let expected = yaml_tree.run(&[yaml_tree.lookup("yaml", &keys)]).remove(0);
    assert!(
        expected.status == 0 && text(&expected.stdout).contains("br-mgmt"),
        "yaml_data: {expected:?}"
    );
    for (way, options) in ways {
        let tree = with(options);
        let out = tree.run(&[
            tree.lookup("hierad", &keys),
            tree.lookup("hieradkey", &keys),
        ]);
        for o in &out {
            assert_eq!(
                (o.status, text(&o.stdout)),
                (0, text(&expected.stdout)),
                "over TLS with {way}: {}",
                text(&o.stderr)
            );
        }
    }
    let out =
        refused.run(&[refused.explain("hierad", &["--default", "fallback", "shimtest::port"])]);
    let explained = text(&out[0].stdout);
    assert!(
        explained.contains(&url)
            && explained.contains("HTTP 401")
            && !explained.contains("Found key"),
        "a wrong password: {:?}",
        out[0]
    );

    // The Hiera 3 backend.
    let group = Path::new(super::cases::FIXTURES).join("fuel");
    assert_eq!(fuel_node(), group.join("nodes").join(NODE));
    let scope: Json = serde_json::from_str(
        &std::fs::read_to_string(group.join(format!("scope-{NODE}.json"))).unwrap(),
    )
    .unwrap();
    let lib = shim_lib();
    let r = ruby_json(
        &Path::new(ROOT).join("tests/oracle/shim/tls_check.rb"),
        &json!({
            "url": url, "ca_file": ca, "token": token, "user": USER, "password": PASSWORD,
            "environment": ENV, "level": FUEL_LEVEL, "config": group.join("hiera.yaml"),
            "dir": group, "scope": scope, "pid": server.pid(),
        }),
        &[("RUBYLIB", lib.to_str().unwrap())],
    );
    eprintln!("{r:#}");
    let keys = r["keys"].as_u64().unwrap();
    assert!(keys > 60 && r["found"].as_u64().unwrap() > 60, "{r}");
    let threaded = &r["threaded"];
    assert_eq!(threaded["mismatches"], json!([]), "{r}");
    assert_eq!(
        threaded["requests"], threaded["lookups"],
        "one request per lookup: {r}"
    );
    assert_eq!(
        threaded["registrations"],
        json!(1),
        "the hierarchy registered once by eight threads: {r}"
    );
    let connections = threaded["connections"].as_u64().unwrap();
    assert!(
        (1..=8).contains(&connections),
        "keep-alive: {connections} connections for {} lookups",
        threaded["lookups"]
    );
    assert_eq!(r["basic_mismatches"], json!([]), "{r}");
    let error_naming_the_server = |what: &str, needle: &str| {
        let o = &r[what];
        let message = o[1].as_str().unwrap_or("");
        assert!(
            o[0] == "error"
                && message.starts_with("PuppetX::Hierad::Error: ")
                && message.contains(&url)
                && message.contains(needle),
            "{what}: {o}"
        );
    };
    error_naming_the_server("wrong_token", "HTTP 401");
    error_naming_the_server("no_ca_file", "certificate verify failed");
    assert_eq!(
        (&r["stale_before"], &r["stale_after"]),
        (&json!(true), &json!(true)),
        "{r}"
    );
    let warnings = r["stale_warnings"].as_array().unwrap();
    assert!(
        warnings.len() == 1 && warnings[0].as_str().unwrap().contains(&url),
        "stale answers are announced: {warnings:?}"
    );
    error_naming_the_server("stale_other", "no server answered");
    error_naming_the_server("error_mode", "no server answered");
}
