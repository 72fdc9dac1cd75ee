//! `hierad secrets`: hiera-eyaml's `ENC[PKCS7,…]` blocks made and read
//! locally, with the key files `eyaml createkeys` writes
//! (docs/security.md "Secrets"); and the key flags `hierad serve` shares.

use crate::secrets::{Decrypter, KeyFiles, Keyring, Output, format_block};
use anyhow::Context as _;
use std::io::Read as _;
use std::path::PathBuf;
use std::sync::Arc;

/// The eyaml key files, for `hierad serve` and `hierad secrets`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct KeyArgs {
    /// The eyaml private key (PEM, as `eyaml createkeys` writes
    /// keys/private_key.pkcs7.pem): decrypts `ENC[PKCS7,…]` values.
    /// Refused unless only its owner may read it (chmod 600)
    #[arg(long, env = "HIERAD_EYAML_PRIVATE_KEY", value_name = "PEM")]
    pub(crate) eyaml_private_key: Option<PathBuf>,
    /// The eyaml public key: the certificate `eyaml createkeys` writes
    /// (keys/public_key.pkcs7.pem); encrypts
    #[arg(long, env = "HIERAD_EYAML_PUBLIC_KEY", value_name = "PEM")]
    pub(crate) eyaml_public_key: Option<PathBuf>,
    /// Private keys of earlier key pairs (repeated or comma-separated),
    /// tried after --eyaml-private-key: values not yet re-encrypted to
    /// the new key still decrypt during a rotation
    #[arg(
        long = "eyaml-old-private-key",
        env = "HIERAD_EYAML_OLD_PRIVATE_KEYS",
        value_name = "PEM",
        value_delimiter = ',',
        requires = "eyaml_private_key"
    )]
    pub(crate) eyaml_old_private_keys: Vec<PathBuf>,
}

impl KeyArgs {
    /// The files named; `None` when none is.
    pub(crate) fn files(&self) -> Option<KeyFiles> {
        let files = KeyFiles {
            private_key: self.eyaml_private_key.clone(),
            public_key: self.eyaml_public_key.clone(),
            old_private_keys: self.eyaml_old_private_keys.clone(),
        };
        (files != KeyFiles::default()).then_some(files)
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: SecretsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum SecretsCommand {
    /// Encrypt a string for the public key, printed as `eyaml encrypt`
    /// prints it
    Encrypt(EncryptArgs),
    /// Decrypt every `ENC[PKCS7,…]` block of a text (a block, or a whole
    /// eyaml file) with the private key, and print the text
    Decrypt(DecryptArgs),
    /// Re-encrypt every block of every latest document to the current
    /// public key, in one transaction (new versions; history keeps the old
    /// blocks: docs/security.md "Rotating the keys")
    Rotate(Box<RotateArgs>),
}

/// Where the text comes from: the argument, a file, or stdin.
#[derive(Debug, clap::Args)]
struct Input {
    /// The text; without it and without --file, stdin is read (a secret
    /// given as an argument shows in `ps` and in the shell's history)
    #[arg(value_name = "TEXT", conflicts_with = "file")]
    text: Option<String>,
    /// Read the text from this file, whole (as `eyaml -f` does)
    #[arg(long, short = 'f', value_name = "FILE")]
    file: Option<PathBuf>,
}

impl Input {
    /// The text, and how to name it in a message.
    fn read(&self) -> anyhow::Result<(String, String)> {
        if let Some(text) = &self.text {
            return Ok((text.clone(), "the argument".to_owned()));
        }
        if let Some(path) = &self.file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            return Ok((text, path.display().to_string()));
        }
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read stdin")?;
        Ok((text, "stdin".to_owned()))
    }
}

#[derive(Debug, clap::Args)]
struct EncryptArgs {
    #[command(flatten)]
    input: Input,
    /// examples: both forms, as eyaml prints them by default; string: the
    /// block on one line; block: cut into indented lines
    #[arg(long, short = 'o', value_enum, default_value = "examples")]
    output: Output,
    /// The YAML key to label the block with (eyaml's --label)
    #[arg(long, short = 'l', value_name = "KEY")]
    label: Option<String>,
    #[command(flatten)]
    keys: KeyArgs,
}

#[derive(Debug, clap::Args)]
struct DecryptArgs {
    #[command(flatten)]
    input: Input,
    #[command(flatten)]
    keys: KeyArgs,
}

#[derive(Debug, clap::Args)]
struct RotateArgs {
    #[command(flatten)]
    conn: super::args::Conn,
    /// Only this environment's documents (default: every environment's)
    #[arg(long, value_name = "ID")]
    env: Option<i64>,
    /// With --db: the new pair, and the replaced pair's private key as
    /// --eyaml-old-private-key (a server rotates with its own keys)
    #[command(flatten)]
    keys: KeyArgs,
}

/// `hierad secrets rotate`: on a server, with the server's keys; on a
/// database, with the key files given.
fn rotate(args: &RotateArgs) -> anyhow::Result<String> {
    use super::args::Target;
    let rotated = match args.conn.target() {
        Target::Server(url) => {
            let remote = crate::ops::remote::Remote::connect(
                &url,
                args.conn.timeouts(super::args::Access::Write),
                args.conn.client.auth()?,
            )?;
            remote.rotate_secrets(args.env)?
        }
        Target::Db(path) => {
            let keyring = Keyring::load(&args.keys.files().unwrap_or_default())?;
            if !keyring.can_decrypt() {
                anyhow::bail!(
                    "secrets rotate --db needs the eyaml keys: --eyaml-private-key PEM and \
                     --eyaml-public-key PEM (the new pair), and --eyaml-old-private-key PEM \
                     (the pair being replaced)"
                );
            }
            if !crate::store::is_url(&path) && !path.exists() {
                anyhow::bail!(
                    "no database at {}: give --db PATH, or --server URL",
                    path.display()
                );
            }
            let store = crate::store::open_writable(&path).with_context(|| {
                format!("cannot open the database {}", crate::store::describe(&path))
            })?;
            let author = crate::ops::local::local_author();
            crate::ops::rotate::rotate(store.as_ref(), &keyring, args.env, Some(&author))?
        }
    };
    Ok(format!(
        "re-encrypted {} blocks in {} documents",
        rotated.blocks, rotated.documents
    ))
}

/// Runs `hierad secrets …`; returns what to print.
///
/// # Errors
///
/// Unusable key files, an unreadable input, a block that cannot be
/// decrypted (named by where it is, never shown).
pub(crate) fn run(args: Args) -> anyhow::Result<String> {
    match args.command {
        SecretsCommand::Rotate(args) => rotate(&args),
        SecretsCommand::Encrypt(args) => {
            // The public key only: a private key named in the shell's
            // environment is neither needed nor read.
            let keyring = Keyring::load(&KeyFiles {
                public_key: args.keys.eyaml_public_key.clone(),
                ..KeyFiles::default()
            })?;
            let (text, _) = args.input.read()?;
            let block = keyring.encrypt(&text)?;
            Ok(format_block(&block, args.output, args.label.as_deref()))
        }
        SecretsCommand::Decrypt(args) => {
            let keyring = Keyring::load(&args.keys.files().unwrap_or_default())?;
            if !keyring.can_decrypt() {
                anyhow::bail!(
                    "decrypting needs the eyaml private key: give --eyaml-private-key PEM"
                );
            }
            let (text, name) = args.input.read()?;
            // One use: no cache to speak of.
            let decrypter = Decrypter::new(Arc::new(keyring), 0);
            let value = crate::hiera::Value::String(text);
            let plain = decrypter.decrypt_value(&value, &name)?;
            let text = match plain.unwrap_or(value) {
                crate::hiera::Value::String(text) => text,
                _ => unreachable!("a String decrypts to a String"),
            };
            // As Ruby's `puts`, which eyaml prints with: one newline,
            // unless the text ends with one (report adds it).
            Ok(match text.strip_suffix('\n') {
                Some(line) => line.to_owned(),
                None => text,
            })
        }
    }
}
