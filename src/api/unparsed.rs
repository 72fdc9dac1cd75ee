//! The import API's data files that do not parse (docs/api.md, "Files
//! that do not parse"): how a client sends one, how an import lists the
//! ones it kept, and the error a read of such a document answers.

use crate::configdb::unparsed::{Unparsed, UnparsedDocument};
use crate::hiera5::{KeptRead, kept_read};
use serde::{Deserialize, Serialize};

/// A data file sent as it is: the path Hiera names it by, and its text,
/// or its bytes in base64 when they are not UTF-8 (exactly one of the
/// two).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UnparsedFile {
    pub(crate) path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) base64: Option<String>,
}

/// A file an import kept unparsed, as its answer lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KeptFile {
    pub(crate) resource: String,
    /// The path Hiera names the file by.
    pub(crate) path: String,
    /// What Hiera raises reading it: its Ruby class and message.
    pub(crate) class: String,
    pub(crate) message: String,
}

/// A 422 `unparsed_document`: the request reads a document kept as the
/// data file it was imported from, which does not parse
/// (docs/api.md, "Files that do not parse").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct UnparsedErrorBody {
    pub(crate) error: String,
    /// Names the document, the file and the parse error, never the file's
    /// text (`configdb::unparsed::without_text`).
    pub(crate) message: String,
    /// The Ruby class Hiera raises reading the file (`Psych::SyntaxError`).
    pub(crate) hiera_class: String,
    /// Hiera's own message for the file, word for word.
    pub(crate) hiera_message: String,
    /// The file's path as imported (the one Hiera names).
    pub(crate) path: String,
    /// How Puppet's `yaml_data`/`json_data` read the file: the lookup
    /// error they raise, or (YAML that is no Hash) the warning they give
    /// before reading no data (`hiera5::kept_read`); exactly one is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) puppet_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) puppet_warning: Option<String>,
}

impl UnparsedFile {
    /// The file as the wire sends it.
    pub(crate) fn of(file: &Unparsed) -> UnparsedFile {
        let (text, base64) = file.text_or_base64();
        UnparsedFile {
            path: file.path.clone(),
            text,
            base64,
        }
    }

    /// The file it sends.
    ///
    /// # Errors
    ///
    /// As [`Unparsed::from_fields`].
    pub(crate) fn into_file(self) -> Result<Unparsed, String> {
        Unparsed::from_fields(self.path, self.text, self.base64)
    }
}

impl UnparsedErrorBody {
    pub(crate) fn of(doc: &UnparsedDocument) -> UnparsedErrorBody {
        let (puppet_error, puppet_warning) =
            match kept_read(&doc.path, doc.error.class, &doc.error.message) {
                KeptRead::Fails(error) => (Some(error), None),
                KeptRead::Empty { warning } => (None, Some(warning)),
            };
        UnparsedErrorBody {
            error: "unparsed_document".to_owned(),
            message: doc.to_string(),
            hiera_class: doc.error.class.ruby_name().to_owned(),
            hiera_message: doc.error.message.clone(),
            path: doc.path.clone(),
            puppet_error,
            puppet_warning,
        }
    }
}
