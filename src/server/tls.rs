//! TLS (rustls, the ring provider): the server's certificate and key and
//! the optional client CA, read from PEM files, rebuilt whole on SIGHUP
//! into a new configuration that new connections use; connections open
//! keep the one they started with. A client certificate is optional even
//! with a client CA (Basic, bearer and Keystone clients have none), and
//! when one is sent it must chain to the CA; its subject's common name
//! and DNS alternative names are what the auth file's `client_cert`
//! rules match.

use crate::auth::verify::CertIdentity;
use arc_swap::ArcSwap;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the server's TLS material is.
#[derive(Clone, Debug)]
pub(crate) struct TlsFiles {
    /// The certificate chain, leaf first (PEM).
    pub(crate) cert: PathBuf,
    /// Its private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub(crate) key: PathBuf,
    /// CA certificates that sign client certificates (PEM).
    pub(crate) client_ca: Option<PathBuf>,
}

/// What is wrong with the TLS files.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsError {
    #[error("cannot read {what} {}: {reason}", path.display())]
    File {
        what: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error("{what} {} holds no {expected}", path.display())]
    Empty {
        what: &'static str,
        path: PathBuf,
        expected: &'static str,
    },
    #[error("the TLS configuration is refused: {0}")]
    Config(String),
}

/// The server's TLS configuration, swapped whole on reload.
pub(crate) struct Tls {
    files: TlsFiles,
    config: ArcSwap<rustls::ServerConfig>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

impl Tls {
    /// Reads `files` into a configuration.
    ///
    /// # Errors
    ///
    /// A file is missing or unreadable, holds nothing usable, or the key
    /// does not match the certificate.
    pub(crate) fn load(files: TlsFiles) -> Result<Tls, TlsError> {
        let config = build(&files)?;
        Ok(Tls {
            files,
            config: ArcSwap::from_pointee(config),
        })
    }

    /// Reads the files again; on success new connections use them, on
    /// failure the old configuration stays (and the error says why).
    ///
    /// # Errors
    ///
    /// As [`Tls::load`].
    pub(crate) fn reload(&self) -> Result<(), TlsError> {
        let config = build(&self.files)?;
        self.config.store(Arc::new(config));
        Ok(())
    }

    /// The acceptor for the next connection.
    pub(crate) fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(self.config.load_full())
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn read_certs(what: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|e| TlsError::File {
            what,
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
    if certs.is_empty() {
        return Err(TlsError::Empty {
            what,
            path: path.to_owned(),
            expected: "PEM certificate",
        });
    }
    Ok(certs)
}

fn build(files: &TlsFiles) -> Result<rustls::ServerConfig, TlsError> {
    let chain = read_certs("the certificate (--tls-cert)", &files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| TlsError::File {
        what: "the private key (--tls-key)",
        path: files.key.clone(),
        reason: e.to_string(),
    })?;
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = match &files.client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in read_certs("the client CA (--tls-client-ca)", path)? {
                roots
                    .add(cert)
                    .map_err(|e| TlsError::Config(format!("client CA {}: {e}", path.display())))?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider(),
            )
            .allow_unauthenticated()
            .build()
            .map_err(|e| TlsError::Config(e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| TlsError::Config(format!("certificate and key: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The identity in a verified client certificate (DER): its subject's
/// common name and its DNS subject alternative names.
pub(crate) fn identity(cert: &CertificateDer<'_>) -> Option<CertIdentity> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref()).ok()?;
    let cn = parsed
        .subject()
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .map(str::to_owned);
    let dns_names = parsed
        .subject_alternative_name()
        .ok()
        .flatten()
        .map(|san| {
            san.value
                .general_names
                .iter()
                .filter_map(|name| match name {
                    x509_parser::extensions::GeneralName::DNSName(dns) => Some((*dns).to_owned()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    Some(CertIdentity { cn, dns_names })
}
