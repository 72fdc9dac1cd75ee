//! Data files kept as they were because they do not parse: Hiera fails
//! only the lookups that read such a file, so `hierad import` keeps it as
//! a document holding the file's bytes and the path Hiera names it by,
//! and every read of that document fails with the error Hiera raises
//! reading the file ([`crate::hiera::datafile::read`]).
//!
//! Stored in a version's content as a tagged object that no document can
//! be (a document is a Hash, and a Hash holding the tag key is stored as
//! a tagged `hash`, see [`crate::wire`]), so dumps, packing, quotas and
//! history carry it as they carry any content, and a hierad that predates
//! it reads it as an unreadable document rather than as data:
//!
//! `{"__hierad__": "unparsed", "path": "data/x.yaml", "text": "a: [1\n"}`,
//! or `"base64"` in place of `"text"` for bytes that are not UTF-8.

use super::model::DocAddress;
use crate::hiera::Hash;
use crate::hiera::config::BackendKind;
use crate::hiera::datafile::{backend_of, read};
use crate::hiera::error::{ErrorClass, HieraError};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A data file's bytes and the path Hiera names it by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unparsed {
    /// As the import was given it (`data/x.yaml` for `hierad import data`):
    /// Hiera's errors name the file by the path it opens.
    pub(crate) path: String,
    pub(crate) bytes: Vec<u8>,
}

/// The stored form's tag value.
const TAG_VALUE: &str = "unparsed";

/// The stored form; field order fixes the prefix [`Unparsed::from_stored`]
/// looks for.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    #[serde(rename = "__hierad__")]
    tag: String,
    path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    base64: Option<String>,
}

impl Unparsed {
    /// The file's data as Hiera reads it, or Hiera's error: what every
    /// read of the document answers.
    ///
    /// # Errors
    ///
    /// The error Hiera raises reading the file at [`Unparsed::path`].
    pub(crate) fn parse(&self) -> Result<Hash, HieraError> {
        read(backend_of(&self.path), &self.path, &self.bytes)
    }

    /// The file's data as Puppet 7's yaml_data reads it, where Hiera 3
    /// refused the file only for its aliases, which Puppet's reader
    /// resolves (`hiera::yaml::load_puppet`): a Hiera 5 environment keeps
    /// such a file as data.
    pub(crate) fn puppet_data(&self) -> Option<Hash> {
        let refused = self.parse().err()?;
        if refused.class != ErrorClass::PsychBadAlias || backend_of(&self.path) != BackendKind::Yaml
        {
            return None;
        }
        let text = crate::hiera::encoding::yaml_text(&self.bytes).ok()?;
        match crate::hiera::yaml::load_puppet(&text).ok()? {
            crate::hiera::Value::Hash(data) => Some(data),
            _ => None,
        }
    }

    /// Its bytes as text, or (not UTF-8) in base64: the fields of the
    /// stored form and of the import API's.
    pub(crate) fn text_or_base64(&self) -> (Option<String>, Option<String>) {
        match std::str::from_utf8(&self.bytes) {
            Ok(text) => (Some(text.to_owned()), None),
            Err(_) => (None, Some(STANDARD.encode(&self.bytes))),
        }
    }

    /// The file of those fields.
    ///
    /// # Errors
    ///
    /// An empty path, neither or both fields, or base64 that does not
    /// decode; the message names the field.
    pub(crate) fn from_fields(
        path: String,
        text: Option<String>,
        base64: Option<String>,
    ) -> Result<Unparsed, String> {
        let bytes = match (text, base64) {
            (Some(text), None) => text.into_bytes(),
            (None, Some(b64)) => STANDARD
                .decode(b64)
                .map_err(|e| format!("base64 does not decode: {e}"))?,
            _ => return Err("give exactly one of text and base64".to_owned()),
        };
        if path.is_empty() {
            return Err("path is empty: give the path Hiera names the file by".to_owned());
        }
        Ok(Unparsed { path, bytes })
    }

    /// The text a version's content holds.
    pub(crate) fn to_stored(&self) -> String {
        let (text, base64) = self.text_or_base64();
        let stored = Stored {
            tag: TAG_VALUE.to_owned(),
            path: self.path.clone(),
            text,
            base64,
        };
        serde_json::to_string(&stored).unwrap_or_default()
    }

    /// The file a version's content holds, if it holds one; `None` for
    /// a document's wire JSON (and for anything malformed, which the
    /// caller's decoding then reports as it reports any bad content).
    pub(crate) fn from_stored(content: &str) -> Option<Unparsed> {
        if !content.starts_with(r#"{"__hierad__":"unparsed","#) {
            return None;
        }
        let stored: Stored = serde_json::from_str(content).ok()?;
        if stored.tag != TAG_VALUE {
            return None;
        }
        Unparsed::from_fields(stored.path, stored.text, stored.base64).ok()
    }
}

/// What a version of a document holds: data, or a data file kept
/// unparsed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Content {
    Data(Hash),
    File(Unparsed),
}

impl Content {
    /// A data file as a version keeps it: its data when it parses as
    /// Hiera reads it, else the file itself. The one verdict on a file,
    /// made wherever it is stored (a client's is never taken).
    pub(crate) fn of_file(file: Unparsed) -> Content {
        match file.parse() {
            Ok(doc) => Content::Data(doc),
            Err(_) => Content::File(file),
        }
    }

    /// The data, `None` for a file kept unparsed.
    pub(crate) fn data(&self) -> Option<&Hash> {
        match self {
            Content::Data(doc) => Some(doc),
            Content::File(_) => None,
        }
    }

    /// The text a version's content holds.
    pub(crate) fn to_stored(&self) -> String {
        match self {
            Content::Data(doc) => crate::wire::to_string(&crate::hiera::Value::Hash(doc.clone())),
            Content::File(file) => file.to_stored(),
        }
    }
}

/// The latest version of a document kept unparsed: what a read of it
/// fails with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnparsedDocument {
    pub(crate) at: DocAddress,
    pub(crate) version: u64,
    /// The path Hiera names the file by.
    pub(crate) path: String,
    /// What Hiera raises reading it.
    pub(crate) error: HieraError,
}

impl fmt::Display for UnparsedDocument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} (version {}) holds {} as imported, which does not parse: {}: {}; \
             Hiera fails every lookup that reads it. Write the document again (import the \
             fixed file, or PUT the values) to repair it",
            self.at,
            self.version,
            self.path,
            self.error.class.ruby_name(),
            without_text(&self.error.message)
        )
    }
}

/// Hiera's message for a file, less the file's own text: Ruby's JSON
/// parser quotes the rest of the file (`unexpected token at '…'`), which
/// may hold a password. Hiera's exact words go only where they must
/// match Hiera's (a lookup's error, the answer's `hiera_message`).
pub(crate) fn without_text(message: &str) -> std::borrow::Cow<'_, str> {
    match message.find(" at '") {
        Some(at) => format!("{}…' (the file's text is not shown)", &message[..at + 5]).into(),
        None => message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hiera::error::ErrorClass;

    fn kept(path: &str, bytes: &[u8]) -> Unparsed {
        Unparsed {
            path: path.to_owned(),
            bytes: bytes.to_vec(),
        }
    }

    #[test]
    fn the_stored_form_round_trips_text_and_bytes() {
        for file in [
            kept("data/x.yaml", b"a: [1\n"),
            kept("/abs/latin1.yaml", b"k: caf\xe9\n"),
            kept("x.json", b"{"),
        ] {
            let stored = file.to_stored();
            assert_eq!(
                Unparsed::from_stored(&stored),
                Some(file.clone()),
                "{stored}"
            );
        }
        assert!(kept("a.yaml", b"x").to_stored().contains(r#""text":"x""#));
        assert!(
            kept("a.yaml", b"\xff")
                .to_stored()
                .contains(r#""base64":"/w==""#)
        );
    }

    #[test]
    fn documents_are_not_taken_for_files() {
        for content in [
            "{}",
            r#"{"a":1}"#,
            r#"{"__hierad__":"hash","pairs":[[1,2]]}"#,
            r#"{"__hierad__":"unparsed","path":"x","text":"a","base64":"YQ=="}"#,
            r#"{"__hierad__":"unparsed","path":"x"}"#,
        ] {
            assert_eq!(Unparsed::from_stored(content), None, "{content}");
        }
    }

    #[test]
    fn messages_name_the_error_without_the_files_text() {
        let e = kept("x.json", br#"{"password": "s3cret", oops}"#)
            .parse()
            .unwrap_err();
        assert!(e.message.contains("s3cret"), "Hiera's own words quote it");
        assert_eq!(
            without_text(&e.message),
            "859: unexpected token at '…' (the file's text is not shown)"
        );
        let syntax = kept("x.yaml", b"a: [1\n").parse().unwrap_err().message;
        assert_eq!(without_text(&syntax), syntax);
    }

    #[test]
    fn reading_fails_as_hiera_fails_on_the_file() {
        let e = kept("data/list.yaml", b"- 1\n").parse().unwrap_err();
        assert_eq!(e.class, ErrorClass::TypeError);
        assert_eq!(
            e.message,
            "Data retrieved from data/list.yaml is Array not Hash"
        );
        let e = kept("d/x.yaml", b"a: [1\n").parse().unwrap_err();
        assert_eq!(e.class, ErrorClass::PsychSyntaxError);
        assert_eq!(kept("d/x.yaml", b"a: 1\n").parse().unwrap().len(), 1);
    }
}
