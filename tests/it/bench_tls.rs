//! `hierad bench` against the real server over TLS with an auth file,
//! briefly (a few hundred requests): a bearer token, Basic with
//! the password from a file and a client certificate each load it with no
//! failed request, the cache counters read from /metrics with the same
//! credentials, a write principal's writer; and the clear one-line
//! refusals: a wrong token, a wrong password, a read principal's writer,
//! https without the CA that signed the server's certificate.

use crate::binary::{Args, command, output, succeeded, text};
use crate::pki::Pki;
use crate::server::TestServer;
use serde_json::Value;
use std::path::Path;

/// A TLS server on the sample with an auth file: `rita` (read, Basic),
/// tokens `read` and `write`, and the client certificate `reader.test`
/// (read).
struct Site {
    dir: tempfile::TempDir,
    _server: TestServer,
    url: String,
    read_token: String,
    write_token: String,
}

fn auth(args: &str) -> String {
    let all = format!("auth {args}");
    succeeded(&all, output(command(&all), None))
        .trim()
        .to_owned()
}

fn site() -> Site {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pki = Pki::new(d);
    let (cert, key) = pki.issue("server", "localhost", &["localhost"], false);
    pki.issue("reader", "reader.test", &["reader.test"], true);
    let file = d.join("auth.toml");
    let f = file.to_str().unwrap();
    std::fs::write(d.join("rita.pw"), "read-pw-Xq81\n").unwrap();
    auth(&format!(
        "add-user --file {f} --role read --password-file {} rita",
        d.join("rita.pw").display()
    ));
    let read_token = auth(&format!("add-token --file {f} --role read reader"));
    let write_token = auth(&format!("add-token --file {f} --role write writer"));
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("\n[[client_cert]]\ncn = \"reader.test\"\nrole = \"read\"\n");
    std::fs::write(&file, text).unwrap();
    let server = TestServer::start_on(
        &d.join("hierad.db"),
        &format!(
            "--auth {f} --tls-cert {} --tls-key {} --tls-client-ca {}",
            cert.display(),
            key.display(),
            d.join("ca.pem").display()
        ),
    );
    // The certificate names localhost, not 127.0.0.1.
    let url = server.url.replace("127.0.0.1", "localhost");
    assert!(url.starts_with("https://localhost:"), "{url}");
    Site {
        dir,
        _server: server,
        url,
        read_token,
        write_token,
    }
}

fn path(d: &Path, name: &str) -> String {
    d.join(name).to_str().unwrap().to_owned()
}

/// `hierad bench --json` against the site with `extra` flags and
/// environment: its report, which must show `requests` lookups all
/// answered.
fn bench(site: &Site, extra: &(impl Args + ?Sized), env: &[(&str, &str)], requests: u64) -> Value {
    let d = site.dir.path();
    let ca = path(d, "ca.pem");
    let line = format!(
        "bench --json --server {} --cacert {ca} -n {requests} -c 4 --warmup 0s",
        site.url
    );
    let extra = extra.words();
    let mut args = line.words();
    args.extend(extra.iter().cloned());
    let mut cmd = command(&args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let r: Value = serde_json::from_str(&succeeded(&args, output(cmd, None))).unwrap();
    assert_eq!(r["requests"], requests, "{extra:?}: {r}");
    assert_eq!(r["errors"]["total"], 0, "{extra:?}: {r}");
    let answers = &r["answers"];
    assert!(answers["found"].as_u64().unwrap() > 0, "{extra:?}: {r}");
    assert_eq!(
        answers["found"].as_u64().unwrap() + answers["not_found"].as_u64().unwrap(),
        requests,
        "{extra:?}: {r}"
    );
    // /metrics was read around the run with the same credentials.
    let cache = &r["cache"];
    assert_eq!(
        cache["hits"].as_u64().unwrap() + cache["misses"].as_u64().unwrap(),
        requests,
        "{extra:?}: {cache}"
    );
    r
}

/// The one line a failed `hierad bench` prints (exit status 1), without
/// its `hierad: ` prefix.
fn refused(site: &Site, extra: &(impl Args + ?Sized), with_ca: bool) -> String {
    let ca = path(site.dir.path(), "ca.pem");
    let mut args = format!("bench --server {} -n 50 --warmup 0s", site.url).words();
    if with_ca {
        args.extend(["--cacert".to_owned(), ca]);
    }
    args.extend(extra.words());
    let mut cmd = command(&args);
    cmd.env_remove("HIERAD_TOKEN");
    let out = output(cmd, None);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
    assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
    stderr
        .trim_end()
        .strip_prefix("hierad: ")
        .unwrap_or_else(|| panic!("{args:?}: {stderr}"))
        .to_owned()
}

#[test]
fn bench_over_tls_with_each_way_of_authenticating() {
    let site = site();
    let d = site.dir.path();
    bench(&site, &["--token", &site.read_token], &[], 300);
    bench(
        &site,
        &[],
        &[("HIERAD_TOKEN", site.read_token.as_str())],
        200,
    );
    bench(
        &site,
        &["--user", "rita", "--password-file", &path(d, "rita.pw")],
        &[],
        200,
    );
    bench(
        &site,
        &format!(
            "--client-cert {} --client-key {}",
            path(d, "reader.pem"),
            path(d, "reader.key")
        ),
        &[],
        200,
    );
    // A write principal's writer publishes versions meanwhile.
    let r = bench(
        &site,
        &["--token", &site.write_token, "--write-every", "20ms"],
        &[],
        300,
    );
    let writes = &r["writes"];
    assert!(writes["count"].as_u64().unwrap() >= 1, "{writes}");
    assert_eq!(writes["errors"], 0, "{writes}");
}

#[test]
fn bench_refusals_are_one_clear_line() {
    let site = site();
    let d = site.dir.path();
    let err = refused(&site, &["--token", "hierad_not-a-token"], true);
    assert!(
        err.contains(": the server answered 401 unknown token") && err.contains("--token"),
        "{err}"
    );
    std::fs::write(d.join("wrong.pw"), "not-her-password\n").unwrap();
    let err = refused(
        &site,
        &["--user", "rita", "--password-file", &path(d, "wrong.pw")],
        true,
    );
    assert!(
        err.contains(": the server answered 401 unknown user or wrong password"),
        "{err}"
    );
    let err = refused(
        &site,
        &["--token", &site.read_token, "--write-every", "50ms"],
        true,
    );
    assert!(
        err.starts_with("the writer's PUT /api/v1/config/environments/1/resources/")
            && err.contains("the server answered 403")
            && err.contains("has the role read"),
        "{err}"
    );
    let err = refused(&site, &["--token", &site.read_token], false);
    assert!(
        err.starts_with(&format!("cannot connect to {}: TLS failed: ", site.url))
            && err.contains("give --cacert FILE"),
        "{err}"
    );
    let err = refused(
        &site,
        &format!(
            "--token {} --cacert {}",
            site.read_token,
            path(d, "missing.pem")
        ),
        false,
    );
    assert!(
        err.starts_with("cannot read the CA file (--cacert)"),
        "{err}"
    );
    // No token at all: the server's challenge, named as such.
    let err = refused(&site, &[], true);
    assert!(err.contains("401") && err.contains("--user"), "{err}");
}

/// `hierad bench visible` speaks TLS with the CLI's credentials: a write
/// principal's rounds are all seen; a read principal's first write is
/// refused with the server's reason.
#[test]
fn bench_visible_over_tls() {
    let site = site();
    let ca = path(site.dir.path(), "ca.pem");
    let visible = |token: &str| {
        let args = [
            "bench", "visible", "--write", &site.url, "--read", &site.url, "--cacert", &ca,
            "--token", token, "-n", "3", "--json",
        ];
        let mut cmd = command(&args);
        cmd.env_remove("HIERAD_TOKEN");
        (args.map(str::to_owned), output(cmd, None))
    };
    let (args, out) = visible(&site.write_token);
    let figures: Value = serde_json::from_str(&succeeded(&args, out)).unwrap();
    assert_eq!(figures["writes"], 3, "{figures}");
    assert!(
        figures["reads_per_write"].as_f64().unwrap() >= 1.0,
        "{figures}"
    );
    let (_, out) = visible(&site.read_token);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("write 0 through https://localhost:")
            && stderr.contains("has the role read")
            && stderr.contains("needs write"),
        "{stderr}"
    );
}

/// bench/tls.sh's bare TLS server: `bench baseline-server` with the
/// server's certificate and key answers over TLS (hierad's rustls
/// configuration) with the body it is given, every request of a bench
/// run, and names https in its `listening on` line.
#[test]
fn the_bare_baseline_server_speaks_tls() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (cert, key) = Pki::new(d).issue("server", "localhost", &["localhost"], false);
    let body = br#"{"found":true,"value":"the same bytes as hierad's mean answer"}"#;
    std::fs::write(d.join("body.json"), body).unwrap();
    let mut child = command(&format!(
        "bench baseline-server --listen 127.0.0.1:0 --body {} --tls-cert {} --tls-key {}",
        path(d, "body.json"),
        cert.display(),
        key.display()
    ))
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let line = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .next()
        .unwrap()
        .unwrap();
    let url = line
        .strip_prefix("listening on https://127.0.0.1:")
        .map(|port| format!("https://localhost:{port}"));
    let generated_dir = path(d, "gen");
    let generated = command(&["bench", "generate", "--nodes", "3", &generated_dir]);
    succeeded(&"bench generate", output(generated, None));
    let plan = path(d, "gen/bench-plan.json");
    let ca = path(d, "ca.pem");
    let args = url.as_deref().map(|url| {
        [
            "bench", "--json", "--server", url, "--cacert", &ca, "--plan", &plan, "-n", "100",
            "-c", "2", "--warmup", "0s",
        ]
    });
    let report = args.map(|args| succeeded(&args, output(command(&args), None)));
    let _ = child.kill();
    let _ = child.wait();
    assert!(url.is_some(), "not a TLS listener: {line}");
    let r: Value = serde_json::from_str(&report.unwrap()).unwrap();
    assert_eq!(r["requests"], 100, "{r}");
    assert_eq!(r["errors"]["total"], 0, "{r}");
    assert_eq!(r["bytes_received"], 100 * body.len() as u64, "{r}");
}
