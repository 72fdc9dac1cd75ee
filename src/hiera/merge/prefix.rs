//! The knockout prefix: deep_merge builds `%r{^#{prefix}}` from the option's
//! `to_s`, unescaped, so the prefix is a Ruby (Onigmo) regular expression
//! fragment whose `^` anchors at every line start. This module translates
//! that fragment to the `regex` crate, construct by construct.
//!
//! Supported: literals, `.`, `^`, `$`, `|`, `(...)`, `(?:...)`, inline
//! flags `(?imx-imx)`/`(?imx:...)`, bracket classes (ranges, negation,
//! `\d\w\s\h` inside), quantifiers `* + ? {n} {n,} {,m} {n,m}` with lazy and
//! nested forms (quantified anchors included: `/^*a/` finds `a` anywhere),
//! escapes `\d\D\w\W\s\S\h\H\A\z\b\B\n\t\r\f\v\a\e\xHH\uHHHH\u{H}`, and
//! unknown escapes of a letter or symbol as that character. Not supported
//! (reported as an error naming the construct): look-around, atomic and
//! named groups, back-references, `\Z`, `\G`, `\K`, `\p{..}`, POSIX
//! brackets, nested classes, possessive quantifiers on a non-anchor.

use super::super::error::{ErrorClass, HieraError, Result};
use super::super::value::Value;
use super::ruby;
use regex::Regex;

/// A `knockout_prefix` option value and the regex deep_merge makes of it.
#[derive(Clone, Debug)]
pub(crate) struct Knockout {
    /// The option's value: bare-marker tests compare array items to it with
    /// Ruby's `==`, so a non-String prefix keeps its own class.
    value: Value,
    /// `/^prefix/`, or the error Ruby raises when it evaluates it.
    regex: std::result::Result<Regex, HieraError>,
}

impl Knockout {
    pub(crate) fn new(value: Value) -> Knockout {
        let text = ruby::to_s(&value);
        let regex = compile(&text);
        Knockout { value, regex }
    }

    pub(crate) fn value(&self) -> &Value {
        &self.value
    }

    fn regex(&self) -> Result<&Regex> {
        self.regex.as_ref().map_err(Clone::clone)
    }

    /// `s.gsub(/^prefix/, "")`.
    ///
    /// # Errors
    /// The pattern's error, raised (as in Ruby) only when a String is tested.
    pub(crate) fn strip(&self, s: &str) -> Result<String> {
        Ok(self.regex()?.replace_all(s, "").into_owned())
    }

    /// `s.match(/^prefix/)` is truthy (an empty match counts).
    ///
    /// # Errors
    /// As [`Knockout::strip`].
    pub(crate) fn matches(&self, s: &str) -> Result<bool> {
        Ok(self.regex()?.is_match(s))
    }
}

/// What stops a Ruby pattern from becoming a `regex` crate pattern.
enum Problem {
    /// Ruby itself raises `RegexpError` with this message.
    Invalid(&'static str),
    /// Ruby raises `ArgumentError: too short escape sequence`.
    TrailingBackslash,
    /// Valid Ruby, but beyond what this translation (or the crate) handles.
    Unsupported(&'static str),
}

fn compile(prefix: &str) -> std::result::Result<Regex, HieraError> {
    let source = format!("^{prefix}");
    let problem = match translate(&source) {
        Ok(pattern) => match Regex::new(&format!("(?m){pattern}")) {
            Ok(re) => return Ok(re),
            Err(_) => Problem::Unsupported("a construct the regex engine rejects"),
        },
        Err(problem) => problem,
    };
    Err(match problem {
        // No RegexpError class exists in ErrorClass: keep Ruby's message.
        Problem::Invalid(what) => {
            HieraError::new(ErrorClass::RuntimeError, format!("{what}: /{source}/"))
        }
        Problem::TrailingBackslash => {
            HieraError::new(ErrorClass::ArgumentError, "too short escape sequence")
        }
        Problem::Unsupported(what) => HieraError::new(
            ErrorClass::RuntimeError,
            format!(
                "hierad cannot evaluate the knockout_prefix regular expression /{source}/: {what} is not supported"
            ),
        ),
    })
}

/// One translated token's role, for quantifier handling.
#[derive(Clone, Copy, PartialEq)]
enum Last {
    /// Nothing a quantifier could apply to (start, `(`, `|`, flags).
    Nothing,
    /// An atom starting at this output offset; `anchor` if zero-width.
    Atom { start: usize, anchor: bool },
    /// A quantified atom; `fixed` for `{n}`, `modified` once lazy.
    Quantified {
        start: usize,
        anchor: bool,
        fixed: bool,
        modified: bool,
    },
}

struct Translator {
    chars: Vec<char>,
    pos: usize,
    out: String,
    last: Last,
    groups: Vec<usize>,
}

fn translate(source: &str) -> std::result::Result<String, Problem> {
    let mut t = Translator {
        chars: source.chars().collect(),
        pos: 0,
        out: String::new(),
        last: Last::Nothing,
        groups: Vec::new(),
    };
    while let Some(c) = t.next() {
        t.token(c)?;
    }
    if !t.groups.is_empty() {
        return Err(Problem::Invalid("end pattern with unmatched parenthesis"));
    }
    Ok(t.out)
}

impl Translator {
    fn next(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied();
        self.pos += c.is_some() as usize;
        c
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn atom(&mut self, text: &str, anchor: bool) {
        let start = self.out.len();
        self.out.push_str(text);
        self.last = Last::Atom { start, anchor };
    }

    fn literal(&mut self, c: char) {
        self.atom(&regex::escape(c.encode_utf8(&mut [0; 4])), false);
    }

    fn token(&mut self, c: char) -> std::result::Result<(), Problem> {
        match c {
            '\\' => self.escape(),
            '^' => {
                self.atom("(?:^)", true);
                Ok(())
            }
            '$' => {
                self.atom("(?:$)", true);
                Ok(())
            }
            '.' => {
                self.atom(".", false);
                Ok(())
            }
            '[' => {
                let class = self.class()?;
                self.atom(&class, false);
                Ok(())
            }
            '(' => self.open_group(),
            ')' => {
                let start = self
                    .groups
                    .pop()
                    .ok_or(Problem::Invalid("unmatched close parenthesis"))?;
                self.out.push(')');
                self.last = Last::Atom {
                    start,
                    anchor: false,
                };
                Ok(())
            }
            '|' => {
                self.out.push('|');
                self.last = Last::Nothing;
                Ok(())
            }
            '*' | '+' | '?' => self.quantifier(c.to_string(), c, false),
            '{' => match self.interval()? {
                Some(q) => {
                    let fixed = !q.contains(',');
                    self.quantifier(q, '{', fixed)
                }
                None => {
                    self.literal('{');
                    Ok(())
                }
            },
            other => {
                self.literal(other);
                Ok(())
            }
        }
    }

    /// Applies a quantifier to the last atom, following Onigmo: `?` after a
    /// range quantifier makes it lazy, `+` after `* + ?` is possessive, any
    /// other quantifier after a quantifier nests.
    fn quantifier(
        &mut self,
        text: String,
        c: char,
        fixed: bool,
    ) -> std::result::Result<(), Problem> {
        match self.last {
            Last::Nothing => Err(Problem::Invalid(
                "target of repeat operator is not specified",
            )),
            Last::Atom { start, anchor } => {
                self.out.push_str(&text);
                self.last = Last::Quantified {
                    start,
                    anchor,
                    fixed,
                    modified: false,
                };
                Ok(())
            }
            Last::Quantified {
                start,
                anchor,
                fixed: prev_fixed,
                modified,
            } => {
                if !modified && c == '?' && !prev_fixed {
                    self.out.push('?');
                    self.last = Last::Quantified {
                        start,
                        anchor,
                        fixed: false,
                        modified: true,
                    };
                    return Ok(());
                }
                if !modified && c == '+' && !prev_fixed && self.out.ends_with(['*', '+', '?']) {
                    if !anchor {
                        return Err(Problem::Unsupported("a possessive quantifier"));
                    }
                    // A possessive repeat of a zero-width anchor matches as the greedy one.
                    self.last = Last::Quantified {
                        start,
                        anchor,
                        fixed: false,
                        modified: true,
                    };
                    return Ok(());
                }
                self.out.insert_str(start, "(?:");
                self.out.push(')');
                self.out.push_str(&text);
                self.last = Last::Quantified {
                    start,
                    anchor,
                    fixed,
                    modified: false,
                };
                Ok(())
            }
        }
    }

    /// After `{`: an interval quantifier `{n}`, `{n,}`, `{,m}`, `{n,m}`, or
    /// `None` when the brace is a literal (Onigmo's reading).
    fn interval(&mut self) -> std::result::Result<Option<String>, Problem> {
        let rest: String = self.chars[self.pos..].iter().collect();
        let Some(close) = rest.find('}') else {
            return Ok(None);
        };
        let body = &rest[..close];
        let (low, high) = match body.split_once(',') {
            Some((l, h)) => (l, Some(h)),
            None => (body, None),
        };
        let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
        if !digits(low)
            || !high.is_none_or(digits)
            || (low.is_empty() && high.is_none_or(str::is_empty))
        {
            return Ok(None);
        }
        let parse = |s: &str| {
            s.parse::<u32>()
                .map_err(|_| Problem::Unsupported("a huge repeat count"))
        };
        let low_n = if low.is_empty() { 0 } else { parse(low)? };
        let text = match high {
            None => format!("{{{low_n}}}"),
            Some("") => format!("{{{low_n},}}"),
            Some(h) => {
                let high_n = parse(h)?;
                if high_n < low_n {
                    return Err(Problem::Invalid(
                        "upper is smaller than lower in repeat range",
                    ));
                }
                format!("{{{low_n},{high_n}}}")
            }
        };
        self.pos += body.chars().count() + 1;
        if self.last == Last::Nothing {
            return Err(Problem::Invalid(
                "target of repeat operator is not specified",
            ));
        }
        Ok(Some(text))
    }

    fn open_group(&mut self) -> std::result::Result<(), Problem> {
        let start = self.out.len();
        if self.peek() != Some('?') {
            self.out.push('(');
            self.groups.push(start);
            self.last = Last::Nothing;
            return Ok(());
        }
        self.pos += 1;
        let mut flags = String::new();
        loop {
            match self.next() {
                Some(':') => {
                    self.out.push_str(&format!("(?{flags}:"));
                    self.groups.push(start);
                    self.last = Last::Nothing;
                    return Ok(());
                }
                Some(')') if !flags.is_empty() => {
                    self.out.push_str(&format!("(?{flags})"));
                    self.last = Last::Nothing;
                    return Ok(());
                }
                // Ruby's `m` is the crate's `s` (dot matches newline).
                Some('m') => flags.push('s'),
                Some(f @ ('i' | 'x' | '-')) => flags.push(f),
                _ => {
                    return Err(Problem::Unsupported(
                        "a `(?` group other than `(?:` and inline flags",
                    ));
                }
            }
        }
    }

    /// A `\` escape outside a class.
    fn escape(&mut self) -> std::result::Result<(), Problem> {
        let c = self.next().ok_or(Problem::TrailingBackslash)?;
        let anchor = match c {
            'A' => Some(r"\A"),
            'z' => Some(r"\z"),
            // Ruby's word boundary is ASCII, like its \w.
            'b' => Some(r"(?-u:\b)"),
            'B' => Some(r"(?-u:\B)"),
            _ => None,
        };
        if let Some(anchor) = anchor {
            self.atom(anchor, true);
            return Ok(());
        }
        let text = match self.class_escape(c)? {
            ClassItem::Set(set) => set.to_owned(),
            ClassItem::Char(ch) => regex::escape(ch.encode_utf8(&mut [0; 4])),
        };
        self.atom(&text, false);
        Ok(())
    }

    /// An escape valid both inside and outside a class (`c` follows `\`).
    fn class_escape(&mut self, c: char) -> std::result::Result<ClassItem, Problem> {
        Ok(match c {
            'd' => ClassItem::Set("[0-9]"),
            'D' => ClassItem::Set("[^0-9]"),
            'w' => ClassItem::Set("[0-9A-Za-z_]"),
            'W' => ClassItem::Set("[^0-9A-Za-z_]"),
            's' => ClassItem::Set(r"[\t\n\x0B\x0C\r ]"),
            'S' => ClassItem::Set(r"[^\t\n\x0B\x0C\r ]"),
            'h' => ClassItem::Set("[0-9A-Fa-f]"),
            'H' => ClassItem::Set("[^0-9A-Fa-f]"),
            'n' => ClassItem::Char('\n'),
            't' => ClassItem::Char('\t'),
            'r' => ClassItem::Char('\r'),
            'f' => ClassItem::Char('\u{c}'),
            'v' => ClassItem::Char('\u{b}'),
            'a' => ClassItem::Char('\u{7}'),
            'e' => ClassItem::Char('\u{1b}'),
            'x' => {
                let hex: String = self.take_while(2, |c| c.is_ascii_hexdigit());
                let code = u32::from_str_radix(&hex, 16)
                    .map_err(|_| Problem::Unsupported("`\\x` without hex digits"))?;
                if code >= 0x80 {
                    return Err(Problem::Unsupported("a `\\x` byte escape above 0x7F"));
                }
                ClassItem::Char(char::from_u32(code).unwrap_or('\0'))
            }
            'u' => {
                let hex = if self.peek() == Some('{') {
                    self.pos += 1;
                    let hex = self.take_while(8, |c| c.is_ascii_hexdigit());
                    if self.next() != Some('}') {
                        return Err(Problem::Unsupported("a malformed `\\u{...}` escape"));
                    }
                    hex
                } else {
                    self.take_while(4, |c| c.is_ascii_hexdigit())
                };
                let ch = u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or(Problem::Unsupported("a malformed `\\u` escape"))?;
                ClassItem::Char(ch)
            }
            '0'..='9' => return Err(Problem::Unsupported("a back-reference or octal escape")),
            'G' | 'Z' | 'K' | 'R' | 'X' | 'k' | 'g' | 'p' | 'P' | 'c' | 'C' | 'M' | 'O' => {
                return Err(Problem::Unsupported("this backslash escape"));
            }
            other => ClassItem::Char(other),
        })
    }

    fn take_while(&mut self, max: usize, ok: impl Fn(char) -> bool) -> String {
        let mut s = String::new();
        while s.len() < max {
            match self.peek() {
                Some(c) if ok(c) => {
                    s.push(c);
                    self.pos += 1;
                }
                _ => break,
            }
        }
        s
    }

    /// A bracket class, after its `[`.
    fn class(&mut self) -> std::result::Result<String, Problem> {
        let mut out = String::from("[");
        if self.peek() == Some('^') {
            self.pos += 1;
            out.push('^');
        }
        let mut first = true;
        loop {
            let c = self
                .next()
                .ok_or(Problem::Invalid("premature end of char-class"))?;
            let item = match c {
                // A `]` first in the class is a literal (Ruby warns).
                ']' if !first => {
                    out.push(']');
                    return Ok(out);
                }
                '[' => return Err(Problem::Unsupported("a nested class or POSIX bracket")),
                '&' if self.peek() == Some('&') => {
                    return Err(Problem::Unsupported("class intersection"));
                }
                '\\' => {
                    let e = self
                        .next()
                        .ok_or(Problem::Invalid("premature end of char-class"))?;
                    self.class_escape(e)?
                }
                other => ClassItem::Char(other),
            };
            first = false;
            match item {
                ClassItem::Set(set) => out.push_str(set),
                ClassItem::Char(low) => {
                    let is_range = self.peek() == Some('-')
                        && self.chars.get(self.pos + 1).is_some_and(|&n| n != ']');
                    if !is_range {
                        push_class_char(&mut out, low);
                        continue;
                    }
                    self.pos += 1;
                    let high = match self.next() {
                        Some('\\') => {
                            let e = self
                                .next()
                                .ok_or(Problem::Invalid("premature end of char-class"))?;
                            match self.class_escape(e)? {
                                ClassItem::Char(h) => h,
                                ClassItem::Set(_) => {
                                    return Err(Problem::Unsupported(
                                        "a range ending in a class escape",
                                    ));
                                }
                            }
                        }
                        Some('[') => {
                            return Err(Problem::Unsupported("a nested class or POSIX bracket"));
                        }
                        Some(h) => h,
                        None => return Err(Problem::Invalid("premature end of char-class")),
                    };
                    if high < low {
                        return Err(Problem::Invalid("empty range in char class"));
                    }
                    push_class_char(&mut out, low);
                    out.push('-');
                    push_class_char(&mut out, high);
                }
            }
        }
    }
}

enum ClassItem {
    Set(&'static str),
    Char(char),
}

/// A class member as `\x{..}`, which the crate never reads as an operator.
fn push_class_char(out: &mut String, c: char) {
    out.push_str(&format!("\\x{{{:X}}}", c as u32));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (prefix, input, gsub result) — Ruby 3.1's answers for `s.gsub(/^prefix/, "")`.
    #[test]
    fn strip_follows_onigmo() {
        let cases: &[(&str, &str, &str)] = &[
            ("--", "--a", "a"),
            ("--", "a--b", "a--b"),
            ("--", "--a\n--b", "a\nb"),
            ("--", "x\n--b", "x\nb"),
            (".", "xa", "a"),
            ("a|b", "xb", "x"),
            ("-*", "---a", "a"),
            ("*a", "]a", "]"),
            ("?a", "\nza", "\nz"),
            ("+a", "aab", "ab"),
            ("**", "**a", "**a"),
            ("++", "++a", "++a"),
            ("{", "{2}x", "2}x"),
            ("{2}", "{2}x", "{2}x"),
            ("a{,2}", "aaa", "a"),
            ("a{ 2}", "a{ 2}", ""),
            ("a{1,2", "aaa", "aaa"),
            ("a{,}", "a{,}", ""),
            ("a**", "aaa", ""),
            ("a{2}?", "aaa", "a"),
            ("[]a]", "]a", "a"),
            ("[\\-a]", "-a", "a"),
            ("\\h", "Aq", "q"),
            ("\\y", "y", ""),
            ("\\x41", "A", ""),
            ("\\u0041", "Aq", "q"),
            ("(?i)A", "aa", "a"),
            ("1.0", "1x0", ""),
            ("[\"-\"]", "\"a", "a"),
        ];
        for (prefix, input, want) in cases {
            let ko = Knockout::new(Value::str(*prefix));
            assert_eq!(
                ko.strip(input).unwrap(),
                *want,
                "prefix {prefix:?} on {input:?}"
            );
        }
    }

    #[test]
    fn bad_patterns_fail_when_used() {
        let cases: &[(&str, ErrorClass, &str)] = &[
            (
                "(",
                ErrorClass::RuntimeError,
                "end pattern with unmatched parenthesis: /^(/",
            ),
            (
                ")",
                ErrorClass::RuntimeError,
                "unmatched close parenthesis: /^)/",
            ),
            (
                "[",
                ErrorClass::RuntimeError,
                "premature end of char-class: /^[/",
            ),
            (
                "x|*",
                ErrorClass::RuntimeError,
                "target of repeat operator is not specified: /^x|*/",
            ),
            (
                "(*)",
                ErrorClass::RuntimeError,
                "target of repeat operator is not specified: /^(*)/",
            ),
            (
                "a{2,1}",
                ErrorClass::RuntimeError,
                "upper is smaller than lower in repeat range: /^a{2,1}/",
            ),
            (
                "[b-a]",
                ErrorClass::RuntimeError,
                "empty range in char class: /^[b-a]/",
            ),
            ("\\", ErrorClass::ArgumentError, "too short escape sequence"),
        ];
        for (prefix, class, message) in cases {
            let ko = Knockout::new(Value::str(*prefix));
            let err = ko.strip("x").unwrap_err();
            assert_eq!(
                (err.class, err.message.as_str()),
                (*class, *message),
                "{prefix:?}"
            );
        }
        let unsupported = Knockout::new(Value::str("(?=a)"));
        assert!(
            unsupported
                .matches("a")
                .unwrap_err()
                .message
                .contains("not supported")
        );
    }

    #[test]
    fn non_string_prefixes_use_to_s() {
        let ko = Knockout::new(Value::Int(5));
        assert_eq!(ko.strip("5x").unwrap(), "x");
        let ko = Knockout::new(Value::Symbol("~".into()));
        assert_eq!(ko.strip("~x").unwrap(), "x");
        assert!(ko.matches("~").unwrap());
    }
}
