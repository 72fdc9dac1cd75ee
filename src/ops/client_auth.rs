//! How hierad's HTTP clients authenticate (docs/security.md): the
//! `Authorization` header (bearer token or Basic), a Keystone token, the CA
//! they trust for https and their client certificate. The files are read
//! and checked once, here ([`ClientAuth::material`]), for both clients:
//! the CLI's (ureq, [`ClientAuth::tls`]) and `hierad bench`'s (hyper over
//! tokio-rustls, [`ClientAuth::rustls_config`]).

use super::remote::{RemoteError, Result};
use crate::config_file::PemError;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How the client proves who it is, and which CA it trusts
/// (docs/security.md).
#[derive(Clone, Debug, Default)]
pub(crate) struct ClientAuth {
    /// The `Authorization` header sent with every request.
    pub authorization: Option<String>,
    /// A Keystone token, sent as `X-Auth-Token`.
    pub keystone_token: Option<String>,
    /// CA certificates (PEM) that sign the server's certificate; default:
    /// the Mozilla roots.
    pub ca_file: Option<PathBuf>,
    /// A client certificate chain and its key (PEM).
    pub cert: Option<(PathBuf, PathBuf)>,
}

/// The TLS files of a [`ClientAuth`], read and parsed.
struct Material {
    /// The CA certificates of `--cacert`; `None`: the Mozilla roots.
    roots: Option<Vec<CertificateDer<'static>>>,
    /// The client certificate chain and its key.
    client: Option<(Vec<CertificateDer<'static>>, Key)>,
}

/// A client key: parsed, and its PEM (ureq reads keys from PEM or from
/// DER of a kind it does not export).
struct Key {
    der: PrivateKeyDer<'static>,
    pem: Vec<u8>,
}

fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let bytes = std::fs::read(path)
        .map_err(|e| RemoteError::Tls(format!("cannot read the {what} {}: {e}", path.display())))?;
    crate::config_file::certificates(&bytes).map_err(|e| match e {
        PemError::Malformed(e) => RemoteError::Tls(format!("the {what} {}: {e}", path.display())),
        PemError::Empty => RemoteError::Tls(format!(
            "the {what} {} holds no PEM certificate",
            path.display()
        )),
    })
}

fn read_key(path: &Path) -> Result<Key> {
    let what = "client key (--client-key)";
    let pem = std::fs::read(path)
        .map_err(|e| RemoteError::Tls(format!("cannot read the {what} {}: {e}", path.display())))?;
    let der = PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| RemoteError::Tls(format!("the {what} {}: {e}", path.display())))?;
    Ok(Key { der, pem })
}

impl ClientAuth {
    /// `Authorization: Bearer TOKEN`.
    pub(crate) fn bearer(token: &str) -> String {
        format!("Bearer {}", token.trim())
    }

    /// `Authorization: Basic …` for `user` and `password`.
    pub(crate) fn basic(user: &str, password: &str) -> String {
        use base64::Engine;
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        )
    }

    /// The CA and client certificate files, read now.
    fn material(&self) -> Result<Material> {
        let roots = match &self.ca_file {
            Some(path) => Some(read_certs(path, "CA file (--cacert)")?),
            None => None,
        };
        let client = match &self.cert {
            Some((cert, key)) => Some((
                read_certs(cert, "client certificate (--client-cert)")?,
                read_key(key)?,
            )),
            None => None,
        };
        Ok(Material { roots, client })
    }

    /// The CLI client's TLS settings (ureq builds its rustls
    /// configuration from them).
    pub(super) fn tls(&self) -> Result<ureq::tls::TlsConfig> {
        use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts, TlsConfig};
        let material = self.material()?;
        let ureq_certs = |certs: &[CertificateDer<'static>]| -> Vec<Certificate<'static>> {
            certs
                .iter()
                .map(|c| Certificate::from_der(c.as_ref()).to_owned())
                .collect()
        };
        let mut tls = TlsConfig::builder();
        if let Some(roots) = &material.roots {
            tls = tls.root_certs(RootCerts::Specific(Arc::new(ureq_certs(roots))));
        }
        if let Some((chain, key)) = &material.client {
            let key = PrivateKey::from_pem(&key.pem)
                .map_err(|e| RemoteError::Tls(format!("the client key (--client-key): {e}")))?
                .to_owned();
            tls = tls.client_cert(Some(ClientCert::new_with_certs(&ureq_certs(chain), key)));
        }
        Ok(tls.build())
    }

    /// `hierad bench`'s TLS configuration (rustls with ring, as the
    /// server): the CA of `--cacert` or the Mozilla roots, and the client
    /// certificate.
    pub(crate) fn rustls_config(&self) -> Result<Arc<rustls::ClientConfig>> {
        let material = self.material()?;
        let mut roots = rustls::RootCertStore::empty();
        match material.roots {
            Some(certs) => {
                for cert in certs {
                    roots.add(cert).map_err(|e| {
                        RemoteError::Tls(format!(
                            "the CA file (--cacert) {}: {e}",
                            self.ca_file.as_deref().unwrap_or(Path::new("")).display()
                        ))
                    })?;
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| RemoteError::Tls(format!("no TLS protocol version: {e}")))?
        .with_root_certificates(roots);
        let config = match material.client {
            Some((chain, key)) => builder.with_client_auth_cert(chain, key.der).map_err(|e| {
                RemoteError::Tls(format!(
                    "the client certificate and key do not go together: {e}"
                ))
            })?,
            None => builder.with_no_client_auth(),
        };
        Ok(Arc::new(config))
    }
}

/// Why a server URL that names a user (`USER:PASSWORD@host`) is refused:
/// hierad's clients take credentials only from --user with
/// --password-file, --token, --os-token or a client certificate, never
/// from the URL, and a URL is printed in errors (so the refusal does not
/// repeat it).
pub(crate) const CREDENTIALS_IN_URL: &str = "the server URL holds credentials (USER:PASSWORD@HOST), \
     which hierad does not send and would print wherever it names the server; \
     give --user with --password-file, or --token (HIERAD_TOKEN)";

/// What a TLS failure means for the user, in one line: an untrusted
/// certificate names `--cacert`, a refused client certificate names
/// `--client-cert`.
pub(crate) fn tls_failure(e: &rustls::Error) -> String {
    use rustls::{AlertDescription as A, CertificateError as C, Error as E};
    let hint = match e {
        E::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => {
            " (the server's certificate is not signed by a CA this client trusts: give --cacert FILE with the CA that signed it)"
        }
        E::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => {
            " (the server's certificate does not name the host of the URL)"
        }
        E::InvalidCertificate(C::Expired | C::ExpiredContext { .. }) => {
            " (the server's certificate has expired)"
        }
        E::AlertReceived(A::CertificateRequired | A::BadCertificate | A::UnknownCA) => {
            " (the server refused the client certificate: check --client-cert and --client-key)"
        }
        _ => "",
    };
    format!("TLS failed: {e}{hint}")
}

/// The rustls error an I/O error carries (a failed handshake's).
pub(crate) fn rustls_error(e: &std::io::Error) -> Option<&rustls::Error> {
    e.get_ref()?.downcast_ref::<rustls::Error>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusable_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let missing = dir.path().join("missing.pem");
        let with_ca = |ca: &Path| ClientAuth {
            ca_file: Some(ca.to_owned()),
            ..ClientAuth::default()
        };
        let err = with_ca(&empty).rustls_config().unwrap_err().to_string();
        assert!(
            err.contains("CA file (--cacert)") && err.contains("holds no PEM certificate"),
            "{err}"
        );
        let err = with_ca(&missing).tls().unwrap_err().to_string();
        assert!(
            err.starts_with("cannot read the CA file (--cacert)"),
            "{err}"
        );
        let with_cert = ClientAuth {
            cert: Some((empty.clone(), missing.clone())),
            ..ClientAuth::default()
        };
        let err = with_cert.rustls_config().unwrap_err().to_string();
        assert!(err.contains("client certificate (--client-cert)"), "{err}");
        // The defaults: the Mozilla roots, no client certificate.
        assert!(ClientAuth::default().rustls_config().is_ok());
    }

    #[test]
    fn tls_failures_say_what_to_do() {
        let unknown = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let text = tls_failure(&unknown);
        assert!(
            text.starts_with("TLS failed: invalid peer certificate")
                && text.contains("give --cacert"),
            "{text}"
        );
        let other = rustls::Error::General("x".into());
        assert_eq!(tls_failure(&other), "TLS failed: unexpected error: x");
    }
}
