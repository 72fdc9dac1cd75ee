//! TLS (rustls, the ring provider): the server's certificate and key and
//! the optional client CA, read from PEM files, rebuilt whole when they
//! change or on SIGHUP (server/reload.rs) into a new configuration that new
//! connections use; connections open keep the one they started with. A
//! client certificate is optional even with a client CA (Basic, bearer
//! and Keystone clients have none), and when one is sent it must chain to
//! the CA; its subject's common name and DNS alternative names are what
//! the auth file's `client_cert` rules match.

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

impl TlsFiles {
    /// The certificate, the key and the client CA, if any.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        [Some(&self.cert), Some(&self.key), self.client_ca.as_ref()]
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }
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

    /// The files it is read from.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        self.files.paths()
    }

    /// The acceptor for the next connection.
    pub(crate) fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(self.config.load_full())
    }
}

/// ring's suites, AES-128-GCM first. ring lists AES-256 first; AES-128
/// is as safe for this use (TLS 1.3 and 1.2 AEAD, 128-bit security) and
/// takes 10 AES rounds a block instead of 14, which every record of every
/// answer pays. The server's order decides (`ignore_client_order`), since
/// clients (rustls, OpenSSL) ask for AES-256 first.
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites.sort_by_key(|suite| {
        use rustls::CipherSuite as S;
        !matches!(
            suite.suite(),
            S::TLS13_AES_128_GCM_SHA256
                | S::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
                | S::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
        )
    });
    Arc::new(provider)
}

fn read_certs(what: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    use crate::config_file::{self, PemError};
    let unreadable = |reason: String| TlsError::File {
        what,
        path: path.to_owned(),
        reason,
    };
    let pem = config_file::read(path).map_err(|e| unreadable(e.to_string()))?;
    config_file::certificates(&pem).map_err(|e| match e {
        PemError::Malformed(reason) => unreadable(reason),
        PemError::Empty => TlsError::Empty {
            what,
            path: path.to_owned(),
            expected: "PEM certificate",
        },
    })
}

fn build(files: &TlsFiles) -> Result<rustls::ServerConfig, TlsError> {
    let chain = read_certs("the certificate (--tls-cert)", &files.cert)?;
    let unreadable = |reason: String| TlsError::File {
        what: "the private key (--tls-key)",
        path: files.key.clone(),
        reason,
    };
    let pem = crate::config_file::read(&files.key).map_err(|e| unreadable(e.to_string()))?;
    let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| unreadable(e.to_string()))?;
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
    config.ignore_client_order = true;
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

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::CipherSuite;

    /// A self-signed certificate for localhost and its key, written to
    /// files in `dir`.
    fn self_signed(dir: &Path) -> (rcgen::Certificate, TlsFiles) {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let files = TlsFiles {
            cert: dir.join("server.pem"),
            key: dir.join("server.key"),
            client_ca: None,
        };
        std::fs::write(&files.cert, cert.pem()).unwrap();
        std::fs::write(&files.key, key.serialize_pem()).unwrap();
        (cert, files)
    }

    #[test]
    fn a_device_for_the_key_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let (_, mut files) = self_signed(dir.path());
        files.key = "/dev/zero".into();
        let err = Tls::load(files).err().unwrap().to_string();
        assert!(
            err.contains("/dev/zero") && err.contains("a character device, not a regular file"),
            "{err}"
        );
    }

    /// rustls and OpenSSL clients ask for AES-256-GCM first; the server
    /// still settles on AES-128-GCM.
    #[test]
    fn the_server_chooses_aes_128_over_the_clients_order() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, files) = self_signed(dir.path());
        let tls = Tls::load(files).unwrap();

        let mut roots = rustls::RootCertStore::empty();
        roots.add(cert.der().clone()).unwrap();
        let client_provider = rustls::crypto::ring::default_provider();
        assert_eq!(
            client_provider.cipher_suites[0].suite(),
            CipherSuite::TLS13_AES_256_GCM_SHA384,
            "the client must prefer AES-256 for this test to mean anything"
        );
        let client_config = rustls::ClientConfig::builder_with_provider(Arc::new(client_provider))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut client =
            rustls::ClientConnection::new(Arc::new(client_config), "localhost".try_into().unwrap())
                .unwrap();
        let mut server = rustls::ServerConnection::new(tls.config.load_full()).unwrap();
        // The handshake, in memory: a few flights each way.
        for _ in 0..10 {
            let mut flight = Vec::new();
            client.write_tls(&mut flight).unwrap();
            server.read_tls(&mut flight.as_slice()).unwrap();
            server.process_new_packets().unwrap();
            flight.clear();
            server.write_tls(&mut flight).unwrap();
            client.read_tls(&mut flight.as_slice()).unwrap();
            client.process_new_packets().unwrap();
            if !client.is_handshaking() && !server.is_handshaking() {
                break;
            }
        }
        assert!(!server.is_handshaking(), "the handshake did not finish");
        assert_eq!(
            server.negotiated_cipher_suite().map(|s| s.suite()),
            Some(CipherSuite::TLS13_AES_128_GCM_SHA256)
        );
    }
}
