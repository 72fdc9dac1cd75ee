//! `hierad secrets rotate` (docs/security.md "Rotating the keys"): every
//! `ENC[PKCS7,…]` block of every latest document re-encrypted to the
//! current public key, in one store transaction. The one implementation:
//! the server's route runs it with the server's keys, `--db` with the
//! key files given.

use crate::configdb::DocAddress;
use crate::secrets::Keyring;
use crate::secrets::rotate::rotate_document;
use crate::store::{Store, StoreError};
use std::collections::HashMap;

/// What a rotation did: the documents that got a new version, and the
/// blocks re-encrypted in them. The answer of `POST /api/v1/secrets/rotate`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Rotated {
    pub(crate) documents: usize,
    pub(crate) blocks: usize,
}

/// Re-encrypts every block of the latest live documents of `env` (`None`:
/// of every live environment) to `keyring`'s public key, opening each
/// with its current or an older private key; new versions by `author`,
/// one generation. A document without blocks keeps its version.
///
/// # Errors
///
/// A block no private key opens, or not a PKCS7 block, or no public key
/// while there is a block: `Invalid::Rewrite` naming the document and
/// the key path (never the block), and nothing is written. NotFound: no
/// such environment.
pub(crate) fn rotate(
    store: &dyn Store,
    keyring: &Keyring,
    env: Option<i64>,
    author: Option<&str>,
) -> Result<Rotated, StoreError> {
    // Per document, so a transaction the engine runs again counts once.
    let mut blocks: HashMap<DocAddress, usize> = HashMap::new();
    let mut rewrite = |at: &DocAddress, doc: &crate::hiera::Hash| {
        let rotated = rotate_document(doc, keyring).map_err(|e| e.to_string())?;
        Ok(rotated.map(|(doc, n)| {
            blocks.insert(at.clone(), n);
            doc
        }))
    };
    let written = store.rewrite_latest(env, &mut rewrite, author)?;
    Ok(Rotated {
        documents: written.len(),
        blocks: written
            .iter()
            .map(|(at, _)| blocks.get(at).copied().unwrap_or(0))
            .sum(),
    })
}
