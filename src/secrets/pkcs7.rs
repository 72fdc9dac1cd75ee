//! One block's bytes: PKCS#7 enveloped data (RFC 2315, read and written
//! as CMS, RFC 5652, whose version 0 form it is) with RSA PKCS#1 v1.5 key
//! transport and AES-256-CBC, as hiera-eyaml's pkcs7 encryptor makes it
//! (`OpenSSL::PKCS7.encrypt([cert], text, AES-256-CBC, BINARY)`): one
//! recipient named by its certificate's issuer and serial number, the
//! content type `data`, the IV as the cipher's parameter.

use aes::cipher::block_padding::Pkcs7;
use aes::cipher::{BlockDecryptMut as _, BlockEncryptMut as _, KeyIvInit as _};
use cms::cert::IssuerAndSerialNumber;
use cms::content_info::{CmsVersion, ContentInfo};
use cms::enveloped_data::{
    EncryptedContentInfo, EnvelopedData, KeyTransRecipientInfo, RecipientIdentifier, RecipientInfo,
    RecipientInfos,
};
use der::asn1::{Any, OctetString, SetOfVec};
use der::oid::ObjectIdentifier;
use der::{Decode as _, Encode as _};
use rsa::{Pkcs1v15Encrypt, RsaPrivateKey, RsaPublicKey};
use x509_cert::spki::AlgorithmIdentifierOwned;
use zeroize::Zeroizing;

const DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.1");
const ENVELOPED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.3");
const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const AES_256_CBC: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.42");

type Encryptor = cbc::Encryptor<aes::Aes256>;
type Decryptor = cbc::Decryptor<aes::Aes256>;

/// Why a block's bytes give no plaintext. Never says what the bytes are.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Failure {
    #[error("is not PKCS#7 enveloped data ({0})")]
    Malformed(&'static str),
    #[error("was encrypted for another key: no eyaml private key given decrypts it")]
    OtherKey,
}

/// Whom a block is encrypted for: a certificate's issuer, serial number
/// and RSA key.
#[derive(Clone, Debug)]
pub(crate) struct Recipient {
    pub id: IssuerAndSerialNumber,
    pub key: RsaPublicKey,
}

/// `plaintext` encrypted for `recipient`: the DER bytes eyaml's encryptor
/// returns (same structure, algorithms and parameters; new random key and
/// IV each time).
///
/// # Errors
///
/// No randomness, or an RSA key too small for a 32-byte key (none is).
pub(crate) fn encrypt(recipient: &Recipient, plaintext: &[u8]) -> Result<Vec<u8>, String> {
    let mut key = Zeroizing::new([0u8; 32]);
    let mut iv = [0u8; 16];
    getrandom::fill(key.as_mut_slice()).map_err(|e| format!("no randomness: {e}"))?;
    getrandom::fill(&mut iv).map_err(|e| format!("no randomness: {e}"))?;
    let ciphertext =
        Encryptor::new(key.as_ref().into(), &iv.into()).encrypt_padded_vec_mut::<Pkcs7>(plaintext);
    let wrapped = recipient
        .key
        .encrypt(&mut rsa::rand_core::OsRng, Pkcs1v15Encrypt, key.as_slice())
        .map_err(|e| e.to_string())?;
    let der_error = |e: der::Error| e.to_string();
    let ktri = KeyTransRecipientInfo {
        version: CmsVersion::V0,
        rid: RecipientIdentifier::IssuerAndSerialNumber(recipient.id.clone()),
        key_enc_alg: AlgorithmIdentifierOwned {
            oid: RSA_ENCRYPTION,
            parameters: Some(Any::null()),
        },
        enc_key: OctetString::new(wrapped).map_err(der_error)?,
    };
    let data = EnvelopedData {
        version: CmsVersion::V0,
        originator_info: None,
        recip_infos: RecipientInfos(
            SetOfVec::try_from(vec![RecipientInfo::Ktri(ktri)]).map_err(der_error)?,
        ),
        encrypted_content: EncryptedContentInfo {
            content_type: DATA,
            content_enc_alg: AlgorithmIdentifierOwned {
                oid: AES_256_CBC,
                parameters: Some(
                    Any::encode_from(&OctetString::new(iv).map_err(der_error)?)
                        .map_err(der_error)?,
                ),
            },
            encrypted_content: Some(OctetString::new(ciphertext).map_err(der_error)?),
        },
        unprotected_attrs: None,
    };
    ContentInfo {
        content_type: ENVELOPED_DATA,
        content: Any::encode_from(&data).map_err(der_error)?,
    }
    .to_der()
    .map_err(der_error)
}

/// The plaintext of `der`, by the first of `keys` that decrypts it.
///
/// # Errors
///
/// [`Failure::Malformed`]: not enveloped data eyaml could have written;
/// [`Failure::OtherKey`]: none of `keys` opens it.
pub(crate) fn decrypt(keys: &[RsaPrivateKey], der: &[u8]) -> Result<Vec<u8>, Failure> {
    let envelope = envelope(der)?;
    for key in keys {
        for wrapped in &envelope.wrapped_keys {
            if let Some(plaintext) = open(key, wrapped, &envelope) {
                return Ok(plaintext);
            }
        }
    }
    Err(Failure::OtherKey)
}

/// What decryption needs of a block.
struct Envelope {
    /// Each RSA recipient's encrypted content key.
    wrapped_keys: Vec<Vec<u8>>,
    iv: [u8; 16],
    ciphertext: Vec<u8>,
}

fn envelope(der: &[u8]) -> Result<Envelope, Failure> {
    let info = ContentInfo::from_der(der).map_err(|_| Failure::Malformed("not DER ContentInfo"))?;
    if info.content_type != ENVELOPED_DATA {
        return Err(Failure::Malformed("another content type"));
    }
    let data: EnvelopedData = info
        .content
        .decode_as()
        .map_err(|_| Failure::Malformed("a malformed envelope"))?;
    let content = &data.encrypted_content;
    if content.content_enc_alg.oid != AES_256_CBC {
        return Err(Failure::Malformed("a cipher other than AES-256-CBC"));
    }
    let iv = content
        .content_enc_alg
        .parameters
        .as_ref()
        .and_then(|p| p.decode_as::<OctetString>().ok())
        .and_then(|iv| <[u8; 16]>::try_from(iv.as_bytes()).ok())
        .ok_or(Failure::Malformed("no 16-byte IV"))?;
    let ciphertext = content
        .encrypted_content
        .as_ref()
        .ok_or(Failure::Malformed("no encrypted content"))?
        .as_bytes()
        .to_vec();
    let wrapped_keys: Vec<Vec<u8>> = data
        .recip_infos
        .0
        .iter()
        .filter_map(|recipient| match recipient {
            RecipientInfo::Ktri(ktri) if ktri.key_enc_alg.oid == RSA_ENCRYPTION => {
                Some(ktri.enc_key.as_bytes().to_vec())
            }
            _ => None,
        })
        .collect();
    if wrapped_keys.is_empty() {
        return Err(Failure::Malformed("no RSA recipient"));
    }
    Ok(Envelope {
        wrapped_keys,
        iv,
        ciphertext,
    })
}

/// The plaintext if `key` unwraps `wrapped` to an AES-256 key that
/// decrypts the content with valid padding.
fn open(key: &RsaPrivateKey, wrapped: &[u8], envelope: &Envelope) -> Option<Vec<u8>> {
    let content_key = Zeroizing::new(key.decrypt(Pkcs1v15Encrypt, wrapped).ok()?);
    let content_key: &[u8; 32] = content_key.as_slice().try_into().ok()?;
    Decryptor::new(content_key.into(), &envelope.iv.into())
        .decrypt_padded_vec_mut::<Pkcs7>(&envelope.ciphertext)
        .ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A throwaway 2048-bit key, as `eyaml createkeys` makes (in PKCS#1
    /// PEM, as it writes it), and a self-signed certificate for it.
    pub(crate) fn key_pair() -> (String, String) {
        use rsa::pkcs1::EncodeRsaPrivateKey as _;
        use rsa::pkcs8::EncodePrivateKey as _;
        let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).unwrap();
        let pkcs8 = key.to_pkcs8_pem(rsa::pkcs8::LineEnding::LF).unwrap();
        let signer =
            rcgen::KeyPair::from_pkcs8_pem_and_sign_algo(&pkcs8, &rcgen::PKCS_RSA_SHA256).unwrap();
        let cert = rcgen::CertificateParams::default()
            .self_signed(&signer)
            .unwrap();
        let pkcs1 = key.to_pkcs1_pem(rsa::pkcs8::LineEnding::LF).unwrap();
        (pkcs1.to_string(), cert.pem())
    }

    fn recipient(key: &RsaPrivateKey) -> Recipient {
        Recipient {
            id: IssuerAndSerialNumber {
                issuer: x509_cert::name::Name::default(),
                serial_number: x509_cert::serial_number::SerialNumber::new(&[1]).unwrap(),
            },
            key: RsaPublicKey::from(key),
        }
    }

    #[test]
    fn a_block_opens_with_its_key_only() {
        let mut rng = rsa::rand_core::OsRng;
        let key = RsaPrivateKey::new(&mut rng, 2048).unwrap();
        let other = RsaPrivateKey::new(&mut rng, 2048).unwrap();
        let plain = "s3cret ünïcode".as_bytes();
        let der = encrypt(&recipient(&key), plain).unwrap();
        assert_eq!(decrypt(std::slice::from_ref(&key), &der).unwrap(), plain);
        // Older keys are tried in turn.
        let both = [other.clone(), key];
        assert_eq!(decrypt(&both, &der).unwrap(), plain);
        let alone = std::slice::from_ref(&other);
        assert_eq!(decrypt(alone, &der), Err(Failure::OtherKey));
        let not_envelope = decrypt(alone, b"\x30\x03\x02\x01\x01");
        assert!(matches!(not_envelope, Err(Failure::Malformed(_))));
        let cut = &der[..der.len() - 3];
        assert!(matches!(decrypt(alone, cut), Err(Failure::Malformed(_))));
    }
}
