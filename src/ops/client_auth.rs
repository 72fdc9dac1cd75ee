//! How hierad's HTTP client authenticates (docs/security.md): the
//! `Authorization` header (bearer token or Basic), a Keystone token, the CA
//! it trusts for https and its client certificate.

use super::remote::{RemoteError, Result};

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
    pub ca_file: Option<std::path::PathBuf>,
    /// A client certificate chain and its key (PEM).
    pub cert: Option<(std::path::PathBuf, std::path::PathBuf)>,
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

    /// The TLS settings: the CA and client certificate, read now.
    pub(super) fn tls(&self) -> Result<ureq::tls::TlsConfig> {
        use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts, TlsConfig};
        let read = |path: &std::path::Path, what: &str| {
            std::fs::read(path).map_err(|e| {
                RemoteError::Tls(format!("cannot read the {what} {}: {e}", path.display()))
            })
        };
        let certs = |path: &std::path::Path, what: &str| -> Result<Vec<Certificate<'static>>> {
            let pem = read(path, what)?;
            let found: Vec<Certificate<'static>> = ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(cert)) => Some(cert.to_owned()),
                    _ => None,
                })
                .collect();
            if found.is_empty() {
                return Err(RemoteError::Tls(format!(
                    "the {what} {} holds no PEM certificate",
                    path.display()
                )));
            }
            Ok(found)
        };
        let mut tls = TlsConfig::builder();
        if let Some(path) = &self.ca_file {
            tls = tls.root_certs(RootCerts::Specific(std::sync::Arc::new(certs(
                path,
                "CA file (--cacert)",
            )?)));
        }
        if let Some((cert, key)) = &self.cert {
            let chain = certs(cert, "client certificate (--client-cert)")?;
            let key = PrivateKey::from_pem(&read(key, "client key (--client-key)")?)
                .map_err(|e| {
                    RemoteError::Tls(format!(
                        "the client key (--client-key) {}: {e}",
                        key.display()
                    ))
                })?
                .to_owned();
            tls = tls.client_cert(Some(ClientCert::new_with_certs(&chain, key)));
        }
        Ok(tls.build())
    }
}
