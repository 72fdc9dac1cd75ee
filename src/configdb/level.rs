//! Level paths: which hierarchy level values a request is about
//! (`nodes=node-1.domain.tld`, `role=controller,nodes=node-1`), their two
//! spellings, and the rule that ties them to an environment.
//!
//! The rule: a level path names levels of its environment in the
//! environment's order (least to most specific), each at most once; it may
//! skip levels. The empty path is the root. So with levels `[role, nodes]`
//! the paths ``, `role=controller`, `nodes=node-1` and
//! `role=controller,nodes=node-1` are all valid, and
//! `nodes=node-1,role=controller` is not. Skipping is allowed because level
//! values are independent of one another: a node is the same node whatever
//! its role, so its data need not be addressed through a role.
//!
//! Where a document lives: a document belongs to the path's **slot**, its
//! last (level, value) pair, or to the root for the empty path. Data put
//! at `role=controller,nodes=node-1` is the data of `nodes=node-1`, seen by
//! every path that ends there or passes through it (tuning-box keyed level
//! values the same way since it dropped level-value trees). The effective
//! value of a path folds the root and then each of its pairs' slots in
//! order, which is what makes `role=controller,nodes=node-1` see role data
//! and `nodes=node-1` alone not.

use super::error::{ConfigError, Invalid, NotFound};
use super::model::Environment;
use std::fmt;

/// A syntax error in a level path or in one of its names or values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LevelPathError {
    #[error(
        "level path \"{path}\" must alternate level names and values, as /<level>/<value>[/<level>/<value>…]"
    )]
    OddSegments { path: String },
    #[error("level path \"{path}\" has an empty segment (\"//\")")]
    EmptySegment { path: String },
    #[error(
        "\"{part}\" in level path \"{path}\" is not of the form level=value (write name=value[,name=value…])"
    )]
    NotAPair { path: String, part: String },
    #[error("level {what} \"{text}\" is invalid: {reason}")]
    BadText {
        /// `name` or `value`.
        what: &'static str,
        text: String,
        reason: &'static str,
    },
}

/// One (level name, level value) pair: `nodes=node-1.domain.tld`. It is
/// also the slot one document lives at.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct LevelValue {
    pub(crate) level: String,
    pub(crate) value: String,
}

impl LevelValue {
    /// A checked pair: neither part may be empty or contain `/`, `,` or
    /// `=`, which would make one of the two spellings ambiguous.
    ///
    /// # Errors
    ///
    /// [`LevelPathError::BadText`] naming the offending part.
    pub(crate) fn new(
        level: impl Into<String>,
        value: impl Into<String>,
    ) -> Result<Self, LevelPathError> {
        let (level, value) = (level.into(), value.into());
        check_text("name", &level)?;
        check_text("value", &value)?;
        Ok(LevelValue { level, value })
    }
}

impl fmt::Display for LevelValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.level, self.value)
    }
}

/// Checks a level name or value (`what` says which, for the message).
pub(crate) fn check_text(what: &'static str, text: &str) -> Result<(), LevelPathError> {
    let reason = if text.is_empty() {
        "it is empty"
    } else if !has_separator_or_control(text.as_bytes()) {
        return Ok(());
    } else if text.contains(['/', ',', '=']) {
        "it may not contain '/', ',' or '='"
    } else {
        "it may not contain control characters"
    };
    Err(LevelPathError::BadText {
        what,
        text: text.to_owned(),
        reason,
    })
}

/// `text` split at its first `separator`, which is ASCII. A byte loop: a
/// level path's parts are a few dozen bytes, where `str::split_once`'s
/// `memchr` set-up cost about 140 instructions a call, and a document read
/// or a data-route request made four to six of them (bench/LOG.md, "A
/// document URL read where it stands").
pub(crate) fn split_once_at(text: &str, separator: u8) -> Option<(&str, &str)> {
    let at = text.bytes().position(|b| b == separator)?;
    Some((&text[..at], &text[at + 1..]))
}

/// Whether `text` holds '/', ',', '=' or a control character
/// (`char::is_control`: U+0000–U+001F, U+007F, and U+0080–U+009F, which
/// UTF-8 writes 0xC2 0x80–0x9F). One pass over the bytes through a table,
/// with no early exit: every lookup request checks its level this way,
/// and the `char` searches cost ten times as much (and matching each byte
/// against the ranges three times what the table costs). Only text with a
/// 0xC2 byte is looked at again, for a C1 control.
fn has_separator_or_control(bytes: &[u8]) -> bool {
    let found = bytes
        .iter()
        .fold(0u8, |found, &b| found | BYTE_CLASS[usize::from(b)]);
    found & SEPARATOR != 0
        || (found & C2 != 0
            && bytes
                .windows(2)
                .any(|pair| pair[0] == 0xc2 && (0x80..=0x9f).contains(&pair[1])))
}

/// [`BYTE_CLASS`] of '/', ',', '=' and the ASCII controls.
const SEPARATOR: u8 = 1;
/// [`BYTE_CLASS`] of 0xC2, the lead byte of the C1 controls.
const C2: u8 = 2;

/// What each byte may be the start of, for [`has_separator_or_control`].
static BYTE_CLASS: [u8; 256] = {
    let mut class = [0; 256];
    let mut b = 0;
    while b < 256 {
        class[b] = match b as u8 {
            b'/' | b',' | b'=' | 0x00..=0x1f | 0x7f => SEPARATOR,
            0xc2 => C2,
            _ => 0,
        };
        b += 1;
    }
    class
};

/// A level path as Hiera 5 interpolated it: see
/// [`LevelPath::parse_interpolated`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Interpolated {
    /// Every value set: the path of a document.
    Path(LevelPath),
    /// Some value empty: no document. The path is for checking its level
    /// names only (its unset values are a stand-in).
    Unset(LevelPath),
}

/// An ordered list of level values; empty for the root.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct LevelPath(Vec<LevelValue>);

impl LevelPath {
    /// The root: the environment-wide level under all others.
    pub(crate) fn root() -> Self {
        LevelPath(Vec::new())
    }

    /// A path of already checked pairs (not yet checked against an
    /// environment: see [`LevelPath::check`]).
    pub(crate) fn new(pairs: Vec<LevelValue>) -> Self {
        LevelPath(pairs)
    }

    /// Parses the URL form `/<level>/<value>/<level>/<value>` from past
    /// its leading `/`, where a longer URL names it (a document's, before
    /// its `resources/…`): read where it stands, not collected, as it is
    /// for every document read. One trailing `/` is optional; `` is the
    /// root. The text must already be percent-decoded.
    ///
    /// # Errors
    ///
    /// An odd number of segments, an empty segment, or a bad name or
    /// value; the path named with its leading `/`.
    pub(crate) fn parse_url(levels: &str) -> Result<Self, LevelPathError> {
        // Made only for an error.
        let shown = || format!("/{levels}");
        if levels.is_empty() {
            return Ok(LevelPath::root());
        }
        let trimmed = levels.strip_suffix('/').unwrap_or(levels);
        // One pass: the separators, and whether two stand together or
        // at either end (an empty segment; the empty text is one).
        let (mut separators, mut previous, mut empty) = (0usize, b'/', false);
        for b in trimmed.bytes() {
            if b == b'/' {
                separators += 1;
                empty |= previous == b'/';
            }
            previous = b;
        }
        if empty || previous == b'/' {
            return Err(LevelPathError::EmptySegment { path: shown() });
        }
        // n separators make n + 1 segments: an even count of them, an
        // odd count of segments.
        if separators % 2 == 0 {
            return Err(LevelPathError::OddSegments { path: shown() });
        }
        let mut pairs = Vec::with_capacity(separators.div_ceil(2));
        // An even count of segments, none empty: each level has its
        // value, and the text ends after one.
        let mut rest = trimmed;
        while !rest.is_empty() {
            let (level, after) = split_once_at(rest, b'/').unwrap_or((rest, ""));
            let (value, after) = split_once_at(after, b'/').unwrap_or((after, ""));
            pairs.push(LevelValue::new(level, value)?);
            rest = after;
        }
        Ok(LevelPath(pairs))
    }

    /// Parses the command-line form `name=value[,name=value…]`; the empty
    /// text is the root.
    ///
    /// # Errors
    ///
    /// A part without `=`, or a bad name or value.
    pub(crate) fn parse_cli(text: &str) -> Result<Self, LevelPathError> {
        if text.is_empty() {
            return Ok(LevelPath::root());
        }
        let pair = |part: &str| match split_once_at(part, b'=') {
            Some((level, value)) => LevelValue::new(level, value),
            None => Err(LevelPathError::NotAPair {
                path: text.to_owned(),
                part: part.to_owned(),
            }),
        };
        // One pair (a node's level, nearly always): no iterator to
        // collect through.
        if !text.bytes().any(|b| b == b',') {
            return Ok(LevelPath(vec![pair(text)?]));
        }
        text.split(',')
            .map(pair)
            .collect::<Result<_, _>>()
            .map(LevelPath)
    }

    /// Parses the command-line form as Hiera 5 interpolates it into a
    /// hierarchy entry's `options: level` (`trusted.certname=%{trusted.certname}`,
    /// as `hierad import-environment` prints it): where the node's variable
    /// is empty or unset a value comes out empty, and the path names no
    /// document, as the file path Puppet reads instead (`nodes/.yaml`)
    /// names no file.
    ///
    /// # Errors
    ///
    /// As [`LevelPath::parse_cli`], but for an empty value.
    pub(crate) fn parse_interpolated(text: &str) -> Result<Interpolated, LevelPathError> {
        // Every level set (a node's data, nearly always): the text as it
        // is, without a copy of each pair and their join.
        let unset_at = |(at, b): (usize, u8)| {
            b == b'=' && text.as_bytes().get(at + 1).is_none_or(|&next| next == b',')
        };
        if !text.bytes().enumerate().any(unset_at) {
            return LevelPath::parse_cli(text).map(Interpolated::Path);
        }
        let mut unset = false;
        let filled: Vec<String> = text
            .split(',')
            .map(|part| match part.split_once('=') {
                Some((level, "")) => {
                    unset = true;
                    // A stand-in value: only the names of an unset path
                    // are looked at, by [`LevelPath::check`].
                    format!("{level}=-")
                }
                _ => part.to_owned(),
            })
            .collect();
        let path = LevelPath::parse_cli(&filled.join(","))?;
        Ok(if unset {
            Interpolated::Unset(path)
        } else {
            Interpolated::Path(path)
        })
    }

    pub(crate) fn pairs(&self) -> &[LevelValue] {
        &self.0
    }

    pub(crate) fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Where a document addressed by this path lives: the last pair, or
    /// `None` for the root.
    pub(crate) fn slot(&self) -> Option<&LevelValue> {
        self.0.last()
    }

    /// Checks the path against an environment's levels: each level must be
    /// one of them, in their order, at most once.
    ///
    /// # Errors
    ///
    /// [`NotFound::Level`] for a level the environment lacks;
    /// [`Invalid::LevelRepeated`] and [`Invalid::LevelOrder`] otherwise.
    pub(crate) fn check(&self, env: &Environment) -> Result<(), ConfigError> {
        let levels = &env.hierarchy_levels;
        // Index in `levels` that the next pair may not precede.
        let mut next = 0;
        let mut previous: Option<&str> = None;
        for pair in &self.0 {
            let Some(at) = levels.iter().position(|l| *l == pair.level) else {
                return Err(NotFound::Level {
                    env: env.id,
                    level: pair.level.clone(),
                    levels: levels.clone(),
                }
                .into());
            };
            if at < next {
                let after = previous.unwrap_or_default().to_owned();
                return Err(if after == pair.level {
                    Invalid::LevelRepeated {
                        level: after,
                        path: self.to_string(),
                    }
                } else {
                    Invalid::LevelOrder {
                        env: env.id,
                        level: pair.level.clone(),
                        after,
                        levels: levels.clone(),
                    }
                }
                .into());
            }
            next = at + 1;
            previous = Some(&pair.level);
        }
        Ok(())
    }

    /// The path with the ConfigDB specification's spelling of level names
    /// understood: docs/spec/configdb-api.md writes `--level
    /// node=node-1.domain.tld` for an environment whose level is `nodes`. A
    /// level name the environment lacks stands for its level of the plural
    /// (`node` → `nodes`) or singular (`roles` → `role`) spelling when it has
    /// exactly that one; other names are kept, for [`LevelPath::check`] to
    /// name.
    pub(crate) fn with_level_aliases(&self, levels: &[String]) -> LevelPath {
        let alias = |name: &str| -> Option<&String> {
            if levels.iter().any(|l| l == name) {
                return None;
            }
            let plural = format!("{name}s");
            let singular = name.strip_suffix('s');
            levels
                .iter()
                .find(|l| **l == plural || Some(l.as_str()) == singular)
        };
        LevelPath(
            self.0
                .iter()
                .map(|pair| match alias(&pair.level) {
                    Some(level) => LevelValue {
                        level: level.clone(),
                        value: pair.value.clone(),
                    },
                    None => pair.clone(),
                })
                .collect(),
        )
    }

    /// Whether [`LevelPath::check`] would pass, without building an error:
    /// for the lookup path, where a bad path is just "nothing there".
    pub(crate) fn fits(&self, levels: &[String]) -> bool {
        let mut next = 0;
        for pair in &self.0 {
            match levels[next..].iter().position(|l| *l == pair.level) {
                Some(at) => next += at + 1,
                None => return false,
            }
        }
        true
    }
}

/// The command-line form; the root prints as the empty string.
impl fmt::Display for LevelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, pair) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{pair}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configdb::error::ErrorKind;

    fn lv(l: &str, v: &str) -> LevelValue {
        LevelValue::new(l, v).unwrap()
    }

    #[test]
    fn an_interpolated_empty_value_names_no_document() {
        let set = LevelPath::parse_interpolated("role=web,nodes=n1").unwrap();
        let want = LevelPath::new(vec![lv("role", "web"), lv("nodes", "n1")]);
        assert_eq!(set, Interpolated::Path(want));
        assert_eq!(
            LevelPath::parse_interpolated("").unwrap(),
            Interpolated::Path(LevelPath::root())
        );
        for text in ["trusted.certname=", "role=web,nodes=", "role=,nodes=n1"] {
            assert!(
                matches!(
                    LevelPath::parse_interpolated(text),
                    Ok(Interpolated::Unset(_))
                ),
                "{text}"
            );
        }
        // Names are still checked; a part without '=' is still refused.
        for text in ["=", "a/b=", "nodes", "nodes=,x"] {
            assert!(LevelPath::parse_interpolated(text).is_err(), "{text}");
        }
    }

    #[test]
    fn parses_both_spellings() {
        let one = LevelPath::new(vec![lv("nodes", "node-1.domain.tld")]);
        let two = LevelPath::new(vec![lv("role", "controller"), lv("nodes", "node-1")]);
        let cases: &[(&str, &str, LevelPath)] = &[
            ("", "", LevelPath::root()),
            (
                "nodes/node-1.domain.tld",
                "nodes=node-1.domain.tld",
                one.clone(),
            ),
            ("nodes/node-1.domain.tld/", "nodes=node-1.domain.tld", one),
            (
                "role/controller/nodes/node-1",
                "role=controller,nodes=node-1",
                two,
            ),
        ];
        for (url, cli, want) in cases {
            assert_eq!(&LevelPath::parse_url(url).unwrap(), want, "url {url}");
            assert_eq!(&LevelPath::parse_cli(cli).unwrap(), want, "cli {cli}");
            assert_eq!(&want.to_string(), cli);
        }
    }

    #[test]
    fn syntax_errors() {
        let url_cases: &[(&str, &str)] = &[
            ("nodes", "\"/nodes\" must alternate level names and values"),
            ("nodes/a/role", "must alternate"),
            ("nodes/a/role/", "\"/nodes/a/role/\" must alternate"),
            ("nodes//a", "\"/nodes//a\" has an empty segment"),
            ("/", "\"//\" has an empty segment"),
            ("/nodes/a", "\"//nodes/a\" has an empty segment"),
            ("no,des/1", "level name \"no,des\" is invalid"),
            ("nodes/a=b", "level value \"a=b\" is invalid"),
        ];
        for (text, want) in url_cases {
            let err = LevelPath::parse_url(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
        let cli_cases: &[(&str, &str)] = &[
            (
                "nodes",
                "\"nodes\" in level path \"nodes\" is not of the form level=value",
            ),
            ("nodes=1,", "\"\" in level path"),
            ("=1", "level name \"\" is invalid: it is empty"),
            ("nodes=", "level value \"\" is invalid: it is empty"),
            ("nodes=a/b", "may not contain '/'"),
            ("nodes=a=b", "level value \"a=b\""),
            ("nodes=a\tb", "control characters"),
        ];
        for (text, want) in cli_cases {
            let err = LevelPath::parse_cli(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    /// The byte scan says what the `char` definition says, for every
    /// character up to U+0800 (ASCII, the C1 controls, and 2-byte UTF-8
    /// around them) alone and between other text, and for the
    /// separators next to non-ASCII text.
    #[test]
    fn the_byte_scan_finds_what_the_char_test_finds() {
        let by_chars = |t: &str| t.contains(['/', ',', '=']) || t.chars().any(char::is_control);
        let mut texts: Vec<String> = vec!["node-1.domain.tld".into(), "é/".into(), "ü=x".into()];
        for c in (0..0x800).filter_map(char::from_u32) {
            texts.push(c.to_string());
            texts.push(format!("node-{c}-ñ"));
        }
        texts.push("\u{2028}x".into()); // not Cc: allowed
        for text in &texts {
            assert_eq!(
                has_separator_or_control(text.as_bytes()),
                by_chars(text),
                "{text:?}"
            );
        }
        assert!(check_text("value", "nodé-\u{85}").is_err());
        assert!(check_text("value", "nodé-\u{a0}").is_ok());
    }

    #[test]
    fn checks_against_the_environment() {
        let env = Environment {
            hiera: Default::default(),
            id: 3,
            components: vec![],
            hierarchy_levels: vec!["region".into(), "role".into(), "nodes".into()],
        };
        let cases: &[(&str, Option<(ErrorKind, &str)>)] = &[
            ("", None),
            ("nodes=n1", None),
            ("role=compute", None),
            ("region=eu,nodes=n1", None),
            ("region=eu,role=compute,nodes=n1", None),
            (
                "racks=r1",
                Some((
                    ErrorKind::NotFound,
                    "level \"racks\" is not one of environment 3's levels [region, role, nodes]",
                )),
            ),
            (
                "nodes=n1,role=compute",
                Some((
                    ErrorKind::Invalid,
                    "level \"role\" must come before level \"nodes\"",
                )),
            ),
            (
                "nodes=n1,nodes=n2",
                Some((ErrorKind::Invalid, "level \"nodes\" appears twice")),
            ),
        ];
        for (text, want) in cases {
            let path = LevelPath::parse_cli(text).unwrap();
            let got = path.check(&env);
            assert_eq!(path.fits(&env.hierarchy_levels), got.is_ok(), "{text}");
            match (got, want) {
                (Ok(()), None) => {}
                (Err(e), Some((kind, msg))) => {
                    assert_eq!(e.kind(), *kind, "{text}");
                    assert!(e.to_string().contains(msg), "{text}: {e}");
                }
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn slot_is_the_last_pair() {
        let path = LevelPath::parse_cli("role=controller,nodes=node-1").unwrap();
        assert_eq!(path.slot(), Some(&lv("nodes", "node-1")));
        assert_eq!(LevelPath::root().slot(), None);
    }

    #[test]
    fn seed_spellings_of_level_names() {
        let levels: Vec<String> = ["role", "nodes"].iter().map(|s| (*s).to_owned()).collect();
        let cases = [
            ("node=n1", "nodes=n1"),
            ("nodes=n1", "nodes=n1"),
            ("roles=r,node=n1", "role=r,nodes=n1"),
            ("racks=x", "racks=x"),
            ("", ""),
        ];
        for (given, want) in cases {
            let path = LevelPath::parse_cli(given).unwrap();
            assert_eq!(
                path.with_level_aliases(&levels).to_string(),
                want,
                "{given}"
            );
        }
        // A name the environment has is never rewritten.
        let both: Vec<String> = ["node", "nodes"].iter().map(|s| (*s).to_owned()).collect();
        let path = LevelPath::parse_cli("node=a,nodes=b").unwrap();
        assert_eq!(path.with_level_aliases(&both).to_string(), "node=a,nodes=b");
    }
}
