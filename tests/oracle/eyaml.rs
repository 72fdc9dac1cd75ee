//! hierad's `ENC[PKCS7,…]` blocks against the real hiera-eyaml (Debian's
//! `hiera-eyaml`, `eyaml` on PATH): keys made by `eyaml createkeys` are
//! read, blocks each one encrypts the other decrypts, and what cannot be
//! decrypted is refused naming where it is, never showing it.

use crate::binary;
use crate::tools;
use std::path::{Path, PathBuf};

/// A key pair `eyaml createkeys` made in a folder of its own.
struct Keys {
    _dir: tempfile::TempDir,
    private: PathBuf,
    public: PathBuf,
}

fn create_keys() -> Keys {
    let dir = tempfile::tempdir().unwrap();
    let out = tools::command("eyaml")
        .arg("createkeys")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", binary::text(&out.stderr));
    let private = dir.path().join("keys/private_key.pkcs7.pem");
    let public = dir.path().join("keys/public_key.pkcs7.pem");
    assert!(
        private.is_file() && public.is_file(),
        "eyaml createkeys wrote its keys"
    );
    Keys {
        _dir: dir,
        private,
        public,
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `eyaml encrypt -o string -s text` with `keys`.
fn eyaml_encrypt(keys: &Keys, text: &str, output: &str) -> String {
    let out = tools::command("eyaml")
        .args(["encrypt", "-o", output, "-s", text])
        .args(["--pkcs7-public-key", path(&keys.public)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", binary::text(&out.stderr));
    binary::text(&out.stdout)
}

/// `eyaml decrypt -s text` with `keys`.
fn eyaml_decrypt(keys: &Keys, text: &str) -> String {
    let out = tools::command("eyaml")
        .args(["decrypt", "-s", text])
        .args(["--pkcs7-private-key", path(&keys.private)])
        .args(["--pkcs7-public-key", path(&keys.public)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", binary::text(&out.stderr));
    binary::text(&out.stdout)
}

/// `hierad args…` with `stdin`, the key files only as `args` name them
/// (no `HIERAD_EYAML_*` of the shell running the tests).
fn hierad(args: &[&str], stdin: &str) -> std::process::Output {
    let mut command = binary::command(args);
    for var in [
        "HIERAD_EYAML_PRIVATE_KEY",
        "HIERAD_EYAML_PUBLIC_KEY",
        "HIERAD_EYAML_OLD_PRIVATE_KEYS",
    ] {
        command.env_remove(var);
    }
    binary::output(command, Some(stdin))
}

fn hierad_decrypt(keys: &Keys, text: &str) -> std::process::Output {
    let private = path(&keys.private);
    hierad(
        &["secrets", "decrypt", "--eyaml-private-key", private],
        text,
    )
}

const PLAINTEXTS: &[&str] = &["s3cret", "pässwörd with spaces", "two\nlines", "x"];

#[test]
fn blocks_eyaml_makes_hierad_decrypts() {
    let keys = create_keys();
    for plain in PLAINTEXTS {
        for output in ["string", "block"] {
            let block = eyaml_encrypt(&keys, plain, output);
            assert!(block.contains("ENC[PKCS7,MII"), "{block}");
            assert!(plain.len() < 4 || !block.contains(plain), "{block}");
            // As the value of a YAML key would hold it, text around it (a
            // block's lines as eyaml cuts them: newlines, indentation).
            let text = format!("url: pg://nova:{}@db\n", block.trim());
            let out = hierad_decrypt(&keys, &text);
            let got = binary::succeeded(&"secrets decrypt", out);
            assert_eq!(
                got,
                format!("url: pg://nova:{plain}@db\n"),
                "{output} block"
            );
        }
    }
}

#[test]
fn blocks_hierad_makes_eyaml_decrypts() {
    let keys = create_keys();
    for plain in PLAINTEXTS {
        let block = binary::ok(&[
            "secrets",
            "encrypt",
            "-o",
            "string",
            "--eyaml-public-key",
            path(&keys.public),
            plain,
        ]);
        assert!(block.starts_with("ENC[PKCS7,MII"), "{block}");
        assert!(plain.len() < 4 || !block.contains(plain), "{block}");
        // eyaml prints with Ruby's puts: one newline unless one ends it.
        let want = if plain.ends_with('\n') {
            plain.to_string()
        } else {
            format!("{plain}\n")
        };
        assert_eq!(eyaml_decrypt(&keys, block.trim_end()), want);
    }
    // Written as eyaml's OpenSSL call writes it: the same envelope, the
    // same recipient (issuer and serial number of eyaml's certificate),
    // algorithms and parameters, up to the encrypted key (random).
    let theirs = eyaml_encrypt(&keys, "s3cret", "string");
    let public = path(&keys.public);
    let ours = binary::ok(&[
        "secrets",
        "encrypt",
        "-o",
        "string",
        "--eyaml-public-key",
        public,
        "s3cret",
    ]);
    let cut = theirs
        .find("BQAEggEA")
        .expect("RSA, NULL parameters, 256-byte key")
        + 8;
    assert_eq!(ours[..cut], theirs[..cut]);
    assert_eq!(ours.trim_end().len(), theirs.trim_end().len());
    // The other sources: a file, whole, and stdin.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw.txt");
    std::fs::write(&file, "from a file\n").unwrap();
    let block = binary::ok(&[
        "secrets",
        "encrypt",
        "-o",
        "string",
        "--eyaml-public-key",
        public,
        "--file",
        path(&file),
    ]);
    assert_eq!(eyaml_decrypt(&keys, block.trim_end()), "from a file\n");
    let args = [
        "secrets",
        "encrypt",
        "-o",
        "string",
        "--eyaml-public-key",
        public,
    ];
    let block = binary::succeeded(&"stdin", hierad(&args, "from stdin"));
    assert_eq!(eyaml_decrypt(&keys, block.trim_end()), "from stdin\n");
    // Encrypting reads no private key, even one the shell names.
    let mut command = binary::command(&args);
    command.env("HIERAD_EYAML_PRIVATE_KEY", dir.path().join("absent.pem"));
    let block = binary::succeeded(&"no private key", binary::output(command, Some("x")));
    assert_eq!(eyaml_decrypt(&keys, block.trim_end()), "x\n");
}

/// hierad prints what `eyaml encrypt` prints, each output form and a
/// label, the base64 aside (it differs on every run).
#[test]
fn hierad_prints_blocks_as_eyaml_does() {
    let keys = create_keys();
    let shape = |text: &str| {
        let re = regex::Regex::new(r"[A-Za-z0-9+/=]{8,}").unwrap();
        // The line structure, every base64 run as one mark.
        let lines: Vec<String> = text
            .lines()
            .map(|l| re.replace_all(l, "B").into_owned())
            .collect();
        (lines, text.lines().map(str::len).collect::<Vec<_>>())
    };
    for (output, label) in [
        ("examples", None),
        ("block", None),
        ("block", Some("pw")),
        ("string", Some("pw")),
        ("examples", Some("pw")),
    ] {
        let mut eyaml = vec![
            "encrypt",
            "-o",
            output,
            "-s",
            "s3cret",
            "--pkcs7-public-key",
            path(&keys.public),
        ];
        let mut ours_args = vec![
            "secrets",
            "encrypt",
            "-o",
            output,
            "--eyaml-public-key",
            path(&keys.public),
            "s3cret",
        ];
        if let Some(label) = label {
            eyaml.extend(["-l", label]);
            ours_args.extend(["-l", label]);
        }
        let out = tools::command("eyaml").args(&eyaml).output().unwrap();
        let theirs = binary::text(&out.stdout);
        let ours = binary::ok(&ours_args);
        assert!(theirs.contains("ENC[PKCS7,"), "{theirs}");
        // Same lines, same lengths: a 2048-bit key's block is as long.
        assert_eq!(
            shape(&ours),
            shape(&theirs),
            "-o {output} {label:?}:\n{ours}\n---\n{theirs}"
        );
    }
}

#[test]
fn what_cannot_be_decrypted_is_named_not_shown() {
    let keys = create_keys();
    let other = create_keys();
    let foreign = eyaml_encrypt(&other, "elsewhere", "string");
    let foreign = foreign.trim_end();
    let refusal = binary::refusal(&"foreign", hierad_decrypt(&keys, foreign));
    assert_eq!(
        refusal,
        "cannot decrypt the value at stdin: a block was encrypted for another key: no eyaml private key given decrypts it"
    );
    // The old key, listed for a rotation, opens it.
    let old = path(&other.private);
    let args = [
        "secrets",
        "decrypt",
        "--eyaml-private-key",
        path(&keys.private),
    ];
    let rotation = hierad(
        &[&args[..], &["--eyaml-old-private-key", old]].concat(),
        foreign,
    );
    assert_eq!(binary::succeeded(&"rotation", rotation), "elsewhere\n");

    let corrupt = format!("{}AAAA]", &foreign[..foreign.len() - 40]);
    let refusal = binary::refusal(&"corrupt", hierad_decrypt(&keys, &corrupt));
    assert!(
        refusal.starts_with("cannot decrypt the value at stdin: a block "),
        "{refusal}"
    );
    assert!(!refusal.contains(&foreign[10..40]), "{refusal}");
    // eyaml refuses it too.
    let out = tools::command("eyaml")
        .args([
            "decrypt",
            "-s",
            &corrupt,
            "--pkcs7-private-key",
            path(&keys.private),
            "--pkcs7-public-key",
            path(&keys.public),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success() || !binary::text(&out.stdout).contains("elsewhere"));
}

#[test]
fn key_files_are_checked_at_start() {
    let keys = create_keys();
    let other = create_keys();
    use std::os::unix::fs::PermissionsExt as _;
    // eyaml leaves its private key 0600, which hierad asks for.
    let mode = std::fs::metadata(&keys.private)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    std::fs::set_permissions(&keys.private, std::fs::Permissions::from_mode(0o644)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let serve = |private: &Path, public: &Path| {
        binary::refused(&[
            "serve",
            "--db",
            path(&db),
            "--listen",
            "127.0.0.1:0",
            "--eyaml-private-key",
            path(private),
            "--eyaml-public-key",
            path(public),
        ])
    };
    let refusal = serve(&keys.private, &keys.public);
    assert!(
        refusal.contains(&format!(
            "cannot read the eyaml private key {}",
            keys.private.display()
        )) && refusal.contains("chmod 600"),
        "{refusal}"
    );
    std::fs::set_permissions(&keys.private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let refusal = serve(&keys.private, &other.public);
    assert!(
        refusal.contains("is not the certificate of the private key"),
        "{refusal}"
    );
    assert!(!db.exists(), "refused before the database is opened");
}
