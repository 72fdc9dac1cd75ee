//! Every block of a document re-encrypted to the current public key
//! (`hierad secrets rotate`, docs/security.md "Rotating the keys"): each
//! block opened with the current or an older private key, its plaintext
//! sealed again for the current certificate, the text around it kept.
//! No I/O: the store's rewrite calls it on every latest document.

use super::block::{self, Piece};
use super::keyring::Keyring;
use super::walk::Problem;
use crate::hiera::{Hash, Value};

/// A block that cannot be rotated: where it is (a key path) and why,
/// never the block or its plaintext.
#[derive(Debug, thiserror::Error)]
#[error("cannot re-encrypt the value at {path}: {problem}")]
pub(crate) struct RotateError {
    pub path: String,
    pub problem: String,
}

/// `doc` with every block re-encrypted, and how many blocks; `None`:
/// it holds no block (the document keeps its version).
///
/// # Errors
///
/// The first block that no private key of `keyring` opens (or that is
/// not a PKCS7 block), or no public key to encrypt to.
pub(crate) fn rotate_document(
    doc: &Hash,
    keyring: &Keyring,
) -> Result<Option<(Hash, usize)>, RotateError> {
    let mut blocks = 0;
    let mut at = Vec::new();
    let out = rotate_hash(doc, keyring, &mut at, &mut blocks)?;
    Ok(out.map(|doc| (doc, blocks)))
}

fn rotate_hash(
    hash: &Hash,
    keyring: &Keyring,
    at: &mut Vec<String>,
    blocks: &mut usize,
) -> Result<Option<Hash>, RotateError> {
    let mut out: Option<Hash> = None;
    for (i, (key, item)) in hash.iter().enumerate() {
        at.push(super::walk::segment(key));
        let new = rotate_value(item, keyring, at, blocks)?;
        at.pop();
        if let Some(new) = new {
            if let Some((_, slot)) = out.get_or_insert_with(|| hash.clone()).get_index_mut(i) {
                *slot = new;
            }
        }
    }
    Ok(out)
}

fn rotate_value(
    value: &Value,
    keyring: &Keyring,
    at: &mut Vec<String>,
    blocks: &mut usize,
) -> Result<Option<Value>, RotateError> {
    match value {
        Value::String(text) => rotate_string(text, keyring, blocks)
            .map(|s| s.map(Value::String))
            .map_err(|problem| RotateError {
                path: at.join("."),
                problem,
            }),
        Value::Array(items) => {
            let mut out: Option<Vec<Value>> = None;
            for (i, item) in items.iter().enumerate() {
                at.push(i.to_string());
                let new = rotate_value(item, keyring, at, blocks)?;
                at.pop();
                if let Some(new) = new {
                    out.get_or_insert_with(|| items.clone())[i] = new;
                }
            }
            Ok(out.map(Value::Array))
        }
        Value::Hash(hash) => Ok(rotate_hash(hash, keyring, at, blocks)?.map(Value::Hash)),
        _ => Ok(None),
    }
}

/// `text` with each block sealed again; `None`: it holds none. The
/// blocks are found as the decrypting reads find them ([`block::pieces`]).
fn rotate_string(
    text: &str,
    keyring: &Keyring,
    blocks: &mut usize,
) -> Result<Option<String>, String> {
    if !block::may_hold_block(text) {
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
            Piece::Block { scheme, base64 } => {
                if let Some(scheme) = scheme.filter(|s| !s.eq_ignore_ascii_case(block::SCHEME)) {
                    return Err(Problem::Scheme(scheme.to_owned()).to_string());
                }
                if !keyring.can_decrypt() {
                    return Err(Problem::NoPrivateKey.to_string());
                }
                let der = block::decode(base64).ok_or_else(|| Problem::NotBase64.to_string())?;
                let plain = keyring
                    .decrypt(&der)
                    .map_err(|e| Problem::Block(e).to_string())?;
                let plain = String::from_utf8(plain).map_err(|_| Problem::NotText.to_string())?;
                out.push_str(&keyring.encrypt(&plain).map_err(|e| e.to_string())?);
                *blocks += 1;
            }
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::keyring::tests::write_pair;
    use crate::secrets::{Decrypter, KeyFiles};
    use std::sync::Arc;

    fn hash(pairs: Vec<(&str, Value)>) -> Hash {
        pairs.into_iter().map(|(k, v)| (Value::str(k), v)).collect()
    }

    #[test]
    fn blocks_of_an_old_key_come_back_for_the_new_one_only() {
        let dir = tempfile::tempdir().unwrap();
        let old = write_pair(dir.path(), "old");
        let new = write_pair(dir.path(), "new");
        let old_ring = Keyring::load(&old).unwrap();
        let pw = old_ring.encrypt("s3cret").unwrap();
        let folded = format!("{}\n  {}", &pw[..40], &pw[40..]);
        let doc = hash(vec![
            ("plain", Value::str("no secret")),
            ("pw", Value::str(pw.clone())),
            (
                "db",
                Value::Hash(hash(vec![(
                    "url",
                    Value::str(format!("pg://nova:{folded}@db/{pw}")),
                )])),
            ),
            (
                "list",
                Value::Array(vec![Value::Int(1), Value::str(pw.clone())]),
            ),
        ]);
        // The new pair, with the old private key kept for the rotation.
        let rotating = Keyring::load(&KeyFiles {
            old_private_keys: old.private_key.iter().cloned().collect(),
            ..new.clone()
        })
        .unwrap();
        let (rotated, blocks) = rotate_document(&doc, &rotating).unwrap().unwrap();
        assert_eq!(blocks, 4);
        assert_eq!(rotated[&Value::str("plain")], Value::str("no secret"));
        // The old blocks are gone (their tails: the encrypted content).
        let text = format!("{rotated:?}");
        assert!(!text.contains(&pw[pw.len() - 40..]) && !text.contains("s3cret"));
        let plain = |ring: Keyring| {
            let (plain, errors) =
                Decrypter::new(Arc::new(ring), 1 << 20).decrypt_document(&rotated);
            (plain, errors.len())
        };
        let (by_new, failed) = plain(Keyring::load(&new).unwrap());
        assert_eq!(failed, 0);
        let by_new = by_new.unwrap();
        assert_eq!(by_new[&Value::str("pw")], Value::str("s3cret"));
        assert_eq!(
            by_new[&Value::str("db")],
            Value::Hash(hash(vec![(
                "url",
                Value::str("pg://nova:s3cret@db/s3cret")
            )]))
        );
        // The old key opens none of them any more.
        let (_, failed) = plain(Keyring::load(&old).unwrap());
        assert_eq!(failed, 3);
        // No block: no new document.
        let none = hash(vec![("k", Value::str("ENC plain"))]);
        assert!(rotate_document(&none, &rotating).unwrap().is_none());
    }

    #[test]
    fn a_block_no_key_opens_is_named_by_its_key_path() {
        let dir = tempfile::tempdir().unwrap();
        let ring = Keyring::load(&write_pair(dir.path(), "a")).unwrap();
        let foreign = Keyring::load(&write_pair(dir.path(), "b"))
            .unwrap()
            .encrypt("elsewhere")
            .unwrap();
        let doc = hash(vec![(
            "users",
            Value::Array(vec![Value::Hash(hash(vec![(
                "password",
                Value::str(foreign.clone()),
            )]))]),
        )]);
        let err = rotate_document(&doc, &ring).unwrap_err().to_string();
        assert_eq!(
            err,
            "cannot re-encrypt the value at users.0.password: a block was encrypted for another key: no eyaml private key given decrypts it"
        );
        assert!(!err.contains(&foreign[12..40]));
    }
}
