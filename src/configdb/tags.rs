//! Tags: names that pin a generation, so one deployment reads one view
//! (`Store::load_at`) and retention keeps what a read at it needs.

use super::error::{ConfigError, Invalid};

/// The longest tag name.
pub(crate) const TAG_NAME_MAX: usize = 128;

/// A named generation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tag {
    pub(crate) name: String,
    pub(crate) generation: u64,
    /// When it was made, Unix seconds.
    pub(crate) created_at: i64,
    /// Who made it, as for a document version (`Version::author`).
    pub(crate) author: Option<String>,
}

/// Checks a tag name: 1 to [`TAG_NAME_MAX`] characters of ASCII letters,
/// digits, `.`, `_` and `-`, starting with a letter or a digit (it goes
/// in URLs and on command lines as is), and not all digits (where a
/// generation or a tag is accepted, `42` is generation 42).
///
/// # Errors
///
/// Invalid: the name breaks one of those rules, which the message names.
pub(crate) fn check_tag_name(name: &str) -> Result<(), ConfigError> {
    let reason = if name.is_empty() {
        Some("it is empty")
    } else if name.len() > TAG_NAME_MAX {
        Some("it is longer than 128 characters")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    {
        Some("only ASCII letters, digits, '.', '_' and '-' are allowed")
    } else if !name.as_bytes()[0].is_ascii_alphanumeric() {
        Some("it must start with a letter or a digit")
    } else if name.bytes().all(|b| b.is_ascii_digit()) {
        Some("it is all digits, which reads as a generation number")
    } else {
        None
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(Invalid::Name {
            what: "tag",
            name: super::error::Truncated(name, 64).to_string(),
            reason,
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_names_are_plain_words_that_are_not_numbers() {
        for good in ["deploy-42", "v1.2", "a", "release_2026-11"] {
            assert_eq!(check_tag_name(good), Ok(()), "{good}");
        }
        let long = "a".repeat(TAG_NAME_MAX + 1);
        for bad in ["", "42", "-x", ".x", "a/b", "a b", "é", long.as_str()] {
            let e = check_tag_name(bad).unwrap_err().to_string();
            assert!(e.contains("is not a valid name"), "{bad}: {e}");
        }
    }
}
