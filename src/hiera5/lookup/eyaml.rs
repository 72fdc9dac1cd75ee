//! A `lookup_key: eyaml_lookup_key` entry's values as hiera-eyaml's
//! function reads them (puppet/functions/eyaml_lookup_key.rb in
//! <https://github.com/voxpupuli/hiera-eyaml>): each String's
//! `ENC[PKCS7,…]` blocks decrypted with the entry's key pair, before the
//! value is interpolated.

use super::{Entry, Error, Files, Lookup, Result};
use crate::hiera::{Hash, Value};
use crate::secrets::{Decrypter, Keyring};
use std::borrow::Cow;
use std::rc::Rc;
use std::sync::Arc;

/// An eyaml entry's key pair as a lookup found it: `None` when the files
/// keep none (blocks answered as stored), else its decrypter or why its
/// files cannot be read.
pub(super) type KeyPair = Option<Result<Rc<Decrypter>, Error>>;

/// An eyaml key pair read for a lookup ([`Files::eyaml_keys`]).
#[derive(Debug)]
pub struct EyamlKeys(pub(crate) Keyring);

impl<F: Files> Lookup<'_, F> {
    /// `value` of an eyaml entry with its blocks decrypted, as
    /// eyaml_lookup_key.rb decrypts them (each String holding a block,
    /// wherever it is; Hash keys never) before it interpolates; the key
    /// pair is read only when a block is found.
    pub(super) fn decrypted<'v>(
        &self,
        value: &'v Value,
        entry: &Entry,
        key: &str,
        path: &str,
    ) -> Result<Cow<'v, Value>> {
        if !crate::secrets::holds_block(value) {
            return Ok(Cow::Borrowed(value));
        }
        let failed = |why: String| {
            Error::Data(format!(
                "hiera-eyaml backend error decrypting the value of '{key}' in {path}: {why}"
            ))
        };
        let decrypter = self.decrypter(entry)?;
        let Some(decrypter) = decrypter else {
            return Ok(Cow::Borrowed(value));
        };
        let decrypter = decrypter.map_err(|e| match e {
            Error::Data(why) => failed(why),
            other => other,
        })?;
        match decrypter.decrypt_value(value, key) {
            Ok(Some(plain)) => Ok(Cow::Owned(plain)),
            Ok(None) => Ok(Cow::Borrowed(value)),
            // A GPG block, which hiera-eyaml reads with a plugin: named.
            Err(e) if matches!(e.problem, crate::secrets::Problem::Scheme(_)) => {
                Err(Error::Unsupported(format!("{path}: {e}")))
            }
            Err(e) => Err(failed(e.to_string())),
        }
    }

    /// The decrypter of an eyaml entry's key pair: its options'
    /// `pkcs7_private_key` and `pkcs7_public_key` interpolated, else
    /// hiera-eyaml's defaults (`./keys/…`, from the working directory),
    /// each pair read once a lookup.
    fn decrypter(&self, entry: &Entry) -> Result<KeyPair> {
        // Puppet interpolates them making the entry's provider, with
        // nothing explained.
        let options = match &entry.options {
            Some(options) => self.without_explain(|| {
                self.interpolate(Value::Hash(options.clone()), &self.scope, false)
            })?,
            None => Value::Hash(Hash::default()),
        };
        let path = |name: &str, default: &str| {
            options
                .as_hash()
                .and_then(|o| o.get(&Value::str(name)))
                .map_or_else(|| default.to_owned(), crate::hiera::render::ruby::to_s)
        };
        let pair = (
            path("pkcs7_private_key", "./keys/private_key.pkcs7.pem"),
            path("pkcs7_public_key", "./keys/public_key.pkcs7.pem"),
        );
        if let Some(known) = self.eyaml.borrow().get(&pair) {
            return Ok(known.clone());
        }
        let read = self.files.eyaml_keys(&pair.0, &pair.1).map(|keys| {
            keys.map(|EyamlKeys(keyring)| {
                // Small: one lookup decrypts a few values.
                Rc::new(Decrypter::for_hiera(Arc::new(keyring), 1 << 20))
            })
        });
        self.eyaml.borrow_mut().insert(pair, read.clone());
        Ok(read)
    }
}
