//! What one connection last proved. A keep-alive client sends the same
//! `Authorization` header with every request; once it proved who it is,
//! the same header on the same connection is that principal again without
//! its check (a token's SHA-256 and table probe; a password's base64, keyed
//! hash and cache), until the proof's time is up or the auth file is
//! reloaded. Other headers, and other connections, are checked as ever.
//!
//! The header is compared in constant time: a proxy may carry several
//! clients' requests over one connection, and none may learn another's
//! credentials from how long a refusal took. The remembered header is
//! wiped from memory when replaced or when the connection ends.

use super::Principal;
use super::verify::{AuthError, Authenticator, Credentials, Proved};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use subtle::{Choice, ConstantTimeEq};
use zeroize::Zeroizing;

/// One connection's last proved `Authorization` header (none at first).
#[derive(Default)]
pub(crate) struct Remembered(Mutex<Option<Memo>>);

struct Memo {
    header: Zeroizing<Box<[u8]>>,
    /// The authenticator that proved it: a reloaded auth file is another
    /// one, and the memo no longer counts. (Weak: a connection does not
    /// keep an old file's credentials alive.)
    by: Weak<Authenticator>,
    principal: Principal,
    until: Instant,
}

impl std::fmt::Debug for Remembered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self.0.lock().is_ok_and(|memo| memo.is_some());
        f.debug_struct("Remembered").field("held", &held).finish()
    }
}

impl Remembered {
    /// The principal `header` proved on this connection, if it still
    /// counts.
    fn recall(&self, header: &[u8], by: &Arc<Authenticator>) -> Option<Principal> {
        let memo = self.0.lock().ok()?;
        let memo = memo.as_ref()?;
        let same = std::ptr::eq(memo.by.as_ptr(), Arc::as_ptr(by))
            && Instant::now() < memo.until
            && same(&memo.header, header);
        same.then(|| memo.principal.clone())
    }

    fn keep(&self, header: &[u8], by: &Arc<Authenticator>, principal: Principal, time: Duration) {
        let Some(until) = Instant::now().checked_add(time) else {
            return;
        };
        if let Ok(mut memo) = self.0.lock() {
            *memo = Some(Memo {
                header: Zeroizing::new(header.into()),
                by: Arc::downgrade(by),
                principal,
                until,
            });
        }
    }
}

/// `a == b`, in a time that depends on their lengths only: word by word
/// (subtle's comparison of byte slices costs about ten instructions a
/// byte, most of what a remembered request's check costs).
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (a_words, b_words) = (a.chunks_exact(8), b.chunks_exact(8));
    let (a_rest, b_rest) = (a_words.remainder(), b_words.remainder());
    let word = |w: &[u8]| u64::from_ne_bytes(w.try_into().unwrap_or_default());
    let words = a_words.zip(b_words).fold(Choice::from(1), |equal, (x, y)| {
        equal & word(x).ct_eq(&word(y))
    });
    bool::from(words & a_rest.ct_eq(b_rest))
}

/// The principal this connection (`memo`) last proved with the same
/// `authorization` header, if that proof still counts: no check, and no
/// turn to wait for (docs/security.md).
pub(crate) fn recall(
    authenticator: &Arc<Authenticator>,
    memo: Option<&Remembered>,
    authorization: Option<&[u8]>,
) -> Option<Principal> {
    let (memo, header) = memo.zip(authorization)?;
    memo.recall(header, authenticator)
}

/// Who `credentials` (read from the `authorization` header, if they came
/// in one) prove a request comes from; the proof kept in the connection's
/// `memo` for its next requests, if the credentials allow.
///
/// # Errors
///
/// [`AuthError`] saying what failed.
pub(crate) async fn check(
    authenticator: &Arc<Authenticator>,
    memo: Option<&Remembered>,
    authorization: Option<&[u8]>,
    credentials: Credentials<'_>,
) -> Result<Principal, AuthError> {
    let Proved {
        principal,
        remember_for,
    } = authenticator.prove(credentials).await?;
    if let (Some(memo), Some(header), Some(time)) = (memo, authorization, remember_for) {
        memo.keep(header, authenticator, principal.clone(), time);
    }
    Ok(principal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthFile;
    use crate::auth::credentials::{CertIdentity, credentials, hash_password, new_token};

    /// What the server does with a request's `Authorization` header.
    async fn prove(
        auth: &Arc<Authenticator>,
        memo: Option<&Remembered>,
        header: Option<&[u8]>,
    ) -> Result<Principal, AuthError> {
        if let Some(principal) = recall(auth, memo, header) {
            return Ok(principal);
        }
        let mut decoded = Zeroizing::new(String::new());
        let credentials = credentials(header, None, None, &mut decoded)?;
        check(auth, memo, header, credentials).await
    }

    /// An authenticator with a read token (expiring `expires`, if given)
    /// and a user ann, and the token.
    fn loaded(expires: Option<&str>) -> (Arc<Authenticator>, String) {
        let (token, digest) = new_token().unwrap();
        let expiry = expires.map_or(String::new(), |e| format!("expires_at = \"{e}\"\n"));
        let text = format!(
            "[[user]]\nname = \"ann\"\nrole = \"write\"\npassword_hash = \"{}\"\n\
             [[token]]\nname = \"ci\"\nrole = \"read\"\n{expiry}sha256 = \"{digest}\"\n",
            hash_password("s3cret").unwrap()
        );
        let file = AuthFile::parse(&text).unwrap();
        (Arc::new(Authenticator::new(&file).unwrap()), token)
    }

    fn bearer(token: &str) -> Vec<u8> {
        format!("Bearer {token}").into_bytes()
    }

    #[tokio::test]
    async fn the_same_header_on_the_same_connection_is_remembered() {
        let (auth, token) = loaded(None);
        let memo = Remembered::default();
        let header = bearer(&token);
        assert_eq!(memo.recall(&header, &auth), None);
        let proved = prove(&auth, Some(&memo), Some(&header)).await.unwrap();
        assert_eq!(&*proved.name, "token:ci");
        assert_eq!(memo.recall(&header, &auth), Some(proved.clone()));
        // Not another header, however alike, nor another load of the file.
        let mut other = header.clone();
        *other.last_mut().unwrap() ^= 1;
        assert_eq!(memo.recall(&other, &auth), None);
        assert_eq!(memo.recall(&header[..header.len() - 1], &auth), None);
        let (reloaded, _) = loaded(None);
        assert_eq!(memo.recall(&header, &reloaded), None);
        // A refused header leaves the memory as it was.
        let wrong = bearer("hierad_never-issued");
        let refused = prove(&auth, Some(&memo), Some(&wrong)).await;
        assert_eq!(refused, Err(AuthError::UnknownToken));
        assert_eq!(memo.recall(&header, &auth), Some(proved));
        // Without a connection's memo (none given) nothing is kept.
        let fresh = Remembered::default();
        prove(&auth, None, Some(&header)).await.unwrap();
        assert_eq!(fresh.recall(&header, &auth), None);
    }

    #[test]
    fn headers_compare_as_bytes_do() {
        let base: Vec<u8> = (0..40u8).collect();
        for len in 0..base.len() {
            let a = &base[..len];
            assert!(same(a, a), "{len}");
            assert!(!same(a, &base[..len + 1]), "{len}");
            for at in 0..len {
                let mut b = a.to_vec();
                b[at] ^= 0x80;
                assert!(!same(a, &b), "{len} {at}");
            }
        }
    }

    #[tokio::test]
    async fn passwords_are_remembered_and_wrong_ones_never() {
        use base64::Engine;
        let (auth, _) = loaded(None);
        let memo = Remembered::default();
        let basic = |pair: &str| {
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            format!("Basic {encoded}").into_bytes()
        };
        let wrong = basic("ann:guess");
        assert_eq!(
            prove(&auth, Some(&memo), Some(&wrong)).await,
            Err(AuthError::WrongPassword)
        );
        assert_eq!(memo.recall(&wrong, &auth), None);
        let right = basic("ann:s3cret");
        let ann = prove(&auth, Some(&memo), Some(&right)).await.unwrap();
        assert_eq!(memo.recall(&right, &auth), Some(ann));
    }

    #[tokio::test]
    async fn a_memory_ends_when_its_token_expires() {
        let soon = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(60);
        let (auth, token) = loaded(Some(&soon.to_string()));
        let proved = auth.prove(Credentials::Bearer(&token)).await.unwrap();
        let time = proved.remember_for.unwrap();
        assert!(
            time <= Duration::from_secs(60) && time > Duration::from_secs(50),
            "{time:?}"
        );
        // Its time up (here: given none), the memory does not answer.
        let memo = Remembered::default();
        memo.keep(&bearer(&token), &auth, proved.principal, Duration::ZERO);
        assert_eq!(memo.recall(&bearer(&token), &auth), None);
        // And a token past its expiry is refused, not remembered.
        let (old, token) = loaded(Some("2020-01-01T00:00:00Z"));
        let memo = Remembered::default();
        let header = bearer(&token);
        assert!(matches!(
            prove(&old, Some(&memo), Some(&header)).await,
            Err(AuthError::Expired { .. })
        ));
        assert_eq!(memo.recall(&header, &old), None);
    }

    #[tokio::test]
    async fn certificates_are_not_remembered() {
        // The handshake checked them once for the connection already.
        let text = "[[client_cert]]\ncn = \"puppet\"\nrole = \"read\"\n";
        let certs = Authenticator::new(&AuthFile::parse(text).unwrap()).unwrap();
        let identity = CertIdentity {
            cn: Some("puppet".to_owned()),
            dns_names: vec![],
        };
        let proved = certs.prove(Credentials::Cert(&identity)).await.unwrap();
        assert_eq!(proved.remember_for, None);
    }
}
