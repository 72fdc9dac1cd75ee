//! `hierad secrets rotate` against the real hiera-eyaml: blocks `eyaml
//! encrypt` made for an old key pair, stored in a server holding the new
//! pair (the old private key kept as `--eyaml-old-private-key`), come back
//! re-encrypted so that `eyaml decrypt` opens them with the new private
//! key and no longer with the old one; a block no key opens refuses the
//! whole rotation, naming where it is, and changes nothing.

use crate::binary;
use crate::server::{TestServer, call};
use crate::tools;
use serde_json::{Value as Json, json};
use std::path::{Path, PathBuf};

const ADMIN: &str = "hierad_admin-token";
const READER: &str = "hierad_reader-token";

fn sha256(text: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `eyaml createkeys` in `dir`: (private, public).
fn create_keys(dir: &Path) -> (PathBuf, PathBuf) {
    let keys = tools::eyaml_createkeys(dir);
    (
        keys.join("private_key.pkcs7.pem"),
        keys.join("public_key.pkcs7.pem"),
    )
}

fn encrypt(public: &Path, text: &str) -> String {
    let out = tools::command("eyaml")
        .args(["encrypt", "-o", "string", "-s", text, "--pkcs7-public-key"])
        .arg(public)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", binary::text(&out.stderr));
    binary::text(&out.stdout).trim().to_owned()
}

/// `eyaml decrypt -s BLOCK` with a pair: the plaintext, or `None` when
/// eyaml fails.
fn eyaml_decrypt(keys: &(PathBuf, PathBuf), block: &str) -> Option<String> {
    let out = tools::command("eyaml")
        .args(["decrypt", "-s", block, "--pkcs7-private-key"])
        .arg(&keys.0)
        .arg("--pkcs7-public-key")
        .arg(&keys.1)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| binary::text(&out.stdout).trim_end().to_owned())
}

fn hierad(args: &[&str], token: &str) -> std::process::Output {
    let mut command = binary::command(args);
    command.env("HIERAD_TOKEN", token);
    binary::output(command, None)
}

/// Imports the YAML files `files` (name, text) as environment `env`.
fn import(server: &TestServer, dir: &Path, env: &str, files: &[(&str, String)]) {
    let config = dir.join(format!("config{env}"));
    let data = dir.join(format!("data{env}"));
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(data.join("nodes")).unwrap();
    std::fs::write(
        config.join("hiera.yaml"),
        ":backends:\n  - yaml\n:hierarchy:\n  - \"nodes/%{fqdn}\"\n  - common\n",
    )
    .unwrap();
    for (name, text) in files {
        std::fs::write(data.join(name), text).unwrap();
    }
    for tree in [&config, &data] {
        let out = hierad(
            &[
                "import",
                tree.to_str().unwrap(),
                "--env",
                env,
                "--server",
                &server.url,
            ],
            ADMIN,
        );
        binary::succeeded(&"import", out);
    }
}

/// The value of `key` as stored (a principal without `decrypt`).
fn stored(server: &TestServer, env: i64, key: &str) -> String {
    let request = json!({"environment": env, "key": key, "scope": {"fqdn": "n1"}});
    let reply = call(
        "POST",
        &format!("{}/api/v1/lookup", server.url),
        Some(&request.to_string()),
        &[
            ("content-type", "application/json"),
            ("authorization", &format!("Bearer {READER}")),
        ],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let answer: Json = reply.json();
    answer["value"].as_str().unwrap().to_owned()
}

fn history(server: &TestServer, path: &str) -> Json {
    let reply = call(
        "GET",
        &format!(
            "{}/api/v1/config/environments/1/resources/common/values{path}",
            server.url
        ),
        None,
        &[("authorization", &format!("Bearer {ADMIN}"))],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

#[test]
fn rotated_blocks_open_with_the_new_key_only() {
    let dir = tempfile::tempdir().unwrap();
    let old = create_keys(&dir.path().join("old"));
    let new = create_keys(&dir.path().join("new"));
    let foreign = create_keys(&dir.path().join("foreign"));
    let auth = dir.path().join("auth.toml");
    std::fs::write(
        &auth,
        format!(
            "[[token]]\nname = \"admin\"\nrole = \"admin\"\nsha256 = \"{}\"\n\
             [[token]]\nname = \"reader\"\nrole = \"write\"\nsha256 = \"{}\"\n",
            sha256(ADMIN),
            sha256(READER)
        ),
    )
    .unwrap();
    let args = [
        "--no-sample",
        "--auth",
        auth.to_str().unwrap(),
        "--eyaml-private-key",
        new.0.to_str().unwrap(),
        "--eyaml-public-key",
        new.1.to_str().unwrap(),
        "--eyaml-old-private-key",
        old.0.to_str().unwrap(),
    ];
    let server = TestServer::start_on(&dir.path().join("hierad.db"), &args[..]);
    let db_block = encrypt(&old.1, "db-s3cret");
    let n1_block = encrypt(&old.1, "n1-s3cret");
    import(
        &server,
        dir.path(),
        "1",
        &[
            (
                "common.yaml",
                format!("db_password: {db_block}\nplain: x\n"),
            ),
            (
                "nodes/n1.yaml",
                format!("url: \"pg://nova:{n1_block}@db\"\n"),
            ),
            ("nodes/n2.yaml", "plain: y\n".to_owned()),
        ],
    );
    // Environment 2 holds a block no key of the server opens.
    let foreign_block = encrypt(&foreign.1, "elsewhere");
    import(
        &server,
        dir.path(),
        "2",
        &[("common.yaml", format!("api_token: {foreign_block}\n"))],
    );
    let versions = history(&server, "/history");

    // Only an admin rotates.
    let refused = binary::refusal(
        &"rotate as a writer",
        hierad(&["secrets", "rotate", "--server", &server.url], READER),
    );
    assert!(refused.contains("needs admin"), "{refused}");
    // Every environment: refused for environment 2's block, nothing written.
    let refused = binary::refusal(
        &"rotate everything",
        hierad(&["secrets", "rotate", "--server", &server.url], ADMIN),
    );
    assert!(
        refused.contains("api_token") && refused.contains("environment 2"),
        "{refused}"
    );
    assert!(!refused.contains(&foreign_block[11..40]), "{refused}");
    assert_eq!(history(&server, "/history"), versions);
    assert_eq!(stored(&server, 1, "db_password"), db_block);

    let out = hierad(
        &["secrets", "rotate", "--server", &server.url, "--env", "1"],
        ADMIN,
    );
    let said = binary::succeeded(&"rotate environment 1", out);
    assert_eq!(said.trim(), "re-encrypted 2 blocks in 2 documents");
    let db_now = stored(&server, 1, "db_password");
    assert_ne!(db_now, db_block);
    assert_eq!(eyaml_decrypt(&new, &db_now).as_deref(), Some("db-s3cret"));
    // The old key opens it no more. OpenSSL 3.2+ may answer a wrong
    // key with random bytes rather than an error (the implicit rejection
    // of PKCS#1 v1.5 padding), so what is checked is the plaintext.
    assert_ne!(
        eyaml_decrypt(&old, &db_now).as_deref(),
        Some("db-s3cret"),
        "the old key opens it no more"
    );
    let url = stored(&server, 1, "url");
    let inner = &url["pg://nova:".len()..url.len() - "@db".len()];
    assert_eq!(eyaml_decrypt(&new, inner).as_deref(), Some("n1-s3cret"));
    // A new version by the admin; the old one keeps the old block.
    let after = history(&server, "/history");
    let list = after
        .as_array()
        .or_else(|| after["versions"].as_array())
        .unwrap();
    assert_eq!(list.len(), 2, "{after}");
    assert_eq!(list[1]["author"], "token:admin", "{after}");
    let first = history(&server, "?version=1");
    assert!(first.to_string().contains(&db_block[20..60]), "{first}");

    // Writers meanwhile lose nothing: key writes to the rotated document
    // while rotations run, each of them kept.
    const WRITES: usize = 30;
    const ROTATIONS: usize = 4;
    let base = format!(
        "{}/api/v1/config/environments/1/resources/common/values",
        server.url
    );
    std::thread::scope(|scope| {
        let base = &base;
        scope.spawn(move || {
            for i in 0..WRITES {
                let reply = call(
                    "PUT",
                    &format!("{base}/keys/w{i}"),
                    Some(&i.to_string()),
                    &[
                        ("content-type", "application/json"),
                        ("authorization", &format!("Bearer {READER}")),
                    ],
                );
                assert!(reply.status < 300, "{} {}", reply.status, reply.body);
            }
        });
        for _ in 0..ROTATIONS {
            let reply = call(
                "POST",
                &format!("{}/api/v1/secrets/rotate?env=1", server.url),
                None,
                &[("authorization", &format!("Bearer {ADMIN}"))],
            );
            assert_eq!(reply.status, 200, "{}", reply.body);
            assert_eq!(reply.json()["blocks"], 2, "{}", reply.body);
        }
    });
    let reply = call(
        "GET",
        &base,
        None,
        &[("authorization", &format!("Bearer {ADMIN}"))],
    );
    let doc: Json = reply.json();
    for i in 0..WRITES {
        assert_eq!(doc[format!("w{i}")], i, "{doc}");
    }
    let db_now = doc["db_password"].as_str().unwrap();
    assert_eq!(eyaml_decrypt(&new, db_now).as_deref(), Some("db-s3cret"));
    let versions = history(&server, "/history");
    assert_eq!(
        versions.as_array().unwrap().len(),
        2 + WRITES + ROTATIONS,
        "every write and every rotation made one version"
    );

    // The same operation on the database file, with the key files.
    let db = dir.path().join("hierad.db");
    let out = binary::output(
        binary::command(&[
            "secrets",
            "rotate",
            "--db",
            db.to_str().unwrap(),
            "--env",
            "1",
            "--eyaml-private-key",
            new.0.to_str().unwrap(),
            "--eyaml-public-key",
            new.1.to_str().unwrap(),
        ]),
        None,
    );
    let said = binary::succeeded(&"rotate --db", out);
    assert_eq!(said.trim(), "re-encrypted 2 blocks in 2 documents");
}
