//! Every block of a stored value decrypted, for a principal the auth file
//! lets see plaintext (`decrypt = true`), and values encrypted at key
//! paths before they are stored.
//!
//! As hiera-eyaml's backend does: only String values are read (Hash keys
//! never), each block of a string replaced by its plaintext and the text
//! around it kept; the plaintext is not searched for blocks again.
//! Failures are per value: the error names the key path and what is wrong,
//! never the block or a plaintext, and other values still answer.

use super::block::{self, Piece};
use super::keyring::{KeyError, Keyring};
use super::pkcs7::Failure;
use crate::configdb::keypath::{self, KeyPath, KeyPathError};
use crate::hiera::{Hash, Value};
use std::sync::Arc;

/// Why one value cannot be decrypted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Problem {
    #[error("a block is not base64")]
    NotBase64,
    #[error("a block {0}")]
    Block(#[from] Failure),
    #[error("a block's encryption scheme {0:?} is not supported; hierad reads PKCS7 blocks")]
    Scheme(String),
    #[error("a block's plaintext is not UTF-8 text")]
    NotText,
    #[error("the server has no eyaml private key (--eyaml-private-key)")]
    NoPrivateKey,
}

/// A value that cannot be decrypted, and where it is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot decrypt the value at {path}: {problem}")]
pub(crate) struct SecretError {
    /// The key path (`nova.db_password`, `users.0.password`).
    pub path: String,
    pub problem: Problem,
}

/// Decrypts with one loaded [`Keyring`], remembering what it decrypted
/// (in memory only, bounded). A reload of the keys makes a new one, so
/// the cache goes with the keys that filled it.
pub(crate) struct Decrypter {
    keyring: Arc<Keyring>,
    /// A String holding blocks → the String decrypted.
    cache: moka::sync::Cache<Arc<str>, Arc<str>>,
    /// Whether values are read as hiera-eyaml's backends read them
    /// ([`Decrypter::for_hiera`]), not as `eyaml decrypt` reads a text.
    hiera: bool,
}

impl std::fmt::Debug for Decrypter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decrypter")
            .field("keyring", &self.keyring)
            .field("cached", &self.cache.entry_count())
            .finish()
    }
}

/// What a cache entry is taken to weigh beyond its text: moka's own
/// bookkeeping and the two `Arc`s.
const ENTRY_OVERHEAD: u32 = 96;

impl Decrypter {
    /// A decrypter over `keyring` caching at most about `cache_bytes` of
    /// blocks and plaintexts.
    pub(crate) fn new(keyring: Arc<Keyring>, cache_bytes: u64) -> Decrypter {
        let cache = moka::sync::Cache::builder()
            .weigher(|k: &Arc<str>, v: &Arc<str>| {
                u32::try_from(k.len() + v.len())
                    .unwrap_or(u32::MAX)
                    .saturating_add(ENTRY_OVERHEAD)
            })
            .max_capacity(cache_bytes)
            .build();
        Decrypter {
            keyring,
            cache,
            hiera: false,
        }
    }

    /// A decrypter reading values as hiera-eyaml's Hiera backends do
    /// (eyaml_backend.rb in <https://github.com/voxpupuli/hiera-eyaml>,
    /// `encrypted?` and `decrypt`): a String is decrypted only if one of
    /// its lines holds `ENC[` and, after it, `]` (a block cut over lines
    /// with no such line is answered as stored), and the plaintext loses
    /// one line ending at its end (Ruby's `chomp`), so YAML's folded
    /// block form answers the value without the newline it adds.
    pub(crate) fn for_hiera(keyring: Arc<Keyring>, cache_bytes: u64) -> Decrypter {
        Decrypter {
            hiera: true,
            ..Decrypter::new(keyring, cache_bytes)
        }
    }

    /// The keys it decrypts with.
    pub(crate) fn keyring(&self) -> &Keyring {
        &self.keyring
    }

    /// `value` with every block decrypted, or `None` when it holds no
    /// block (nothing is copied: the answer as stored is the answer).
    /// `path` is where `value` is, for the error.
    ///
    /// # Errors
    ///
    /// The first block that cannot be decrypted.
    pub(crate) fn decrypt_value(
        &self,
        value: &Value,
        path: &str,
    ) -> Result<Option<Value>, SecretError> {
        // Most values hold no block: they cost one scan, no allocation.
        if !holds_block(value) {
            return Ok(None);
        }
        let mut at = vec![path.to_owned()];
        self.walk(value, &mut at)
            .map_err(|(problem, at)| SecretError {
                path: at.join("."),
                problem,
            })
    }

    /// A document with every block decrypted, each of its keys on its
    /// own: a key whose value cannot be decrypted is kept as stored and
    /// its error listed, the others answer. `None`: no block anywhere.
    pub(crate) fn decrypt_document(&self, doc: &Hash) -> (Option<Hash>, Vec<SecretError>) {
        let mut out: Option<Hash> = None;
        let mut errors = Vec::new();
        for (index, (key, value)) in doc.iter().enumerate() {
            match self.decrypt_value(value, &segment(key)) {
                Ok(Some(plain)) => {
                    let copy = out.get_or_insert_with(|| doc.clone());
                    if let Some((_, slot)) = copy.get_index_mut(index) {
                        *slot = plain;
                    }
                }
                Ok(None) => {}
                Err(error) => errors.push(error),
            }
        }
        (out, errors)
    }

    fn walk(
        &self,
        value: &Value,
        at: &mut Vec<String>,
    ) -> Result<Option<Value>, (Problem, Vec<String>)> {
        match value {
            Value::String(text) => self
                .decrypt_string(text)
                .map(|plain| plain.map(Value::String))
                .map_err(|problem| (problem, at.clone())),
            Value::Array(items) => {
                let mut out: Option<Vec<Value>> = None;
                for (i, item) in items.iter().enumerate() {
                    at.push(i.to_string());
                    let plain = self.walk(item, at)?;
                    at.pop();
                    if let Some(plain) = plain {
                        out.get_or_insert_with(|| items.clone())[i] = plain;
                    }
                }
                Ok(out.map(Value::Array))
            }
            Value::Hash(hash) => {
                let mut out: Option<Hash> = None;
                for (i, (key, item)) in hash.iter().enumerate() {
                    at.push(segment(key));
                    let plain = self.walk(item, at)?;
                    at.pop();
                    if let Some(plain) = plain {
                        if let Some((_, slot)) =
                            out.get_or_insert_with(|| hash.clone()).get_index_mut(i)
                        {
                            *slot = plain;
                        }
                    }
                }
                Ok(out.map(Value::Hash))
            }
            _ => Ok(None),
        }
    }

    /// `text` with its blocks decrypted; `None`: it holds none. The
    /// cache is keyed by the whole string, so a string decrypted before
    /// costs one lookup, no parsing.
    fn decrypt_string(&self, text: &str) -> Result<Option<String>, Problem> {
        if !block::may_hold_block(text) {
            return Ok(None);
        }
        if let Some(plain) = self.cache.get(text) {
            return Ok(Some(plain.as_ref().to_owned()));
        }
        if self.hiera && !text.lines().any(block::opens_and_closes) {
            return Ok(None);
        }
        let pieces = block::pieces(text);
        if !pieces.iter().any(|p| matches!(p, Piece::Block { .. })) {
            return Ok(None);
        }
        let mut out = String::with_capacity(text.len());
        for piece in pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Block { scheme, base64 } => out.push_str(&self.open(scheme, base64)?),
            }
        }
        if self.hiera {
            let kept = out
                .strip_suffix("\r\n")
                .or_else(|| out.strip_suffix('\n'))
                .or_else(|| out.strip_suffix('\r'))
                .map(str::len);
            if let Some(kept) = kept {
                out.truncate(kept);
            }
        }
        self.cache.insert(text.into(), out.as_str().into());
        Ok(Some(out))
    }

    fn open(&self, scheme: Option<&str>, base64: &str) -> Result<String, Problem> {
        if let Some(scheme) = scheme.filter(|s| !s.eq_ignore_ascii_case(block::SCHEME)) {
            return Err(Problem::Scheme(scheme.to_owned()));
        }
        if !self.keyring.can_decrypt() {
            return Err(Problem::NoPrivateKey);
        }
        let der = block::decode(base64).ok_or(Problem::NotBase64)?;
        let bytes = self.keyring.decrypt(&der)?;
        String::from_utf8(bytes).map_err(|_| Problem::NotText)
    }
}

/// Whether any String in `value` may hold a block (Hash keys are never
/// read).
pub(crate) fn holds_block(value: &Value) -> bool {
    match value {
        Value::String(text) => block::may_hold_block(text),
        Value::Array(items) => items.iter().any(holds_block),
        Value::Hash(hash) => hash.values().any(holds_block),
        _ => false,
    }
}

/// A Hash key as a key path segment: quoted when it holds a dot, as
/// key paths are written.
pub(super) fn segment(key: &Value) -> String {
    match key {
        Value::String(s) if s.contains('.') => format!("'{s}'"),
        Value::String(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        other => format!("({})", other.class_name()),
    }
}

/// Why values cannot be encrypted; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EncryptError {
    #[error(transparent)]
    KeyPath(#[from] KeyPathError),
    #[error("--encrypt {0}: the document has no value there to encrypt")]
    Missing(String),
    #[error(
        "--encrypt {key}: the value there is {class}; only Strings are encrypted, as eyaml does"
    )]
    NotAString { key: String, class: &'static str },
    #[error(transparent)]
    Key(#[from] KeyError),
}

/// `doc` with the String at each of `keys` encrypted for `keyring`'s
/// public key, in place; a value that already is one block is left as
/// it is. Returns how many values were encrypted.
///
/// # Errors
///
/// A key path that does not lead to a String, or no public key; `doc` is
/// then unchanged.
pub(crate) fn encrypt_at(
    doc: &mut Hash,
    keys: &[KeyPath],
    keyring: &Keyring,
) -> Result<usize, EncryptError> {
    let mut plain = Vec::new();
    for key in keys {
        match keypath::get(doc, key)? {
            Some(Value::String(text)) => {
                let whole = matches!(block::pieces(text).as_slice(), [Piece::Block { .. }]);
                if !whole {
                    plain.push((key, text.clone()));
                }
            }
            Some(other) => {
                return Err(EncryptError::NotAString {
                    key: key.to_string(),
                    class: other.class_name(),
                });
            }
            None => return Err(EncryptError::Missing(key.to_string())),
        }
    }
    let mut sealed = Vec::with_capacity(plain.len());
    for (key, text) in &plain {
        sealed.push((*key, keyring.encrypt(text)?));
    }
    for (key, block) in sealed {
        keypath::set(doc, key, Value::String(block))?;
    }
    Ok(plain.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::keyring::tests::write_pair;

    fn hash(pairs: Vec<(&str, Value)>) -> Hash {
        pairs.into_iter().map(|(k, v)| (Value::str(k), v)).collect()
    }

    #[test]
    fn for_hiera_values_are_read_as_hiera_eyaml_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let ring = Arc::new(Keyring::load(&write_pair(dir.path(), "a")).unwrap());
        let block = ring.encrypt("pw\n").unwrap();
        let hiera = Decrypter::for_hiera(Arc::clone(&ring), 1 << 20);
        let text = Decrypter::new(Arc::clone(&ring), 1 << 20);
        // One line ending is chomped from the whole: the plaintext's own,
        // or the one YAML's folded form adds after the block.
        let whole = Value::String(block.clone());
        assert_eq!(hiera.decrypt_value(&whole, "k"), Ok(Some(Value::str("pw"))));
        let folded = Value::String(format!("{block}\n"));
        assert_eq!(
            hiera.decrypt_value(&folded, "k"),
            Ok(Some(Value::str("pw\n")))
        );
        assert_eq!(
            text.decrypt_value(&folded, "k"),
            Ok(Some(Value::str("pw\n\n")))
        );
        // No line holds both `ENC[` and `]`: answered as stored.
        let cut = Value::String(format!("{}\n{}", &block[..40], &block[40..]));
        assert_eq!(hiera.decrypt_value(&cut, "k"), Ok(None));
        assert_eq!(text.decrypt_value(&cut, "k"), Ok(Some(Value::str("pw\n"))));
    }

    #[test]
    fn every_block_is_decrypted_and_failures_name_their_place() {
        let dir = tempfile::tempdir().unwrap();
        let ring = Arc::new(Keyring::load(&write_pair(dir.path(), "a")).unwrap());
        let other = Keyring::load(&write_pair(dir.path(), "b")).unwrap();
        let pw = ring.encrypt("s3cret").unwrap();
        let foreign = other.encrypt("elsewhere").unwrap();
        let decrypter = Decrypter::new(Arc::clone(&ring), 1 << 20);
        // Cut as a YAML block would leave it: newlines and indentation.
        let folded = format!("{}\n  {}", &pw[..40], &pw[40..]);
        let doc = hash(vec![
            ("plain", Value::str("no secret")),
            (
                "db",
                Value::Hash(hash(vec![(
                    "url",
                    Value::str(format!("pg://nova:{folded}@db/nova")),
                )])),
            ),
            (
                "list",
                Value::Array(vec![Value::Int(1), Value::str(pw.clone())]),
            ),
            (
                "broken",
                Value::Array(vec![Value::str("x"), Value::str(foreign.clone())]),
            ),
            ("garbled", Value::str("ENC[PKCS7,QUJDRA==]")),
            ("gpg", Value::str("ENC[GPG,QUJDRA==]")),
        ]);
        assert_eq!(
            decrypter.decrypt_value(&doc[&Value::str("plain")], "plain"),
            Ok(None)
        );
        let (plain, errors) = decrypter.decrypt_document(&doc);
        let plain = plain.unwrap();
        assert_eq!(
            plain[&Value::str("db")],
            Value::Hash(hash(vec![("url", Value::str("pg://nova:s3cret@db/nova"))]))
        );
        assert_eq!(
            plain[&Value::str("list")],
            Value::Array(vec![Value::Int(1), Value::str("s3cret")])
        );
        assert_eq!(
            plain[&Value::str("broken")],
            doc[&Value::str("broken")],
            "kept as stored"
        );
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "cannot decrypt the value at broken.1: a block was encrypted for another key: no eyaml private key given decrypts it",
                "cannot decrypt the value at garbled: a block is not PKCS#7 enveloped data (not DER ContentInfo)",
                "cannot decrypt the value at gpg: a block's encryption scheme \"GPG\" is not supported; hierad reads PKCS7 blocks",
            ]
        );
        for message in &messages {
            assert!(!message.contains("QUJD") && !message.contains(&foreign[10..30]));
        }
        // An older key still opens what it encrypted.
        let files = crate::secrets::KeyFiles {
            old_private_keys: other.files().private_key.iter().cloned().collect(),
            ..ring.files().clone()
        };
        let both = Decrypter::new(Arc::new(Keyring::load(&files).unwrap()), 1 << 20);
        assert_eq!(
            both.decrypt_value(&Value::str(foreign), "k"),
            Ok(Some(Value::str("elsewhere")))
        );
        // Without a private key nothing is decrypted.
        let public = crate::secrets::KeyFiles {
            private_key: None,
            ..ring.files().clone()
        };
        let none = Decrypter::new(Arc::new(Keyring::load(&public).unwrap()), 1 << 20);
        assert_eq!(
            none.decrypt_value(&Value::str(pw), "k")
                .unwrap_err()
                .problem,
            Problem::NoPrivateKey
        );
    }

    #[test]
    fn the_cache_stays_within_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let ring = Arc::new(Keyring::load(&write_pair(dir.path(), "a")).unwrap());
        let bound = 8 * 1024;
        let decrypter = Decrypter::new(Arc::clone(&ring), bound);
        let blocks: Vec<String> = (0..60)
            .map(|i| ring.encrypt(&format!("value {i}")).unwrap())
            .collect();
        for _ in 0..3 {
            for (i, block) in blocks.iter().enumerate() {
                let plain = decrypter
                    .decrypt_value(&Value::str(block.clone()), "k")
                    .unwrap();
                assert_eq!(plain, Some(Value::str(format!("value {i}"))));
            }
        }
        decrypter.cache.run_pending_tasks();
        let weight = decrypter.cache.weighted_size();
        assert!(weight > 0 && weight <= bound, "{weight}");
        // One block is about 500 bytes of base64: far fewer than 60 fit.
        assert!(decrypter.cache.entry_count() < 20);
    }

    #[test]
    fn values_are_encrypted_at_their_key_paths() {
        let dir = tempfile::tempdir().unwrap();
        let ring = Keyring::load(&write_pair(dir.path(), "a")).unwrap();
        let mut doc = hash(vec![
            (
                "db",
                Value::Hash(hash(vec![
                    ("password", Value::str("pw")),
                    ("port", Value::Int(5432)),
                ])),
            ),
            ("token", Value::str("t0k")),
        ]);
        let keys = |k: &[&str]| {
            k.iter()
                .map(|k| KeyPath::parse(k).unwrap())
                .collect::<Vec<_>>()
        };
        let before = doc.clone();
        let err = encrypt_at(&mut doc, &keys(&["token", "db.port"]), &ring).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--encrypt db.port: the value there is Integer; only Strings are encrypted, as eyaml does"
        );
        let err = encrypt_at(&mut doc, &keys(&["db.user"]), &ring).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--encrypt db.user: the document has no value there to encrypt"
        );
        assert_eq!(doc, before, "unchanged");
        assert_eq!(
            encrypt_at(&mut doc, &keys(&["token", "db.password"]), &ring).unwrap(),
            2
        );
        // Encrypted once: a second pass leaves the blocks alone.
        let sealed = doc.clone();
        assert_eq!(encrypt_at(&mut doc, &keys(&["token"]), &ring).unwrap(), 0);
        assert_eq!(doc, sealed);
        let decrypter = Decrypter::new(Arc::new(ring), 1 << 20);
        let (plain, errors) = decrypter.decrypt_document(&doc);
        assert!(errors.is_empty());
        assert_eq!(plain.unwrap(), before);
    }

    /// Figures, not a verdict (no timed assertion): what one value costs
    /// the walk, decrypted once and then from the cache, against the same
    /// value without a block, measured in the same run:
    /// `cargo test --lib secrets::walk::tests::figures -- --ignored --nocapture`.
    #[test]
    #[ignore = "prints figures"]
    fn figures() {
        use std::time::Instant;
        let dir = tempfile::tempdir().unwrap();
        let ring = Arc::new(Keyring::load(&write_pair(dir.path(), "a")).unwrap());
        let decrypter = Decrypter::new(Arc::clone(&ring), 1 << 20);
        let secret = Value::str(ring.encrypt("s3cret-password").unwrap());
        let plain = Value::str("x".repeat(500));
        let rounds = 20_000u32;
        let time = |value: &Value| {
            let start = Instant::now();
            for _ in 0..rounds {
                std::hint::black_box(decrypter.decrypt_value(value, "k").unwrap());
            }
            start.elapsed() / rounds
        };
        let first = Instant::now();
        decrypter.decrypt_value(&secret, "k").unwrap();
        let first = first.elapsed();
        let (plain, cached) = (time(&plain), time(&secret));
        println!(
            "first decryption {first:?}; then per value: cached {cached:?}, no block {plain:?} ({:.1}x)",
            cached.as_secs_f64() / plain.as_secs_f64()
        );
    }
}
