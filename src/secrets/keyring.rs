//! The eyaml key files (`hierad serve --eyaml-private-key PEM
//! --eyaml-public-key PEM`, `hierad secrets …`): read and checked as a
//! whole, so a reload either takes every file or keeps the old keys. The
//! private keys must be readable by their owner only.

use super::block;
use super::pkcs7::{self, Recipient};
use crate::config_file::{self, Seen};
use der::{Decode as _, Encode as _};
use rsa::{RsaPrivateKey, RsaPublicKey};
use std::path::{Path, PathBuf};

/// Where the keys are. eyaml's names: `keys/private_key.pkcs7.pem` (an
/// RSA key) and `keys/public_key.pkcs7.pem` (a self-signed certificate).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct KeyFiles {
    /// The current private key: decrypts.
    pub private_key: Option<PathBuf>,
    /// Its certificate: encrypts.
    pub public_key: Option<PathBuf>,
    /// Private keys of earlier key pairs, tried after the current one, so
    /// blocks not yet re-encrypted still open during a rotation.
    pub old_private_keys: Vec<PathBuf>,
}

impl KeyFiles {
    /// Every file named, for a watch of their changes.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        self.private_key
            .iter()
            .chain(&self.public_key)
            .chain(&self.old_private_keys)
            .cloned()
            .collect()
    }
}

/// What is wrong with a key file. Names the file, never its contents.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyError {
    #[error("cannot read the eyaml {what} {}: {error}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the eyaml {what} {} is not usable: {message}", path.display())]
    Invalid {
        what: &'static str,
        path: PathBuf,
        message: String,
    },
    #[error(
        "the eyaml public key {} is not the certificate of the private key {}: give the pair `eyaml createkeys` wrote together",
        public.display(), private.display()
    )]
    Mismatch { private: PathBuf, public: PathBuf },
    #[error(
        "no eyaml public key: encrypting needs one (--eyaml-public-key PEM, the certificate `eyaml createkeys` writes)"
    )]
    NoPublicKey,
    #[error("encrypting failed: {0}")]
    Encrypt(String),
}

/// The loaded keys. Shows no key material in `Debug`.
pub(crate) struct Keyring {
    files: KeyFiles,
    /// The current key first, then the older ones in the order given.
    private: Vec<RsaPrivateKey>,
    public: Option<Recipient>,
    seen: Seen,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

const PRIVATE: &str = "private key";
const OLD_PRIVATE: &str = "older private key";
const PUBLIC: &str = "public key";

impl Keyring {
    /// Reads and checks every file of `files`.
    ///
    /// # Errors
    ///
    /// A file cannot be read, a private key file others may read, a file
    /// that is not a PEM RSA key (private) or certificate (public), or a
    /// certificate that is not the private key's.
    pub(crate) fn load(files: &KeyFiles) -> Result<Keyring, KeyError> {
        // Stamped before they are read: a change while reading is seen by
        // the next look.
        let seen = stamps(files);
        let mut private = Vec::new();
        if let Some(path) = &files.private_key {
            private.push(private_key(PRIVATE, path)?);
        }
        for path in &files.old_private_keys {
            private.push(private_key(OLD_PRIVATE, path)?);
        }
        let public = match &files.public_key {
            Some(path) => Some(certificate(path)?),
            None => None,
        };
        if let (Some(key), Some(cert), Some(key_path), Some(cert_path)) = (
            private.first(),
            &public,
            &files.private_key,
            &files.public_key,
        ) {
            if RsaPublicKey::from(key) != cert.key {
                return Err(KeyError::Mismatch {
                    private: key_path.clone(),
                    public: cert_path.clone(),
                });
            }
        }
        Ok(Keyring {
            files: files.clone(),
            private,
            public,
            seen,
        })
    }

    /// Whether it holds a private key.
    pub(crate) fn can_decrypt(&self) -> bool {
        !self.private.is_empty()
    }

    /// Whether a file changed since it was loaded (size, times, inode: a
    /// replaced file counts, as a rotated key is one): the cheap check a
    /// reload loop makes before [`Keyring::load`].
    pub(crate) fn changed_on_disk(&self) -> bool {
        stamps(&self.files) != self.seen
    }

    /// The files it was loaded from.
    pub(crate) fn files(&self) -> &KeyFiles {
        &self.files
    }

    /// `plaintext` as a one-line `ENC[PKCS7,…]` block for the public key.
    ///
    /// # Errors
    ///
    /// [`KeyError::NoPublicKey`], or OpenSSL's failure.
    pub(crate) fn encrypt(&self, plaintext: &str) -> Result<String, KeyError> {
        let cert = self.public.as_ref().ok_or(KeyError::NoPublicKey)?;
        let der = pkcs7::encrypt(cert, plaintext.as_bytes()).map_err(KeyError::Encrypt)?;
        Ok(block::format_string(&der))
    }

    /// The plaintext of a block's bytes.
    pub(super) fn decrypt(&self, der: &[u8]) -> Result<Vec<u8>, pkcs7::Failure> {
        pkcs7::decrypt(&self.private, der)
    }
}

fn private_key(what: &'static str, path: &Path) -> Result<RsaPrivateKey, KeyError> {
    use rsa::pkcs1::DecodeRsaPrivateKey as _;
    use rsa::pkcs8::DecodePrivateKey as _;
    let invalid = |message: &str| KeyError::Invalid {
        what,
        path: path.to_owned(),
        message: message.to_owned(),
    };
    let pem = config_file::read_private(path).map_err(|error| KeyError::Read {
        what,
        path: path.to_owned(),
        error,
    })?;
    let pem = std::str::from_utf8(&pem).map_err(|_| invalid("it is not PEM text"))?;
    // eyaml writes PKCS#1 (`RSA PRIVATE KEY`); `openssl genpkey`, PKCS#8.
    RsaPrivateKey::from_pkcs1_pem(pem)
        .or_else(|_| RsaPrivateKey::from_pkcs8_pem(pem))
        .map_err(|_| {
            invalid(
                "no unencrypted PEM RSA private key in it (eyaml createkeys writes one, \
                 keys/private_key.pkcs7.pem)",
            )
        })
}

fn certificate(path: &Path) -> Result<Recipient, KeyError> {
    let invalid = |message: String| KeyError::Invalid {
        what: PUBLIC,
        path: path.to_owned(),
        message,
    };
    let pem = config_file::read(path).map_err(|error| KeyError::Read {
        what: PUBLIC,
        path: path.to_owned(),
        error,
    })?;
    let certs = config_file::certificates(&pem).map_err(|e| {
        invalid(format!(
            "{e}; it must be the certificate eyaml createkeys writes (keys/public_key.pkcs7.pem)"
        ))
    })?;
    let cert = x509_cert::Certificate::from_der(&certs[0])
        .map_err(|e| invalid(format!("not an X.509 certificate: {e}")))?;
    let tbs = cert.tbs_certificate;
    let not_rsa =
        || invalid("its key is not an RSA key, which eyaml's PKCS7 blocks need".to_owned());
    let spki = tbs
        .subject_public_key_info
        .to_der()
        .map_err(|_| not_rsa())?;
    let key = <RsaPublicKey as rsa::pkcs8::DecodePublicKey>::from_public_key_der(&spki)
        .map_err(|_| not_rsa())?;
    Ok(Recipient {
        id: cms::cert::IssuerAndSerialNumber {
            issuer: tbs.issuer,
            serial_number: tbs.serial_number,
        },
        key,
    })
}

fn stamps(files: &KeyFiles) -> Seen {
    Seen::of(&files.paths())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    /// A key pair written as `eyaml createkeys` leaves it (mode 0600 for
    /// the private key), in `dir`.
    pub(crate) fn write_pair(dir: &Path, name: &str) -> KeyFiles {
        let (key, cert) = super::super::pkcs7::tests::key_pair();
        let private = dir.join(format!("{name}_private.pem"));
        let public = dir.join(format!("{name}_public.pem"));
        std::fs::write(&private, key).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&public, cert).unwrap();
        KeyFiles {
            private_key: Some(private),
            public_key: Some(public),
            old_private_keys: Vec::new(),
        }
    }

    #[test]
    fn mistakes_in_key_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_pair(dir.path(), "a");
        let b = write_pair(dir.path(), "b");
        let ring = Keyring::load(&a).unwrap();
        assert!(ring.can_decrypt() && !ring.changed_on_disk());
        let private = a.private_key.clone().unwrap();

        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(ring.changed_on_disk(), "a chmod changes ctime");
        let err = Keyring::load(&a).unwrap_err().to_string();
        assert!(
            err.contains("a_private.pem") && err.contains("chmod 600"),
            "{err}"
        );
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o400)).unwrap();
        Keyring::load(&a).unwrap();

        let crossed = KeyFiles {
            public_key: b.public_key.clone(),
            ..a.clone()
        };
        let err = Keyring::load(&crossed).unwrap_err().to_string();
        assert!(
            err.contains("b_public.pem is not the certificate of the private key"),
            "{err}"
        );

        let swapped = KeyFiles {
            private_key: b.public_key.clone(),
            public_key: None,
            old_private_keys: vec![],
        };
        std::fs::set_permissions(
            b.public_key.as_ref().unwrap(),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        let err = Keyring::load(&swapped).unwrap_err().to_string();
        assert!(
            err.contains("b_public.pem is not usable: no unencrypted PEM RSA private key"),
            "{err}"
        );
        assert!(!err.contains("BEGIN"), "{err}");
        let swapped = KeyFiles {
            private_key: None,
            public_key: b.private_key.clone(),
            old_private_keys: vec![],
        };
        let err = Keyring::load(&swapped).unwrap_err().to_string();
        assert!(
            err.contains("b_private.pem is not usable") && err.contains("certificate"),
            "{err}"
        );
        let missing = KeyFiles {
            old_private_keys: vec![dir.path().join("gone.pem")],
            ..a
        };
        let err = Keyring::load(&missing).unwrap_err().to_string();
        assert!(
            err.contains("older private key") && err.contains("gone.pem"),
            "{err}"
        );

        let public_only = KeyFiles {
            private_key: None,
            ..b
        };
        let ring = Keyring::load(&public_only).unwrap();
        assert!(!ring.can_decrypt());
        assert!(ring.encrypt("x").unwrap().starts_with("ENC[PKCS7,MII"));
        let none = Keyring::load(&KeyFiles::default()).unwrap();
        assert!(matches!(none.encrypt("x"), Err(KeyError::NoPublicKey)));
    }
}
