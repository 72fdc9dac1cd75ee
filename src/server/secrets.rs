//! The server's eyaml keys and the answers it decrypts with them
//! (docs/security.md, "Secrets").
//!
//! The keys are loaded at start, and again when their files change (or
//! on SIGHUP), as the auth file is (`reload.rs`): a load that fails keeps
//! the old keys and logs why. Each load makes a new [`Decrypter`], so its
//! cache of decryptions goes with the keys that filled it.
//!
//! A request whose principal may decrypt (`decrypt = true` in the auth
//! file) takes a [`Reveal`] holding the decrypter; the routes that answer
//! data (lookups, effective reads, the data route) pass their stored
//! answer through it. Decryption happens after the answer caches, on the
//! answer's bytes: those caches (the answer memo, the answer cache, the
//! encoded documents) keep one text per question, the stored one, for
//! every principal, so no key of theirs can mix a plaintext into what
//! another principal reads. The only memory of plaintexts is the
//! decrypter's own cache, read for decrypting principals only. An answer
//! without `ENC[` costs one scan of its bytes.
//!
//! Decrypting after the lookup also decrypts blocks that interpolation
//! copied into another value (`%{hiera('db_password')}`), as hiera-eyaml
//! does (it decrypts a value before interpolating it). Unlike it, a
//! plaintext that itself holds `%{…}` is answered as it is, not
//! interpolated.

use crate::api::{self, KeyOutcome, WireValue};
use crate::cache;
use crate::config_file::Seen;
use crate::configdb::Encoded;
use crate::configdb::keypath::KeyPath;
use crate::hiera::{ErrorClass, HieraError, Value};
use crate::secrets::keyring::KeyError;
use crate::secrets::walk::{EncryptError, SecretError, encrypt_at};
use crate::secrets::{Decrypter, Keyring};
use crate::server::AppState;
use crate::server::http::error::ApiError;
use crate::server::http::guard::Asker;
use crate::settings::Settings;
use arc_swap::ArcSwapOption;
use axum::body::Bytes;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse as _, Response};
use std::sync::Arc;

/// The keys in force, as a decrypter; none without `--eyaml-*` flags.
#[derive(Debug, Default)]
pub(crate) struct Secrets {
    current: ArcSwapOption<Decrypter>,
}

impl Secrets {
    /// The decrypter over the keys in force.
    pub(crate) fn current(&self) -> Option<Arc<Decrypter>> {
        self.current.load_full()
    }

    /// Puts `keyring` in force, with an empty cache of at most
    /// `cache_bytes`.
    pub(crate) fn install(&self, keyring: Keyring, cache_bytes: u64) {
        self.current.store(Some(Arc::new(Decrypter::for_hiera(
            Arc::new(keyring),
            cache_bytes,
        ))));
    }
}

/// Loads the keys `settings` name, if any, for [`Secrets::install`].
///
/// # Errors
///
/// A key file cannot be read or is wrong (named, never its content).
pub(crate) fn load(settings: &Settings) -> anyhow::Result<Option<Keyring>> {
    let Some(files) = &settings.eyaml else {
        return Ok(None);
    };
    let keyring = Keyring::load(files)?;
    tracing::info!(target: "hierad::server::secrets", decrypts = keyring.can_decrypt(), files = ?keyring.files(), "eyaml keys loaded");
    Ok(Some(keyring))
}

/// Reloads the keys when their files change on disk (looked at every
/// [`crate::server::reload::POLL`]) or on SIGHUP; runs until the server
/// stops.
pub(crate) async fn watch(state: AppState) {
    use tokio::signal::unix::{SignalKind, signal};
    let Some(files) = state.settings().eyaml.clone() else {
        return;
    };
    let paths = files.paths();
    let mut hangups = signal(SignalKind::hangup()).ok();
    let mut poll = tokio::time::interval(crate::server::reload::POLL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The files as they were when a load failed: not loaded again (nor
    // logged again) until they change once more.
    let mut failed: Option<Seen> = None;
    loop {
        let hangup = async {
            match hangups.as_mut() {
                Some(hangups) => hangups.recv().await,
                None => std::future::pending().await,
            }
        };
        let why = tokio::select! {
            received = hangup => {
                if received.is_none() {
                    hangups = None;
                    continue;
                }
                "SIGHUP"
            }
            _ = poll.tick() => "changed on disk",
        };
        let now = Seen::of(&paths);
        let changed = state
            .secrets()
            .current()
            .is_none_or(|d| d.keyring().changed_on_disk())
            && failed.as_ref() != Some(&now);
        if why == "SIGHUP" || changed {
            let reloading = state.clone();
            let loaded = tokio::task::spawn_blocking(move || reload(&reloading, why)).await;
            failed = match loaded {
                Ok(true) => None,
                _ => Some(now),
            };
        }
    }
}

/// Loads the keys again: put in force with an empty cache (`true`), or,
/// if they fail to load, the old ones kept and the reason logged.
pub(crate) fn reload(state: &AppState, why: &str) -> bool {
    let Some(files) = &state.settings().eyaml else {
        return false;
    };
    match Keyring::load(files) {
        Ok(keyring) => {
            state
                .secrets()
                .install(keyring, state.settings().eyaml_cache_bytes);
            tracing::info!(target: "hierad::server::secrets", why, "reloaded the eyaml keys; the cache of decrypted values is emptied");
            true
        }
        Err(e) => {
            tracing::error!(target: "hierad::server::secrets", why, error = %e, "the eyaml keys were not reloaded; the old ones stay");
            false
        }
    }
}

/// What a request's answers go through: for a principal allowed to
/// decrypt, on a server holding a private key, the decrypter; for
/// everyone else nothing (answers as stored).
///
/// A decrypting principal on a connection that is neither TLS nor
/// loopback is refused (403) where an answer would be decrypted:
/// plaintext does not cross a network in clear, whatever the server's
/// other flags say.
pub(crate) struct Reveal(Decrypting);

enum Decrypting {
    No,
    Yes(Arc<Decrypter>),
    Refused,
}

impl FromRequestParts<AppState> for Reveal {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Reveal, Self::Rejection> {
        let decrypts = Asker::principal(&parts.extensions).is_some_and(|p| p.decrypt);
        let decrypter = state
            .secrets()
            .current()
            .filter(|d| decrypts && d.keyring().can_decrypt());
        Ok(Reveal(match decrypter {
            None => Decrypting::No,
            // No connection (a request made in process): not known to
            // be private.
            Some(_) if !Asker::peer(&parts.extensions).is_some_and(|p| p.secure) => {
                Decrypting::Refused
            }
            Some(decrypter) => Decrypting::Yes(decrypter),
        }))
    }
}

/// The 403 of a decrypting principal on a plain connection off loopback.
pub(crate) const INSECURE: &str = "this principal may read eyaml values decrypted, but this \
    connection is neither TLS nor loopback, and the server sends no plaintext over it: connect \
    over https (hierad serve --tls-cert/--tls-key), or from this host";

/// The header that lists what could not be decrypted in a document
/// answer (each value's key path and why, never its block).
pub(crate) const UNDECRYPTED: &str = "x-hierad-undecrypted";

impl Reveal {
    /// It, for a read that decrypts only when asked (`asked`: its
    /// `decrypt=true`): effective reads, which tools that write the
    /// values back (`hierad export`, `config set`) make too.
    pub(crate) fn asked(self, asked: bool) -> Reveal {
        if asked { self } else { Reveal(Decrypting::No) }
    }

    /// A lookup answer with its values decrypted, or `None` when it is
    /// answered as it is (no decrypter, or no block in it).
    ///
    /// # Errors
    ///
    /// A one-key answer's value cannot be decrypted: a Hiera error (422,
    /// `RuntimeError`, as hiera-eyaml raises) naming the key path. In a
    /// several-key answer only that key fails.
    pub(crate) fn answer(
        &self,
        answer: &cache::Answer,
        request: &[u8],
    ) -> Result<Option<cache::Answer>, ApiError> {
        let Some(decrypter) = self.decrypter(&answer.body)? else {
            return Ok(None);
        };
        let body = lookup_body(decrypter, &answer.body, request)?;
        Ok(Some(cache::Answer {
            body,
            tagged: answer.tagged,
            env: answer.env,
        }))
    }

    /// A document's shared body (an effective document, a data source)
    /// decrypted, key by key, or `None` when it is answered as it is.
    ///
    /// # Errors
    ///
    /// As [`Reveal::answer`]'s 403.
    fn document(&self, doc: &Encoded) -> Result<Option<(Encoded, Vec<SecretError>)>, ApiError> {
        let Some(decrypter) = self.decrypter(&doc.body)? else {
            return Ok(None);
        };
        let Value::Hash(hash) = decode(&doc.body)? else {
            return Ok(None);
        };
        let (plain, errors) = decrypter.decrypt_document(&hash);
        Ok(match plain {
            Some(plain) => Some((Encoded::of(&plain), errors)),
            None if !errors.is_empty() => Some((
                Encoded {
                    body: doc.body.clone(),
                    etag: doc.etag.clone(),
                },
                errors,
            )),
            None => None,
        })
    }

    /// The value at key path `path`'s shared body decrypted, or `None`
    /// when it is answered as it is.
    ///
    /// # Errors
    ///
    /// It cannot be decrypted (named by `path`).
    fn value(&self, doc: &Encoded, path: &str) -> Result<Option<Encoded>, ApiError> {
        let Some(decrypter) = self.decrypter(&doc.body)? else {
            return Ok(None);
        };
        let value = decode(&doc.body)?;
        match decrypter.decrypt_value(&value, path) {
            Ok(plain) => Ok(plain.map(|p| Encoded::of_value(&p))),
            Err(e) => Err(ApiError::Hiera(failure(&e))),
        }
    }

    /// An effective read's body decrypted (a document's keys each on its
    /// own; the value at key path `key` as one), or `None`: the body as
    /// stored is the answer.
    ///
    /// # Errors
    ///
    /// The value at `key` cannot be decrypted.
    pub(crate) fn effective(
        &self,
        doc: &Encoded,
        key: Option<&str>,
    ) -> Result<Option<Response>, ApiError> {
        let (plain, errors) = match key {
            None => match self.document(doc)? {
                Some(found) => found,
                None => return Ok(None),
            },
            Some(key) => match self.value(doc, key)? {
                Some(plain) => (plain, Vec::new()),
                None => return Ok(None),
            },
        };
        let response = ([(header::CONTENT_TYPE, "application/json")], plain.body).into_response();
        Ok(Some(plaintext_response(response, &errors)))
    }

    /// The decrypter when `body` may hold a block.
    ///
    /// # Errors
    ///
    /// The 403 of a decrypting principal on a connection neither TLS
    /// nor loopback (whatever the body: the refusal does not depend on
    /// the data).
    fn decrypter(&self, body: &[u8]) -> Result<Option<&Decrypter>, ApiError> {
        match &self.0 {
            Decrypting::No => Ok(None),
            Decrypting::Refused => Err(ApiError::Forbidden(INSECURE.to_owned())),
            Decrypting::Yes(decrypter) => {
                Ok(memchr::memmem::find(body, b"ENC[").map(|_| decrypter.as_ref()))
            }
        }
    }
}

/// The key paths a write's `encrypt` parameter names (comma-separated:
/// `encrypt=nova.db_password,nova.rabbit_password`); none without one.
///
/// # Errors
///
/// A key path that does not parse (400).
pub(crate) fn encrypting(uri: &axum::http::Uri) -> Result<Vec<KeyPath>, ApiError> {
    let axum::extract::Query(query) =
        axum::extract::Query::<std::collections::HashMap<String, String>>::try_from_uri(uri)
            .map_err(|e| ApiError::BadRequest(format!("the query: {e}")))?;
    let Some(list) = query.get("encrypt") else {
        return Ok(Vec::new());
    };
    list.split(',')
        .map(|text| KeyPath::parse(text).map_err(|e| ApiError::BadRequest(format!("encrypt: {e}"))))
        .collect()
}

/// `body`, the value a write stores (the document, or the value at key
/// path `key`), with the Strings at `paths` encrypted for the server's
/// eyaml public key before anything is stored: the plaintext never
/// reaches the history. Writing a key, `paths` may name only that key.
///
/// # Errors
///
/// No public key on the server (409), a path that names no String, or
/// another key than the one written (400); nothing is written.
pub(crate) fn encrypt(
    state: &AppState,
    paths: &[KeyPath],
    key: Option<&KeyPath>,
    body: Value,
) -> Result<Value, ApiError> {
    if paths.is_empty() {
        return Ok(body);
    }
    let decrypter = state.secrets().current().ok_or_else(|| {
        ApiError::Conflict(
            "encrypt: this server has no eyaml public key (hierad serve --eyaml-public-key PEM)"
                .to_owned(),
        )
    })?;
    let keyring = decrypter.keyring();
    let refused = |e: EncryptError| match e {
        EncryptError::Key(KeyError::NoPublicKey) => ApiError::Conflict(format!("encrypt: {e}")),
        e => ApiError::BadRequest(e.to_string()),
    };
    match (key, body) {
        (None, Value::Hash(mut doc)) => {
            encrypt_at(&mut doc, paths, keyring).map_err(refused)?;
            Ok(Value::Hash(doc))
        }
        (None, other) => Ok(other),
        (Some(key), value) => {
            if let Some(other) = paths.iter().find(|p| p.as_str() != key.as_str()) {
                return Err(ApiError::BadRequest(format!(
                    "encrypt: {} is not the key this request writes ({}); write the whole document to encrypt other keys",
                    other.as_str(),
                    key.as_str()
                )));
            }
            // The value as the only key of a document, to go through the
            // one rule of what is encrypted.
            let slot = KeyPath::parse("value").expect("a plain key path");
            let mut doc = crate::hiera::Hash::default();
            doc.insert(Value::str("value"), value);
            encrypt_at(&mut doc, std::slice::from_ref(&slot), keyring).map_err(
                |e| match refused(e) {
                    ApiError::BadRequest(m) => ApiError::BadRequest(m.replacen(
                        "--encrypt value",
                        &format!("--encrypt {}", key.as_str()),
                        1,
                    )),
                    other => other,
                },
            )?;
            Ok(doc.swap_remove(&Value::str("value")).unwrap_or(Value::Nil))
        }
    }
}

/// The response of a decrypted document: no cache on the way may keep
/// it, and the values that could not be decrypted are listed in
/// [`UNDECRYPTED`] (kept as stored in the body).
pub(crate) fn plaintext_response(mut response: Response, errors: &[SecretError]) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    if !errors.is_empty() {
        let listed: String = errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
            .chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect();
        if let Ok(value) = HeaderValue::from_bytes(listed.as_bytes()) {
            headers.insert(UNDECRYPTED, value);
        }
    }
    response
}

/// A lookup answer's body (one answer, or the answers of several keys)
/// with its values decrypted; a several-key answer's undecryptable value
/// fails that key only.
fn lookup_body(decrypter: &Decrypter, body: &[u8], request: &[u8]) -> Result<Bytes, ApiError> {
    let malformed = |e: serde_json::Error| ApiError::Internal(format!("a lookup answer: {e}"));
    let text = if body.starts_with(b"{\"answers\"") {
        let mut keys: api::KeysAnswer = serde_json::from_slice(body).map_err(malformed)?;
        for answer in &mut keys.answers {
            if let KeyOutcome::Answered(found) = &answer.outcome {
                if let Err(e) = decrypt_answer(decrypter, found, &answer.key)
                    .map(|plain| answer.outcome = KeyOutcome::Answered(plain))
                {
                    answer.outcome = KeyOutcome::Failed {
                        error: api::HieraFailure {
                            class: e.class.ruby_name().to_owned(),
                            message: e.message,
                        },
                    };
                }
            }
        }
        serde_json::to_vec(&keys)
    } else {
        let one: api::LookupAnswer = serde_json::from_slice(body).map_err(malformed)?;
        // The key, for an error's key path: read from the request only
        // then (a cached answer is served without parsing its request).
        let plain = decrypt_answer(decrypter, &one, "").or_else(|_| {
            #[derive(serde::Deserialize)]
            struct Key {
                key: String,
            }
            let key =
                serde_json::from_slice::<Key>(request).map_or_else(|_| String::new(), |k| k.key);
            decrypt_answer(decrypter, &one, &key).map_err(ApiError::Hiera)
        })?;
        serde_json::to_vec(&plain)
    };
    Ok(Bytes::from(text.map_err(malformed)?))
}

/// `answer` with its value decrypted (its explanation's steps show the
/// values as stored).
fn decrypt_answer(
    decrypter: &Decrypter,
    answer: &api::LookupAnswer,
    key: &str,
) -> Result<api::LookupAnswer, HieraError> {
    let Some(WireValue(value)) = &answer.value else {
        return Ok(answer.clone());
    };
    match decrypter.decrypt_value(value, key) {
        Ok(None) => Ok(answer.clone()),
        Ok(Some(plain)) => Ok(api::LookupAnswer {
            value: Some(WireValue(plain)),
            ..answer.clone()
        }),
        Err(e) => Err(failure(&e)),
    }
}

/// hiera-eyaml raises a `RuntimeError` for a block it cannot decrypt;
/// this one names the key path and why, never the block.
fn failure(error: &SecretError) -> HieraError {
    HieraError::new(ErrorClass::RuntimeError, error.to_string())
}

fn decode(body: &[u8]) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::Internal(format!("a stored answer is not UTF-8: {e}")))?;
    crate::wire::from_str(text)
        .map_err(|e| ApiError::Internal(format!("a stored answer does not decode: {e}")))
}

#[cfg(test)]
mod tests;
