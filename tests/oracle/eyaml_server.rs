//! The server's decrypted answers against the real `hiera` with
//! hiera-eyaml's backend over the same YAML files: a data tree whose
//! values hold blocks `eyaml encrypt` made (whole values, parts of
//! strings, in arrays and hashes, interpolated into other values) is
//! imported into `hierad serve`, and every key is looked up with each
//! resolution by a principal with `decrypt = true`, then by one without
//! (who gets the blocks as stored, never a plaintext).

use crate::binary;
use crate::server::{TestServer, call};
use crate::tools;
use serde_json::{Value as Json, json};
use std::path::Path;

const MASTER: &str = "hierad_master-token";
const READER: &str = "hierad_reader-token";
const ADMIN: &str = "hierad_admin-token";

fn sha256(text: &str) -> String {
    use std::fmt::Write as _;
    let out = tools::command("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(text.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    let mut hex = String::new();
    write!(
        hex,
        "{}",
        binary::text(&out.stdout).split(' ').next().unwrap()
    )
    .unwrap();
    hex
}

fn auth_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("auth.toml");
    let entry = |name: &str, role: &str, token: &str, decrypt: bool| {
        format!(
            "[[token]]\nname = \"{name}\"\nrole = \"{role}\"\nsha256 = \"{}\"\ndecrypt = {decrypt}\n",
            sha256(token)
        )
    };
    let text = [
        entry("admin", "admin", ADMIN, false),
        entry("master", "read", MASTER, true),
        entry("reader", "read", READER, false),
    ]
    .concat();
    std::fs::write(&path, text).unwrap();
    path
}

fn encrypt(keys: &Path, text: &str, output: &str) -> String {
    let out = tools::command("eyaml")
        .args(["encrypt", "-o", output, "-s", text])
        .arg("--pkcs7-public-key")
        .arg(keys.join("public_key.pkcs7.pem"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", binary::text(&out.stderr));
    binary::text(&out.stdout).trim().to_owned()
}

/// The plaintexts the tree holds encrypted.
const PLAINTEXTS: &[&str] = &[
    "db-s3cret",
    "n1-only-s3cret",
    "deep-s3cret",
    "p\u{e4}ss w\u{f6}rd",
    "tr4iling-s3cret",
];

/// The tree: `common` and `nodes/n1`, blocks in every place eyaml reads.
fn write_tree(root: &Path, keys: &Path) {
    let data = root.join("data");
    std::fs::create_dir_all(data.join("nodes")).unwrap();
    let [db, node, deep, spaced, trailing] = PLAINTEXTS else {
        unreachable!()
    };
    let common = format!(
        "db_password: {}\n\
         db_url: \"postgres://nova:%{{hiera('db_password')}}@db\"\n\
         spaced: {}\n\
         block_form: >\n    {}\n\
         cut_block: \"{}\"\n\
         trailing: {}\n\
         users:\n  - name: a\n    password: \"pw: {}\"\n\
         nested:\n  deep:\n    secret: {}\n  plain: visible\n\
         list:\n  - {}\n  - plain\n\
         plain: nothing secret\n",
        encrypt(keys, db, "string"),
        encrypt(keys, spaced, "string"),
        encrypt(keys, deep, "block")
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("\n    "),
        // A block cut where no line holds both `ENC[` and `]`: hiera-eyaml
        // answers it as stored.
        {
            let block = encrypt(keys, spaced, "string");
            format!("{}\\n{}", &block[..40], &block[40..])
        },
        encrypt(keys, &format!("{trailing}\n"), "string"),
        encrypt(keys, db, "string"),
        encrypt(keys, deep, "string"),
        encrypt(keys, node, "string"),
    );
    std::fs::write(data.join("common.yaml"), common).unwrap();
    let n1 = format!(
        "db_password: {}\nlist:\n  - {}\nnested:\n  deep:\n    node: {}\n",
        encrypt(keys, node, "string"),
        encrypt(keys, db, "string"),
        encrypt(keys, node, "string"),
    );
    std::fs::write(data.join("nodes/n1.yaml"), n1).unwrap();
}

const KEYS: &[&str] = &[
    "cli_secret",
    "db_password",
    "db_url",
    "spaced",
    "block_form",
    "cut_block",
    "trailing",
    "users",
    "nested",
    "list",
    "plain",
];
const RESOLUTIONS: &[&str] = &["priority", "array", "hash"];

/// What the real Hiera with the eyaml backend answers for each key and
/// resolution: `{ok: value}` or `{err: [class, message]}`.
fn hiera_answers(root: &Path, keys: &Path) -> Json {
    let config = root.join("hiera-eyaml.yaml");
    std::fs::write(
        &config,
        format!(
            ":backends:\n  - eyaml\n:logger: noop\n:hierarchy:\n  - \"nodes/%{{fqdn}}\"\n  - common\n\
             :eyaml:\n  :datadir: {}\n  :extension: yaml\n  :pkcs7_private_key: {}\n  :pkcs7_public_key: {}\n",
            root.join("data").display(),
            keys.join("private_key.pkcs7.pem").display(),
            keys.join("public_key.pkcs7.pem").display(),
        ),
    )
    .unwrap();
    let script = r##"
        require 'hiera'; require 'json'
        hiera = Hiera.new(config: ARGV[0])
        out = {}
        ARGV[1].split(',').each do |key|
          %w[priority array hash].each do |res|
            begin
              out["#{key} #{res}"] = {ok: hiera.lookup(key, nil, {'fqdn' => 'n1'}, nil, res.to_sym)}
            rescue Exception => e
              out["#{key} #{res}"] = {err: [e.class.name, e.message]}
            end
          end
        end
        puts JSON.generate(out)
    "##;
    let out = tools::command("ruby")
        .args(["-e", script])
        .arg(&config)
        .arg(KEYS.join(","))
        .output()
        .expect("ruby with hiera and hiera-eyaml");
    assert!(out.status.success(), "{}", binary::text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn lookup(server: &TestServer, token: &str, key: &str, res: &str) -> (u16, Json) {
    let request = json!({"environment": 1, "key": key, "resolution": res, "scope": {"fqdn": "n1"}});
    let reply = call(
        "POST",
        &format!("{}/api/v1/lookup", server.url),
        Some(&request.to_string()),
        &[
            ("content-type", "application/json"),
            ("authorization", &format!("Bearer {token}")),
        ],
    );
    (reply.status, reply.json())
}

/// A server with the eyaml keys and the auth file, the tree imported.
fn serve(dir: &Path, keys: &Path) -> TestServer {
    let auth = auth_file(dir);
    let db = dir.join("hierad.db");
    let private = keys.join("private_key.pkcs7.pem");
    let public = keys.join("public_key.pkcs7.pem");
    let args = [
        "--no-sample",
        "--auth",
        auth.to_str().unwrap(),
        "--eyaml-private-key",
        private.to_str().unwrap(),
        "--eyaml-public-key",
        public.to_str().unwrap(),
    ];
    let server = TestServer::start_logging(&db, &args[..], "info,hierad=debug");
    let config_only = dir.join("config");
    std::fs::create_dir_all(&config_only).unwrap();
    std::fs::write(
        config_only.join("hiera.yaml"),
        ":backends:\n  - yaml\n:hierarchy:\n  - \"nodes/%{fqdn}\"\n  - common\n",
    )
    .unwrap();
    let data = dir.join("tree/data");
    for tree in [config_only.as_path(), data.as_path()] {
        let mut command = binary::command(&[
            "import",
            tree.to_str().unwrap(),
            "--env",
            "1",
            "--server",
            &server.url,
        ]);
        command.env("HIERAD_TOKEN", ADMIN);
        binary::succeeded(&"import", binary::output(command, None));
    }
    server
}

#[test]
fn decrypted_lookups_match_hiera_with_the_eyaml_backend() {
    let dir = tempfile::tempdir().unwrap();
    let keys = tools::eyaml_createkeys(dir.path());
    write_tree(&dir.path().join("tree"), &keys);
    let expected = hiera_answers(&dir.path().join("tree"), &keys);
    let server = serve(dir.path(), &keys);
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for key in KEYS {
        for res in RESOLUTIONS {
            let want = &expected[format!("{key} {res}")];
            let (status, answer) = lookup(&server, MASTER, key, res);
            let got = match status {
                200 => {
                    json!({"ok": if answer["found"] == true { answer["value"].clone() } else { Json::Null }})
                }
                422 => {
                    // hiera-eyaml's backend words its type mismatches
                    // without the key (eyaml_backend.rb); hierad as
                    // Hiera's YAML backend does, with it.
                    let message = answer["message"].as_str().unwrap_or_default();
                    let message = match message.split_once(" for key '") {
                        Some((head, rest)) => {
                            format!("{head}{}", &rest[rest.find("':").unwrap() + 1..])
                        }
                        None => message.to_owned(),
                    };
                    json!({"err": [answer["class"], message]})
                }
                other => panic!("{other} for {key} {res}: {answer}"),
            };
            if &got != want {
                mismatches.push(format!("{key} {res}:\n  hiera:  {want}\n  hierad: {got}"));
            }
            compared += 1;
        }
    }
    assert!(
        mismatches.is_empty(),
        "{compared} compared:\n{}",
        mismatches.join("\n")
    );
    // Not vacuous: plaintexts were answered, and by both.
    let all = expected.to_string();
    for plain in PLAINTEXTS {
        assert!(
            all.contains(&serde_json::to_string(plain).unwrap()[1..]),
            "hiera answered {plain}: {all}"
        );
    }
}

/// Every answer and every log line of a run for a principal without
/// `decrypt`, and the server's whole log with a decrypting one too: no
/// plaintext anywhere but in the decrypting principal's answers.
#[test]
fn no_plaintext_reaches_a_non_decrypting_principal_or_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let keys = tools::eyaml_createkeys(dir.path());
    write_tree(&dir.path().join("tree"), &keys);
    let mut server = serve(dir.path(), &keys);
    let mut seen = String::new();
    let read = |token: &str, path: &str| {
        call(
            "GET",
            &format!("{}{path}", server.url),
            None,
            &[("authorization", &format!("Bearer {token}"))],
        )
    };
    let get = |token: &str, path: &str| {
        let reply = read(token, path);
        format!("{} {}\n", reply.status, reply.body)
    };
    let reads = [
        "/api/v1/config/environments/1/resources/common/values?effective=true",
        "/api/v1/config/environments/1/resources/common/values?effective=true&key=nested.deep",
        "/api/v1/config/environments/1/resources/common/values",
        "/api/v1/config/environments/1/resources/common/values/history",
        "/api/v1/data/1/common",
        "/api/v1/data/1/nodes/n1",
        "/metrics",
    ];
    // A secret written through the CLI, encrypted by the server.
    let mut command = binary::command(&[
        "config",
        "set",
        "--env",
        "1",
        "--resource",
        "common",
        "--key",
        "cli_secret",
        "--value",
        "cl1-s3cret",
        "--encrypt",
        "cli_secret",
        "--server",
        &server.url,
    ]);
    command.env("HIERAD_TOKEN", ADMIN);
    seen.push_str(&binary::succeeded(
        &"config set --encrypt",
        binary::output(command, None),
    ));
    let (_, answer) = lookup(&server, MASTER, "cli_secret", "priority");
    assert_eq!(answer["value"], "cl1-s3cret", "{answer}");
    let mut master_saw = String::new();
    for token in [READER, MASTER] {
        let out = if token == READER {
            &mut seen
        } else {
            &mut master_saw
        };
        for key in KEYS {
            for res in RESOLUTIONS {
                out.push_str(&lookup(&server, token, key, res).1.to_string());
            }
        }
        for path in reads {
            out.push_str(&get(token, path));
        }
    }
    // A decrypted whole document has no ETag (a cache keyed by it would
    // hand the plaintext to whoever revalidates); the same read without
    // decrypting keeps its own.
    for path in [
        "/api/v1/config/environments/1/resources/common/values?effective&decrypt=true",
        "/api/v1/data/1/common",
    ] {
        let etag = |token: &str| {
            let reply = read(token, path);
            assert_eq!(reply.status, 200, "{path}: {}", reply.body);
            reply.etag
        };
        assert_eq!(etag(MASTER), None, "{path}");
        assert!(etag(READER).is_some(), "{path}");
    }
    // The CLI's export: the reader's, even asking --decrypt, and the
    // master's unless it asks, keep the blocks.
    let export = |token: &str, decrypt: bool| {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("export");
        let mut args = vec![
            "export",
            target.to_str().unwrap(),
            "--env",
            "1",
            "--server",
            &server.url,
        ];
        if decrypt {
            args.push("--decrypt");
        }
        let mut command = binary::command(&args[..]);
        command.env("HIERAD_TOKEN", token);
        let mut out = binary::succeeded(&"export", binary::output(command, None));
        for file in ["common.yaml", "n1.yaml"] {
            out.push_str(&std::fs::read_to_string(walk_find(&target, file)).unwrap());
        }
        out
    };
    seen.push_str(&export(READER, false));
    seen.push_str(&export(READER, true));
    seen.push_str(&export(MASTER, false));
    let decrypted = export(MASTER, true);
    assert!(
        decrypted.contains("db-s3cret") && decrypted.contains("deep-s3cret"),
        "{decrypted}"
    );
    server.stop();
    let log = server.log();
    assert!(
        log.contains("eyaml keys loaded"),
        "the log is the server's: {log}"
    );
    assert!(
        master_saw.contains("db-s3cret"),
        "not vacuous: the master got plaintext"
    );
    assert!(seen.contains("ENC[PKCS7,MII"), "the reader got the blocks");
    for plain in PLAINTEXTS.iter().chain(&["cl1-s3cret"]) {
        assert!(!seen.contains(plain), "{plain} in an answer to the reader");
        assert!(!log.contains(plain), "{plain} in the server's log");
    }
}

/// `name` somewhere under `dir` (an export's layout has a folder per
/// level).
fn walk_find(dir: &Path, name: &str) -> std::path::PathBuf {
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        if at.ends_with(name) && at.is_file() {
            return at;
        }
        if at.is_dir() {
            stack.extend(std::fs::read_dir(&at).unwrap().map(|e| e.unwrap().path()));
        }
    }
    panic!("no {name} under {}", dir.display())
}
