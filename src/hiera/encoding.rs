//! Bytes of a data file to text, as Ruby's `File.read(path, encoding:
//! 'BOM|UTF-8')` and then libyaml's reader see them: a UTF-8 BOM is
//! dropped, and a byte sequence that is not UTF-8 is refused with the
//! reader's own message (libyaml decodes the whole input before parsing,
//! so the first bad sequence anywhere decides).

use super::error::{ErrorClass, HieraError, Result};
use std::borrow::Cow;

/// The text of a YAML file, or Psych's `SyntaxError` for bytes that are not
/// UTF-8.
///
/// # Errors
///
/// `Psych::SyntaxError "(<unknown>): <reader problem> at line 1 column 1"`
/// (reader errors carry no position in Psych's message).
pub(crate) fn yaml_text(bytes: &[u8]) -> Result<Cow<'_, str>> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Cow::Borrowed(text)),
        Err(e) => Err(HieraError::new(
            ErrorClass::PsychSyntaxError,
            format!(
                "(<unknown>): {} at line 1 column 1",
                reader_problem(&bytes[e.valid_up_to()..])
            ),
        )),
    }
}

/// libyaml's `yaml_parser_update_buffer` verdict on the first bad sequence.
fn reader_problem(at: &[u8]) -> &'static str {
    let lead = at[0];
    let width = match lead {
        0x00..=0x7f => 1,
        _ if lead & 0xe0 == 0xc0 => 2,
        _ if lead & 0xf0 == 0xe0 => 3,
        _ if lead & 0xf8 == 0xf0 => 4,
        _ => return "invalid leading UTF-8 octet",
    };
    if at.len() < width {
        return "incomplete UTF-8 octet sequence";
    }
    let mut value = u32::from(lead & (0xff >> (width + 1)));
    for &octet in &at[1..width] {
        if octet & 0xc0 != 0x80 {
            return "invalid trailing UTF-8 octet";
        }
        value = (value << 6) | u32::from(octet & 0x3f);
    }
    let shortest = match width {
        2 => value >= 0x80,
        3 => value >= 0x800,
        _ => value >= 0x10000,
    };
    if !shortest {
        return "invalid length of a UTF-8 sequence";
    }
    "invalid Unicode character"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_problems() {
        let cases: &[(&[u8], &str)] = &[
            (b"k: caf\xe9\n", "incomplete UTF-8 octet sequence"),
            (b"k: \xff\n", "invalid leading UTF-8 octet"),
            (b"k: \xe9\xff\xff\n", "invalid trailing UTF-8 octet"),
            (b"k: \xc0\x80\n", "invalid length of a UTF-8 sequence"),
            (b"k: \xed\xa0\x80\n", "invalid Unicode character"),
            (b"k: v\n---\nk: \xff\n", "invalid leading UTF-8 octet"),
        ];
        for (bytes, problem) in cases {
            let err = yaml_text(bytes).unwrap_err();
            assert_eq!(err.class, ErrorClass::PsychSyntaxError);
            assert_eq!(
                err.message,
                format!("(<unknown>): {problem} at line 1 column 1")
            );
        }
        assert_eq!(yaml_text(b"\xef\xbb\xbfk: v").unwrap(), "k: v");
    }
}
