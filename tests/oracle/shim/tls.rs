//! The shim over TLS with credentials: a real hierad behind a TLS
//! terminator that demands a token or Basic credentials
//! (tests/oracle/shim/tls_proxy.rb), its certificate from a CA made with the
//! `openssl` command at test time.
//!
//! - Puppet (`puppet lookup`) through both Hiera 5 functions with Basic
//!   credentials and the CA file gives what `yaml_data` gives; with a
//!   wrong password it fails naming the server.
//! - The Hiera 3 backend (tests/oracle/shim/tls_check.rb): eight threads sharing
//!   one backend give the yaml backend's answers over a few keep-alive
//!   connections; Basic credentials; a wrong token and a missing CA file
//!   are errors naming the server, never the default; `failure: stale`
//!   answers through an outage what it answered before, and nothing else.

use super::env::{ENV, Hierad};
use super::oracle::{ROOT, ruby_json, shim_lib};
use super::puppet::{FUEL_LEVEL, NODE, PuppetTree, fuel_node, import, text};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Value as Json, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

const TOKEN: &str = "s3cret-token";
const USER: &str = "puppet";
const PASSWORD: &str = "pass word:1";

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
    (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    )
}

/// tests/oracle/shim/tls_proxy.rb in front of `upstream`; killed when dropped.
struct Proxy {
    child: Child,
    url: String,
}

impl Proxy {
    fn start(cert: &Path, key: &Path, upstream: &str, accepted: &[String]) -> Proxy {
        let mut child = crate::tools::command("ruby")
            .arg(Path::new(ROOT).join("tests/oracle/shim/tls_proxy.rb"))
            .args([cert, key])
            .arg(upstream)
            .args(accepted)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the TLS proxy");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the TLS proxy said {line:?}"))
            .to_owned();
        Proxy { child, url }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn tls_credentials_threads_and_stale_answers_through_a_proxy() {
    let hierad = Hierad::start();
    import(&hierad);
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certificates(dir.path());
    let basic = format!("Basic {}", B64.encode(format!("{USER}:{PASSWORD}")));
    let proxy = Proxy::start(
        &cert,
        &key,
        hierad.url(),
        &[format!("Bearer {TOKEN}"), basic],
    );

    // Puppet, both Hiera 5 functions, Basic credentials.
    let options = |password: &str| json!({"url": proxy.url, "ca_file": ca, "user": USER, "password": password});
    let tree = PuppetTree::with_options(&options(PASSWORD));
    let refused = PuppetTree::with_options(&options("wrong"));
    let keys = ["--merge", "deep", "network_scheme", "shimtest::port"];
    let out = tree.run(&[
        tree.lookup("yaml", &keys),
        tree.lookup("hierad", &keys),
        tree.lookup("hieradkey", &keys),
        refused.explain("hierad", &["--default", "fallback", "shimtest::port"]),
    ]);
    let yaml = &out[0];
    assert!(
        yaml.status == 0 && text(&yaml.stdout).contains("br-mgmt"),
        "yaml_data: {yaml:?}"
    );
    for o in &out[1..3] {
        assert_eq!(
            (o.status, text(&o.stdout)),
            (0, text(&yaml.stdout)),
            "through TLS with Basic credentials: {}",
            text(&o.stderr)
        );
    }
    let explained = text(&out[3].stdout);
    assert!(
        explained.contains(&proxy.url)
            && explained.contains("HTTP 401")
            && !explained.contains("Found key"),
        "a wrong password: {:?}",
        out[3]
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
            "url": proxy.url, "ca_file": ca, "token": TOKEN, "user": USER, "password": PASSWORD,
            "environment": ENV, "level": FUEL_LEVEL, "config": group.join("hiera.yaml"),
            "dir": group, "scope": scope,
        }),
        &[("RUBYLIB", lib.to_str().unwrap())],
    );
    eprintln!("{r:#}");
    // Puppet's requests above went through the proxy, none refused
    // but the wrong password's.
    assert!(r["stats_before"]["requests"].as_u64().unwrap() > 10, "{r}");
    let keys = r["keys"].as_u64().unwrap();
    assert!(keys > 60 && r["found"].as_u64().unwrap() > 60, "{r}");
    let threaded = &r["threaded"];
    assert_eq!(threaded["mismatches"], json!([]), "{r}");
    assert_eq!(
        threaded["requests"], threaded["lookups"],
        "one request per lookup: {r}"
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
                && message.contains(&proxy.url)
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
        warnings.len() == 1 && warnings[0].as_str().unwrap().contains(&proxy.url),
        "stale answers are announced: {warnings:?}"
    );
    error_naming_the_server("stale_other", "no server answered");
    error_naming_the_server("error_mode", "no server answered");
}
