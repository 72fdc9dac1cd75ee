//! Secrets as hiera-eyaml writes them (docs/security.md "Secrets"): a
//! String value holding `ENC[PKCS7,<base64>]` blocks, each PKCS#7
//! enveloped data (RSA key transport, AES-256-CBC) for the public key of
//! `eyaml createkeys`.
//!
//! - `block`: where the blocks are in a string, and how they are written
//!   (pure);
//! - `pkcs7`: one block's bytes encrypted and decrypted;
//! - `keyring`: the key files, read and checked, and whether they changed;
//! - `rotate`: every block of a document re-encrypted to the current
//!   public key (pure);
//! - `walk`: every block of a value decrypted for a principal who may see
//!   plaintext, with a bounded cache, and values encrypted at key paths.
//!
//! The crypto is RustCrypto's: `cms` types for the envelope (no ASN.1 by
//! hand), `rsa` for the key transport, `aes` and `cbc` for the content;
//! nothing to build against or ship besides the binary. `rsa` decrypts
//! PKCS#1 v1.5 in time that depends on the padding (RUSTSEC-2023-0071,
//! the Marvin attack, <https://people.redhat.com/~hkario/marvin/>),
//! which helps one who makes the server decrypt many chosen blocks and
//! times each decryption. Here a writer may store blocks, but only a
//! request of a principal allowed to decrypt makes the server decrypt
//! them, and that principal reads the plaintexts anyway; successful
//! decryptions are cached, so repeats do not run RSA again.
//!
//! For the server: [`Keyring::load`] from `Settings::eyaml`, and a
//! [`Decrypter`] over it (with `Settings::eyaml_cache_bytes`) held where
//! a reload can swap it; when [`Keyring::changed_on_disk`], load the
//! keys again and swap in a new `Decrypter` (its cache starts empty).
//! For a principal with `decrypt`, pass an answer's value through
//! [`Decrypter::decrypt_value`] (a lookup: the error is the answer) or a
//! document through [`Decrypter::decrypt_document`] (its failed keys kept
//! as stored, the errors listed); for every other principal, answer as
//! stored. [`walk::encrypt_at`] is `--encrypt KEYPATH` for a write.

mod block;
pub(crate) mod keyring;
mod pkcs7;
pub(crate) mod rotate;
pub(crate) mod walk;

pub(crate) use block::{Output, format_block};
pub(crate) use keyring::{KeyFiles, Keyring};
pub(crate) use walk::{Decrypter, Problem, holds_block};
