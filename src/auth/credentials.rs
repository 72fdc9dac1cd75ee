//! What a request presents to prove who it is (headers, a verified
//! client certificate), and how the secrets behind them are made and
//! kept: Argon2id password hashes, bearer tokens and their SHA-256.

use super::verify::AuthError;
use argon2::password_hash::{PasswordHasher, SaltString};
use sha2::{Digest, Sha256};

/// What a request offers to prove who it is.
#[derive(Clone, Copy, Debug)]
pub enum Credentials<'a> {
    None,
    Basic {
        user: &'a str,
        password: &'a str,
    },
    Bearer(&'a str),
    /// Keystone's `X-Auth-Token`.
    Keystone(&'a str),
    /// A client certificate the TLS layer verified against the client CA.
    Cert(&'a CertIdentity),
}

/// What the server knows of a verified client certificate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CertIdentity {
    /// The subject's common name.
    pub cn: Option<String>,
    /// The DNS names of its subject alternative names.
    pub dns_names: Vec<String>,
}

/// SHA-256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// `bytes` as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn unhex(text: &str) -> Option<[u8; 32]> {
    let mut out = [0; 32];
    if text.len() != 64 {
        return None;
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// An Argon2id hash (the crate's defaults: 19 MiB, 2 passes) of
/// `password` with a random salt, in the PHC form.
///
/// # Errors
///
/// The system has no randomness to give.
pub(crate) fn hash_password(password: &str) -> Result<String, String> {
    let mut salt = [0; 16];
    getrandom::fill(&mut salt).map_err(|e| format!("no random salt: {e}"))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| e.to_string())
}

/// A new bearer token (`hierad_` and 256 random bits, URL-safe base64)
/// and the hex SHA-256 the auth file keeps.
///
/// # Errors
///
/// The system has no randomness to give.
pub(crate) fn new_token() -> Result<(String, String), String> {
    use base64::Engine;
    let mut bytes = [0; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness: {e}"))?;
    let token = format!(
        "hierad_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    );
    let digest = hex(&sha256(token.as_bytes()));
    Ok((token, digest))
}

/// Reads the credentials of a request's `Authorization` and
/// `X-Auth-Token` headers (`cert`: what the TLS layer verified). A header
/// wins over the certificate: a master may act as a named user.
///
/// # Errors
///
/// A header that is present but malformed.
pub(crate) fn credentials<'a>(
    authorization: Option<&'a [u8]>,
    auth_token: Option<&'a [u8]>,
    cert: Option<&'a CertIdentity>,
    decoded: &'a mut String,
) -> Result<Credentials<'a>, AuthError> {
    use base64::Engine;
    if let Some(header) = authorization {
        let header = std::str::from_utf8(header).map_err(|_| {
            AuthError::Malformed("the Authorization header is not UTF-8".to_owned())
        })?;
        let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
        let rest = rest.trim();
        if scheme.eq_ignore_ascii_case("bearer") {
            return Ok(Credentials::Bearer(rest));
        }
        if scheme.eq_ignore_ascii_case("basic") {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(rest)
                .map_err(|_| AuthError::Malformed("Basic credentials are not base64".to_owned()))?;
            *decoded = String::from_utf8(bytes)
                .map_err(|_| AuthError::Malformed("Basic credentials are not UTF-8".to_owned()))?;
            let (user, password) = decoded.split_once(':').ok_or_else(|| {
                AuthError::Malformed("Basic credentials must be user:password".to_owned())
            })?;
            return Ok(Credentials::Basic { user, password });
        }
        // The scheme is named only when it looks like one (`Digest`,
        // `Negotiate`): a header that is a bare token or password (the
        // scheme forgotten) must not come back in the answer, which a
        // client may log.
        let named = !rest.is_empty()
            && scheme.len() <= 16
            && scheme.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-');
        return Err(AuthError::Malformed(if named {
            format!("unknown Authorization scheme {scheme:?}; use Basic or Bearer")
        } else {
            "the Authorization header names no scheme; send `Bearer TOKEN` or `Basic …`".to_owned()
        }));
    }
    if let Some(token) = auth_token {
        let token = std::str::from_utf8(token)
            .map_err(|_| AuthError::Malformed("X-Auth-Token is not UTF-8".to_owned()))?;
        return Ok(Credentials::Keystone(token.trim()));
    }
    Ok(cert.map_or(Credentials::None, Credentials::Cert))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_become_credentials() {
        let mut buffer = String::new();
        let basic = b"Basic YW5uOnMzY3JldDp3aXRoOmNvbG9ucw==";
        match credentials(Some(basic), None, None, &mut buffer).unwrap() {
            Credentials::Basic { user, password } => {
                assert_eq!((user, password), ("ann", "s3cret:with:colons"));
            }
            other => panic!("{other:?}"),
        }
        let mut buffer = String::new();
        assert!(matches!(
            credentials(Some(b"Bearer abc"), None, None, &mut buffer),
            Ok(Credentials::Bearer("abc"))
        ));
        assert!(matches!(
            credentials(None, Some(b"k"), None, &mut buffer),
            Ok(Credentials::Keystone("k"))
        ));
        let refusal = |header: &[u8]| {
            let mut buffer = String::new();
            match credentials(Some(header), None, None, &mut buffer) {
                Err(AuthError::Malformed(message)) => message,
                other => panic!("{other:?}"),
            }
        };
        assert!(refusal(b"Digest x").contains("scheme \"Digest\""));
        // A bare token (the scheme forgotten) is not repeated.
        for header in [&b"hierad_Zk3o9Qe4Vb"[..], b"s3cretToken x", b"Zk3o9Qe4Vb"] {
            let message = refusal(header);
            assert!(message.contains("names no scheme"), "{message}");
            assert!(!message.contains("Zk3o9") && !message.contains("s3cret"));
        }
        assert!(matches!(
            credentials(None, None, None, &mut buffer),
            Ok(Credentials::None)
        ));
    }
}
