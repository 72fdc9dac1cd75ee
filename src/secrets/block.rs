//! Where `ENC[…]` blocks are in a string, as hiera-eyaml's Hiera backend
//! finds them (`EncHieraTokenType` in its lib/hiera/backend/eyaml/parser/
//! encrypted_tokens.rs, <https://github.com/voxpupuli/hiera-eyaml>): the
//! leftmost match of `ENC\[(\w+,)?([a-zA-Z0-9+/ =\n]+?)\]`, anywhere in
//! the string and as often as it occurs, spaces and newlines inside the
//! base64 ignored; the scheme defaults to PKCS7. And how `eyaml encrypt`
//! writes one.

use base64::Engine as _;
use std::sync::LazyLock;

/// eyaml's pattern; `\w` is Ruby's, ASCII only.
static PATTERN: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"ENC\[(?:([A-Za-z0-9_]+),)?([A-Za-z0-9+/ =\n]+)\]").expect("a valid pattern")
});

/// The scheme eyaml's default encryptor writes, and the only one read.
pub(crate) const SCHEME: &str = "PKCS7";

/// A part of a string: text as it is, or a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    Text(&'a str),
    Block {
        /// As written (`None`: eyaml's default, PKCS7).
        scheme: Option<&'a str>,
        /// The base64, spaces and newlines included.
        base64: &'a str,
    },
}

/// Whether `text` may hold a block: the cheap test every string of an
/// answer takes (no block without `ENC[`; [`pieces`] says for sure).
pub(crate) fn may_hold_block(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), b"ENC[").is_some()
}

/// Whether one line (no `\n` in it) holds `ENC[` and, after it, `]`:
/// hiera-eyaml's backends decrypt a String only if one of its lines does
/// (their `encrypted?`, `/.*ENC\[.*\]/`).
pub(crate) fn opens_and_closes(line: &str) -> bool {
    memchr::memmem::find(line.as_bytes(), b"ENC[").is_some_and(|at| line[at + 4..].contains(']'))
}

/// `text` cut into its text and its blocks, in order.
pub(crate) fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut at = 0;
    for found in PATTERN.captures_iter(text) {
        let whole = found.get(0).expect("group 0 is the match");
        if whole.start() > at {
            out.push(Piece::Text(&text[at..whole.start()]));
        }
        out.push(Piece::Block {
            scheme: found.get(1).map(|m| m.as_str()),
            base64: found.get(2).map_or("", |m| m.as_str()),
        });
        at = whole.end();
    }
    if at < text.len() {
        out.push(Piece::Text(&text[at..]));
    }
    out
}

/// A block's bytes, or `None` when its base64 is not base64. Ruby's
/// `Base64.decode64`, which eyaml calls, does not insist on the padding.
pub(crate) fn decode(base64: &str) -> Option<Vec<u8>> {
    const LENIENT: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let compact: String = base64
        .chars()
        .filter(|c| !matches!(c, ' ' | '\n'))
        .collect();
    LENIENT.decode(compact).ok()
}

/// The one-line block of `der`, as `eyaml encrypt -o string` prints it.
pub(crate) fn format_string(der: &[u8]) -> String {
    format!(
        "ENC[{SCHEME},{}]",
        base64::engine::general_purpose::STANDARD.encode(der)
    )
}

/// What `hierad secrets encrypt` prints, as `eyaml encrypt -o …` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Output {
    /// Both forms, labelled `string:` and `block:`, with `OR` between
    /// (eyaml's default).
    Examples,
    /// `ENC[PKCS7,…]` on one line.
    String,
    /// The block cut into lines of 60 characters, indented two spaces.
    Block,
}

/// `block` (a one-line `ENC[…]`) in the form `output` names, with
/// `label` as eyaml's `--label` (the YAML key it is for).
pub(crate) fn format_block(block: &str, output: Output, label: Option<&str>) -> String {
    let lines = |label: Option<&str>| {
        // eyaml: a label, then `>` (a folded YAML scalar) when labelled.
        let head = label.map_or(String::new(), |l| format!("{l}: >\n"));
        let cut: Vec<&str> = block
            .as_bytes()
            .chunks(60)
            .map(|c| std::str::from_utf8(c).expect("base64 is ASCII"))
            .collect();
        format!("{head}  {}", cut.join("\n  "))
    };
    let string = |label: Option<&str>| label.map_or(block.to_owned(), |l| format!("{l}: {block}"));
    match output {
        Output::String => string(label),
        Output::Block => lines(label),
        Output::Examples => format!(
            "{}\n\nOR\n\n{}",
            string(Some(label.unwrap_or("string"))),
            lines(Some(label.unwrap_or("block")))
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_found_where_eyaml_finds_them() {
        let text = "user:ENC[PKCS7,QUJD\n  REVG]@host ENC[QUJD] ENC[GPG,eA==] ENC[a,b,c] ENC[]";
        assert_eq!(
            pieces(text),
            vec![
                Piece::Text("user:"),
                Piece::Block {
                    scheme: Some("PKCS7"),
                    base64: "QUJD\n  REVG"
                },
                Piece::Text("@host "),
                Piece::Block {
                    scheme: None,
                    base64: "QUJD"
                },
                Piece::Text(" "),
                Piece::Block {
                    scheme: Some("GPG"),
                    base64: "eA=="
                },
                // A comma in the base64, or none at all, is no block.
                Piece::Text(" ENC[a,b,c] ENC[]"),
            ]
        );
        assert_eq!(decode("QUJD\n  REVG").as_deref(), Some(&b"ABCDEF"[..]));
        assert_eq!(decode("QUI").as_deref(), Some(&b"AB"[..]));
        assert!(decode("Q=U=").is_none());
        assert!(may_hold_block("x ENC[PKCS7,QUJD]") && !may_hold_block("ENC plain"));
        assert_eq!(pieces("plain"), vec![Piece::Text("plain")]);
    }

    #[test]
    fn blocks_are_written_as_eyaml_prints_them() {
        let block = format_string(&[7; 100]);
        assert!(block.starts_with("ENC[PKCS7,BwcH") && block.ends_with(']'));
        let lines = format_block(&block, Output::Block, None);
        let cut: Vec<&str> = lines.lines().collect();
        assert_eq!(cut.len(), 3);
        assert!(cut.iter().all(|l| l.starts_with("  ") && l.len() <= 62));
        assert_eq!(cut.concat().replace(' ', ""), block);
        assert_eq!(
            format_block("ENC[PKCS7,QQ==]", Output::Examples, None),
            "string: ENC[PKCS7,QQ==]\n\nOR\n\nblock: >\n  ENC[PKCS7,QQ==]"
        );
        assert_eq!(
            format_block("ENC[PKCS7,QQ==]", Output::String, Some("pw")),
            "pw: ENC[PKCS7,QQ==]"
        );
    }
}
