//! TLS to PostgreSQL, set as libpq names it in the URL: `sslmode` and
//! `sslrootcert` (the CA certificates, PEM, that sign the server's).
//!
//! hierad either does not encrypt (`sslmode=disable`, or no `sslmode` and
//! no `sslrootcert`) or encrypts and verifies: `require`, `verify-ca` and
//! `verify-full` all check the certificate chain against `sslrootcert`
//! and the host name, as libpq's `verify-full` does. The store holds every
//! password of a cluster; an encrypted connection to whoever answers would
//! only hide the leak. `prefer` and `allow` fall back to plain text on
//! their own, so they are refused rather than guessed at.

use super::redact;
use crate::store::StoreError;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The URL for tokio-postgres (its `sslmode` one it knows, without
/// `sslrootcert`, which it does not) and the connector every connection
/// of the store uses, pooled or LISTEN.
pub(super) fn from_url(url: &str) -> Result<(String, MakeRustlsConnect), StoreError> {
    let refuse = |why: String| StoreError::Database(format!("{}: {why}", redact(url)).into());
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept: Vec<&str> = Vec::new();
    let mut mode: Option<String> = None;
    let mut root: Option<PathBuf> = None;
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_encoding::percent_decode_str(value)
            .decode_utf8()
            .map_err(|_| refuse(format!("the value of {key} is not UTF-8")))?;
        match key {
            "sslmode" => mode = Some(value.into_owned()),
            "sslrootcert" => root = Some(PathBuf::from(value.as_ref())),
            _ => kept.push(pair),
        }
    }
    let verify = match mode.as_deref() {
        None => root.is_some(),
        Some("disable") => false,
        Some("require" | "verify-ca" | "verify-full") => true,
        Some(other) => {
            return Err(refuse(format!(
                "sslmode={other} is not supported: give sslmode=verify-full with \
                 sslrootcert=PATH (TLS, the server's certificate verified), or \
                 sslmode=disable (no TLS); hierad never falls back to plain text"
            )));
        }
    };
    kept.push(if verify {
        "sslmode=require"
    } else {
        "sslmode=disable"
    });
    let roots = match (verify, &root) {
        (false, _) => rustls::RootCertStore::empty(),
        (true, None) => {
            return Err(refuse(
                "TLS needs sslrootcert=PATH: the CA certificates (PEM) that sign \
                 PostgreSQL's certificate, which hierad always verifies"
                    .to_owned(),
            ));
        }
        (true, Some(path)) => roots(path).map_err(refuse)?,
    };
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| refuse(e.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok((
        format!("{base}?{}", kept.join("&")),
        MakeRustlsConnect::new(config),
    ))
}

/// The certificates of the PEM file at `path`, as trust anchors.
fn roots(path: &Path) -> Result<rustls::RootCertStore, String> {
    let unreadable = |reason: String| format!("sslrootcert {}: {reason}", path.display());
    let pem = crate::config_file::read(path).map_err(|e| unreadable(e.to_string()))?;
    let certs = crate::config_file::certificates(&pem).map_err(|e| unreadable(e.to_string()))?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in certs {
        roots.add(cert).map_err(|e| unreadable(e.to_string()))?;
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::from_url;

    fn refusal(url: &str) -> String {
        match from_url(url) {
            Ok((url, _)) => panic!("accepted as {url}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn without_tls_settings_the_url_says_disable() {
        let (url, _) = from_url("postgres://u:secret@db/x?application_name=a").unwrap();
        assert_eq!(
            url,
            "postgres://u:secret@db/x?application_name=a&sslmode=disable"
        );
        let (url, _) = from_url("postgres://u@db/x?sslmode=disable").unwrap();
        assert_eq!(url, "postgres://u@db/x?sslmode=disable");
    }

    #[test]
    fn modes_that_encrypt_need_a_root_and_verify() {
        for mode in ["require", "verify-ca", "verify-full"] {
            let text = refusal(&format!("postgres://u:secret@db/x?sslmode={mode}"));
            assert!(text.contains("sslrootcert=PATH"), "{text}");
            assert!(!text.contains("secret"), "{text}");
        }
        let text = refusal("postgres://u:secret@db/x?sslmode=prefer");
        assert!(text.contains("sslmode=prefer is not supported"), "{text}");
        assert!(!text.contains("secret"), "{text}");
        let text = refusal("postgres://u@db/x?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem");
        assert!(text.contains("sslrootcert /nonexistent/ca.pem:"), "{text}");
        let empty = tempfile::NamedTempFile::new().unwrap();
        let text = refusal(&format!(
            "postgres://u@db/x?sslrootcert={}",
            empty.path().display()
        ));
        assert!(text.contains("no PEM certificate in it"), "{text}");
    }

    #[test]
    fn a_root_alone_means_verify_full_and_is_not_passed_on() {
        let dir = tempfile::tempdir().unwrap();
        let ca = rcgen::generate_simple_self_signed(vec!["db".to_owned()]).unwrap();
        let path = dir.path().join("ca%20x.pem");
        std::fs::write(&path, ca.cert.pem()).unwrap();
        let encoded = dir.path().join("ca%2520x.pem");
        let (url, _) = from_url(&format!(
            "postgres://u@db/x?sslrootcert={}",
            encoded.display()
        ))
        .unwrap();
        assert_eq!(url, "postgres://u@db/x?sslmode=require");
    }
}
