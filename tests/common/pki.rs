//! Test certificates, made at test time with rcgen (never committed): a
//! CA, server certificates for 127.0.0.1, client certificates by common
//! name. Shared by the TLS tests of hierad's server and of its PostgreSQL
//! connections.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A test CA and what it issues.
#[allow(missing_debug_implementations)]
pub struct Pki {
    dir: PathBuf,
    ca: rcgen::Issuer<'static, rcgen::KeyPair>,
    pub ca_pem: String,
}

impl Pki {
    /// A new CA, its certificate written to `dir`/ca.pem.
    pub fn new(dir: &Path) -> Pki {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "hierad test CA");
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).unwrap();
        let ca_pem = cert.pem();
        std::fs::write(dir.join("ca.pem"), &ca_pem).unwrap();
        Pki {
            dir: dir.to_owned(),
            ca: rcgen::Issuer::new(params, key),
            ca_pem,
        }
    }

    /// Writes NAME.pem and NAME.key: a certificate for `cn` (and `sans`).
    pub fn issue(&self, name: &str, cn: &str, sans: &[&str], client: bool) -> (PathBuf, PathBuf) {
        let key = rcgen::KeyPair::generate().unwrap();
        let sans: Vec<String> = sans.iter().map(|s| (*s).to_owned()).collect();
        let mut params = rcgen::CertificateParams::new(sans).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        params.extended_key_usages = vec![if client {
            rcgen::ExtendedKeyUsagePurpose::ClientAuth
        } else {
            rcgen::ExtendedKeyUsagePurpose::ServerAuth
        }];
        let cert = params.signed_by(&key, &self.ca).unwrap();
        let (pem, key_path) = (
            self.dir.join(format!("{name}.pem")),
            self.dir.join(format!("{name}.key")),
        );
        std::fs::write(&pem, cert.pem()).unwrap();
        std::fs::write(&key_path, key.serialize_pem()).unwrap();
        (pem, key_path)
    }

    /// An HTTP client trusting this CA (any status is an answer, not an
    /// error), presenting `cert` (a certificate and key) if given.
    pub fn client(&self, cert: Option<&(PathBuf, PathBuf)>) -> ureq::Agent {
        use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts, TlsConfig};
        let ca = Certificate::from_pem(self.ca_pem.as_bytes())
            .unwrap()
            .to_owned();
        let mut tls = TlsConfig::builder().root_certs(RootCerts::Specific(Arc::new(vec![ca])));
        if let Some((pem, key)) = cert {
            let chain = Certificate::from_pem(&std::fs::read(pem).unwrap())
                .unwrap()
                .to_owned();
            let key = PrivateKey::from_pem(&std::fs::read(key).unwrap())
                .unwrap()
                .to_owned();
            tls = tls.client_cert(Some(ClientCert::new_with_certs(&[chain], key)));
        }
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .tls_config(tls.build())
            .build()
            .into()
    }

    /// A rustls client configuration trusting this CA, for tests that
    /// write their bytes over TLS by hand.
    pub fn rustls_client(&self) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        let ca = rustls::pki_types::pem::PemObject::from_pem_slice(self.ca_pem.as_bytes()).unwrap();
        roots.add(ca).unwrap();
        Arc::new(
            rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
        )
    }
}
