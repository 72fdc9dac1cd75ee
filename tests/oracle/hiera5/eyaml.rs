//! `lookup_key: eyaml_lookup_key` (hiera-eyaml's Hiera 5 function,
//! Debian's `hiera-eyaml`) through `hierad puppet-lookup` against the
//! real `puppet lookup` over the same files: a key pair `eyaml createkeys`
//! made, data files `eyaml encrypt --eyaml` encrypted (a block alone, in
//! text, in a Hash and an Array, folded over lines, with interpolation
//! in its plaintext), merged with a yaml_data entry; key files that are
//! not there (read only when a block is found) and an entry without a
//! path. Exit status, stdout and stderr byte for byte.
//!
//! Then the environment moved into a server by `hierad import-environment`
//! (its `.eyaml` files as resources of their own beside the `.yaml` ones),
//! the server holding the same key pair: `hierad puppet-lookup --server`
//! with a token that may decrypt answers as Puppet does over the files,
//! and one that may not gets the blocks as stored. Last, Puppet itself
//! through the shim (`hierad::data_hash`) with the hiera.yaml the import
//! printed and that token: the same answers again, a plaintext holding
//! `%{…}` interpolated by Puppet as eyaml_lookup_key would.

use super::server::{copy_dir as copy_data, shim_environment};
use super::{BATCH, assert_answers_as_puppet, hierad, job, puppet};
use crate::binary;
use crate::server::TestServer;
use crate::tools;
use std::path::Path;

const HIERA: &str = r#"version: 5
defaults:
  datadir: data
hierarchy:
  - name: "Secrets"
    lookup_key: eyaml_lookup_key
    paths:
      - "roles/%{facts.role}.eyaml"
      - "common.eyaml"
    options:
      pkcs7_private_key: "%{facts.keydir}/private_key.pkcs7.pem"
      pkcs7_public_key: keys/public_key.pkcs7.pem
  - name: "Common"
    data_hash: yaml_data
    path: "common.yaml"
"#;

/// Encrypted by `eyaml encrypt --eyaml` (each `DEC::PKCS7[…]!` becomes
/// its `ENC[PKCS7,…]` block).
const COMMON_EYAML: &str = r#"---
lookup_options:
  merged:
    merge: deep
plain: just text
secret: DEC::PKCS7[s3cret]!
with_interp: DEC::PKCS7[family is %{facts.os.family}]!
around: "before DEC::PKCS7[middle]! after"
list:
  - DEC::PKCS7[one]!
  - two
nested:
  user: admin
  pass: DEC::PKCS7[hunter2]!
  "%{facts.os.family}_key": v
number: 42
merged:
  a: DEC::PKCS7[from eyaml]!
folded: >
  DEC::PKCS7[folded one]!
"#;

const ROLE_EYAML: &str = r#"---
secret: DEC::PKCS7[web secret]!
merged:
  c: DEC::PKCS7[from the role]!
"#;

/// A yaml_data file: its block is answered as stored.
const COMMON_YAML: &str = r#"---
merged:
  b: from yaml
only_yaml: here
yaml_block: DEC::PKCS7[not decrypted]!
"#;

/// Key files that are not there: read only when a block is found.
const NO_KEYS: &str = r#"version: 5
hierarchy:
  - name: "Secrets"
    lookup_key: eyaml_lookup_key
    path: "common.eyaml"
    options:
      pkcs7_private_key: nokeys/private_key.pkcs7.pem
      pkcs7_public_key: nokeys/public_key.pkcs7.pem
"#;

/// No path: eyaml_lookup_key raises, and Puppet prints it.
const NO_PATH: &str = r#"version: 5
hierarchy:
  - name: "Somewhere"
    lookup_key: eyaml_lookup_key
    uri: "http://example.com/"
"#;

/// The cases `hierad puppet-lookup --server` answers as Puppet does over
/// the files. Not asked of the server: a plaintext holding `%{…}` (the
/// server decrypts after the lookup and answers it as it is:
/// docs/security.md), a yaml_data file's block (the server decrypts it
/// too), explanations (their values are shown as stored) and the two
/// environments the import refuses or reads with other keys.
const SERVER_CASES: &[&str] = &[
    "plain",
    "secret",
    "around",
    "list",
    "nested",
    "nested.pass",
    "--render-as json nested",
    "number",
    "merged",
    "--merge first merged",
    "folded",
    "only_yaml",
    "no_such_key",
    "--merge unique list",
    "--facts other.json secret",
];

/// The cases Puppet answers through the shim as over the files: the
/// server's, and the plaintext Puppet interpolates.
const SHIM_CASES: &[&str] = &[
    "plain",
    "secret",
    "with_interp",
    "around",
    "list",
    "nested",
    "merged",
    "folded",
    "only_yaml",
    "no_such_key",
    "--facts other.json secret",
];

const CASES: &[&str] = &[
    "plain",
    "secret",
    "with_interp",
    "around",
    "list",
    "nested",
    "nested.pass",
    "--render-as json nested",
    "number",
    "merged",
    "--merge first merged",
    "folded",
    "only_yaml",
    "yaml_block",
    "no_such_key",
    "--merge unique list",
    "--explain secret",
    "--explain merged",
    "--explain nested.pass",
    "--facts other.json secret",
    "--environment nokeys plain",
    "--environment nokeys secret",
    "--environment nopath plain",
];

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `text`'s `DEC::PKCS7[…]!` blocks encrypted by `eyaml encrypt --eyaml`.
fn encrypted(root: &Path, text: &str) -> String {
    let plain = root.join("plain.eyaml");
    write(&plain, text);
    let out = tools::command("eyaml")
        .args(["encrypt", "--eyaml"])
        .arg(&plain)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", binary::text(&out.stderr));
    let text = binary::text(&out.stdout);
    assert!(
        text.contains("ENC[PKCS7,") && !text.contains("DEC::"),
        "eyaml encrypted every block: {text}"
    );
    text
}

#[test]
fn eyaml_lookup_key_answers_as_puppet_lookup_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    tools::eyaml_createkeys(root);
    let env = root.join("envs/production");
    write(&env.join("hiera.yaml"), HIERA);
    write(
        &env.join("data/common.eyaml"),
        &encrypted(root, COMMON_EYAML),
    );
    write(
        &env.join("data/roles/web.eyaml"),
        &encrypted(root, ROLE_EYAML),
    );
    write(&env.join("data/common.yaml"), &encrypted(root, COMMON_YAML));
    write(&root.join("envs/nokeys/hiera.yaml"), NO_KEYS);
    write(
        &root.join("envs/nokeys/data/common.eyaml"),
        &encrypted(root, "plain: in the clear\nsecret: DEC::PKCS7[x]!\n"),
    );
    write(&root.join("envs/nopath/hiera.yaml"), NO_PATH);
    // The private key's folder comes from a fact: options interpolate.
    write(
        &root.join("facts.json"),
        r#"{"os": {"family": "Debian"}, "role": "web", "keydir": "keys"}"#,
    );
    write(
        &root.join("other.json"),
        r#"{"os": {"family": "RedHat"}, "role": "db", "keydir": "keys"}"#,
    );
    std::fs::create_dir_all(root.join("conf")).unwrap();

    let jobs: Vec<Vec<String>> = CASES
        .iter()
        .enumerate()
        .map(|(run, case)| job(root, run, case))
        .collect();
    let expected = puppet(root, &jobs, BATCH);
    assert_eq!(expected.len(), CASES.len(), "one Puppet answer per case");

    // Guards against passing vacuously: Puppet decrypted (the plaintexts
    // are in its answers, no block is), and failed where it should.
    let all_out: String = expected.iter().map(|o| o.stdout.as_str()).collect();
    for plaintext in [
        "s3cret",
        "web secret",
        "family is Debian",
        "before middle after",
        "hunter2",
        "folded one",
        "from the role",
    ] {
        assert!(
            all_out.contains(plaintext),
            "Puppet answered {plaintext:?}: {all_out}"
        );
    }
    let at = |case: &str| &expected[CASES.iter().position(|c| *c == case).unwrap()];
    assert!(at("yaml_block").stdout.contains("ENC[PKCS7,"));
    assert_eq!(at("--environment nokeys plain").status, 0);
    assert_eq!(at("--environment nokeys secret").status, 1);
    assert!(
        at("--environment nopath plain")
            .stderr
            .contains("eyaml_lookup_key")
    );

    assert_answers_as_puppet(root, CASES, &jobs, &expected);

    // A private key others may read is refused, saying why (Puppet reads
    // it; hierad reads such a key nowhere).
    let loose = root.join("loose");
    std::fs::create_dir_all(&loose).unwrap();
    for name in ["private_key.pkcs7.pem", "public_key.pkcs7.pem"] {
        std::fs::copy(root.join("keys").join(name), loose.join(name)).unwrap();
    }
    let mut mode = std::fs::metadata(loose.join("private_key.pkcs7.pem"))
        .unwrap()
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o644);
    std::fs::set_permissions(loose.join("private_key.pkcs7.pem"), mode).unwrap();
    write(
        &root.join("envs/loose/hiera.yaml"),
        &HIERA.replace("%{facts.keydir}", "loose"),
    );
    copy_data(&env.join("data"), &root.join("envs/loose/data"));
    let loose_args = jobs[CASES.iter().position(|c| *c == "secret").unwrap()]
        .iter()
        .map(|a| {
            if a == "production" {
                "loose".to_owned()
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>();
    let got = hierad(root, &loose_args);
    assert_eq!(got.status, 1, "{got:?}");
    assert!(
        got.stderr.starts_with("hierad: ")
            && got.stderr.contains("loose/private_key.pkcs7.pem")
            && got.stderr.contains("chmod 600"),
        "{got:?}"
    );

    // Into a server that holds the same key pair.
    let db = root.join("hierad.db");
    let imported = binary::output(
        binary::command(&[
            "import-environment",
            env.to_str().unwrap(),
            "--env",
            "1",
            "--db",
            db.to_str().unwrap(),
        ]),
        None,
    );
    assert!(imported.status.success(), "{imported:?}");
    let printed = binary::text(&imported.stdout);
    assert!(
        printed.contains("uri: \"common.eyaml\"") && printed.contains("uri: \"common\""),
        "the eyaml files are resources of their own: {printed}"
    );
    let auth = root.join("auth.toml");
    let token = |name: &str, decrypt: bool| {
        let mut args = vec!["auth", "add-token", "--file", auth.to_str().unwrap()];
        args.extend(["--role", "read", name]);
        if decrypt {
            args.push("--decrypt");
        }
        let out = binary::output(binary::command(&args[..]), None);
        assert!(out.status.success(), "{out:?}");
        binary::text(&out.stdout).trim().to_owned()
    };
    let (master, reader) = (token("master", true), token("reader", false));
    let keys = root.join("keys");
    let server = TestServer::start_on(
        &db,
        &[
            "--no-sample",
            "--auth",
            auth.to_str().unwrap(),
            "--eyaml-private-key",
            keys.join("private_key.pkcs7.pem").to_str().unwrap(),
            "--eyaml-public-key",
            keys.join("public_key.pkcs7.pem").to_str().unwrap(),
        ][..],
    );
    let ask = |case: &str, token: &str| {
        let mut args = vec![
            "puppet-lookup",
            "--server",
            server.url.as_str(),
            "--env",
            "1",
        ];
        args.extend(["--node", "web1.example.com"]);
        let mine = crate::shell::shell_split(case).expect("case splits");
        if !mine.iter().any(|w| w == "--facts") {
            args.extend(["--facts", "facts.json"]);
        }
        args.extend(mine.iter().map(String::as_str));
        let mut command = binary::command(&args[..]);
        command.current_dir(root).env("HIERAD_TOKEN", token);
        binary::output(command, None)
    };
    let mut problems = Vec::new();
    for case in SERVER_CASES {
        let want = at(case);
        let got = ask(case, &master);
        let got = (got.status.code().unwrap_or(-1), binary::text(&got.stdout));
        if got != (want.status, want.stdout.clone()) {
            problems.push(format!(
                "puppet-lookup --server {case}\n  puppet: {want:?}\n  hierad: {got:?}"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} server cases differ:\n{}",
        problems.len(),
        SERVER_CASES.len(),
        problems.join("\n")
    );
    // A reader that may not decrypt gets the block as stored.
    let out = ask("secret", &reader);
    let text = binary::text(&out.stdout);
    assert!(
        out.status.success() && text.contains("ENC[PKCS7,") && !text.contains("secret"),
        "{out:?}"
    );

    // Puppet through the shim, with the printed hiera.yaml pointed at
    // this server and the decrypting token.
    let default_url = "url: \"http://localhost:8750\"";
    assert!(printed.contains(default_url), "{printed}");
    let shimmed = printed.replace(
        default_url,
        &format!("url: \"{}\"\n      token: \"{master}\"", server.url),
    );
    shim_environment(&root.join("envs/viashim"), &shimmed);
    let shim_jobs: Vec<Vec<String>> = SHIM_CASES
        .iter()
        .enumerate()
        .map(|(i, case)| {
            let mut args = jobs[CASES.iter().position(|c| c == case).unwrap()].clone();
            let run = args.iter().position(|a| a == "--vardir").unwrap() + 1;
            args[run] = root
                .join(format!("run-shim-{i}/var"))
                .to_string_lossy()
                .into_owned();
            let env = args.iter().position(|a| a == "production").unwrap();
            args[env] = "viashim".into();
            args
        })
        .collect();
    let through_shim = puppet(root, &shim_jobs, BATCH);
    let mut problems = Vec::new();
    for (case, got) in SHIM_CASES.iter().zip(&through_shim) {
        let want = at(case);
        if (got.status, &got.stdout) != (want.status, &want.stdout) {
            problems.push(format!(
                "puppet lookup {case} through the shim\n  files: {want:?}\n  shim:  {got:?}"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} shim cases differ:\n{}",
        problems.len(),
        SHIM_CASES.len(),
        problems.join("\n")
    );
}
