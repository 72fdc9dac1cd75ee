//! Psych's `ScalarScanner#tokenize`: what an untagged plain scalar becomes,
//! plus the Ruby conversions it leans on (`Float()`, `Integer()`, `to_i`,
//! `to_f`, `unpack('m')`, `String#inspect` of their error messages).
//!
//! Every rule mirrors a regular expression of psych/scalar_scanner.rb; the
//! matchers are written by hand because they run on every scalar of every
//! data file.

use super::disallowed;
use super::ruby::{invalid_value, ruby_float};
use crate::hiera::{Result, Value};
use num_bigint::BigInt;

/// Ruby's `\s`: ASCII whitespace only.
pub(super) fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// The character class after the optional first character of Psych's
/// "looks like a word" test: `[[:alpha:]_\s!@#$%\^&*(){}<>|/\\~;=]`.
fn is_word_char(c: char) -> bool {
    c.is_alphabetic() || c == '_' || is_space(c) || "!@#$%^&*(){}<>|/\\~;=".contains(c)
}

/// `%r{^[^\d.:-]?[[:alpha:]_\s!@#$%\^&*(){}<>|/\\~;=]+}` on a line-free
/// string (strings with a newline take the word branch anyway).
fn looks_like_word(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if is_word_char(first) {
        return true;
    }
    if first.is_ascii_digit() || matches!(first, '.' | ':' | '-') {
        return false;
    }
    chars.next().is_some_and(is_word_char)
}

/// Tokenizes a scalar the way `Psych::ScalarScanner#tokenize` does.
///
/// # Errors
/// `Psych::DisallowedClass` for dates and times; `ArgumentError` where
/// Psych's own `Float()`/`Integer()` call fails on a string its regexps
/// let through (`.e+3`, `0b_`).
pub(super) fn tokenize(s: &str) -> Result<Value> {
    if s.is_empty() {
        return Ok(Value::Nil);
    }
    if s.contains('\n') || looks_like_word(s) {
        return Ok(word(s));
    }
    let b = s.as_bytes();
    if is_time(b) {
        return Err(disallowed("Time"));
    }
    if is_date(b) {
        return Err(disallowed("Date"));
    }
    if let Some(f) = special_float(s) {
        return Ok(Value::Float(f));
    }
    if s.len() > 1 && b[0] == b':' {
        return Ok(Value::Symbol(symbol_name(s).to_owned()));
    }
    if let Some(parts) = sexagesimal(b) {
        return Ok(match parts {
            Sexagesimal::Int => sexagesimal_int(s),
            Sexagesimal::Float => Value::Float(sexagesimal_float(s)),
        });
    }
    if is_float(b) {
        if matches!(s, "." | "+." | "-.") {
            return Ok(Value::str(s));
        }
        let cleaned = clean_float(s);
        return match ruby_float(&cleaned) {
            Some(f) => Ok(Value::Float(f)),
            None => Err(invalid_value("Float", &cleaned)),
        };
    }
    if is_integer(b) {
        return parse_int(s);
    }
    Ok(Value::str(s))
}

/// The "word" branch: short words may be null or booleans; Ruby's `^` and
/// `$` are line anchors, so every line of a multi-line string counts.
fn word(s: &str) -> Value {
    if s.chars().nth(5).is_some() {
        return Value::str(s);
    }
    // `/^[^ytonf~]/i`: a line starting with anything else (an empty line
    // in the middle starts with "\n", which qualifies).
    let mut lines = s.split('\n').peekable();
    while let Some(line) = lines.next() {
        let is_last = lines.peek().is_none();
        match line.chars().next() {
            Some(c) if !"ytonfYTONF~".contains(c) => return Value::str(s),
            None if !is_last => return Value::str(s),
            _ => {}
        }
    }
    let any_line = |words: &[&str]| {
        s.split('\n')
            .any(|l| words.iter().any(|w| l.eq_ignore_ascii_case(w)))
    };
    if s == "~" || any_line(&["null"]) {
        Value::Nil
    } else if any_line(&["yes", "true", "on"]) {
        Value::Bool(true)
    } else if any_line(&["no", "false", "off"]) {
        Value::Bool(false)
    } else {
        Value::str(s)
    }
}

/// A tiny cursor for the hand-written regexps.
pub(super) struct Cursor<'a> {
    pub(super) b: &'a [u8],
    pub(super) i: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(b: &'a [u8]) -> Self {
        Cursor { b, i: 0 }
    }
    pub(super) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    pub(super) fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    pub(super) fn eat_if(&mut self, f: impl Fn(u8) -> bool) -> bool {
        match self.peek() {
            Some(c) if f(c) => {
                self.i += 1;
                true
            }
            _ => false,
        }
    }
    /// Eats between `min` and `max` digits; false if fewer than `min`.
    pub(super) fn digits(&mut self, min: usize, max: usize) -> bool {
        let mut n = 0;
        while n < max && self.eat_if(|c| c.is_ascii_digit()) {
            n += 1;
        }
        n >= min
    }
    pub(super) fn eat_while(&mut self, f: impl Fn(u8) -> bool) -> usize {
        let start = self.i;
        while self.eat_if(&f) {}
        self.i - start
    }
    pub(super) fn at_end(&self) -> bool {
        self.i == self.b.len()
    }
    pub(super) fn rest(&self) -> &'a [u8] {
        &self.b[self.i..]
    }
}

fn is_space_byte(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `TIME`: `^-?\d{4}-\d{1,2}-\d{1,2}(?:[Tt]|\s+)\d{1,2}:\d\d:\d\d(?:\.\d*)?(?:\s*(?:Z|[-+]\d{1,2}:?(?:\d\d)?))?$`
fn is_time(b: &[u8]) -> bool {
    let mut c = Cursor::new(b);
    c.eat(b'-');
    if !(c.digits(4, 4) && c.eat(b'-') && c.digits(1, 2) && c.eat(b'-') && c.digits(1, 2)) {
        return false;
    }
    if !(c.eat(b'T') || c.eat(b't') || c.eat_while(is_space_byte) > 0) {
        return false;
    }
    if !(c.digits(1, 2) && c.eat(b':') && c.digits(2, 2) && c.eat(b':') && c.digits(2, 2)) {
        return false;
    }
    if c.eat(b'.') {
        c.eat_while(|x| x.is_ascii_digit());
    }
    if c.at_end() {
        return true;
    }
    c.eat_while(is_space_byte);
    if c.eat(b'Z') {
        return c.at_end();
    }
    if !(c.eat(b'-') || c.eat(b'+')) {
        return false;
    }
    // `\d{1,2}:?(?:\d\d)?` must cover the rest, with backtracking.
    let rest = c.rest();
    match rest.iter().position(|&x| x == b':') {
        Some(colon) => {
            let (h, m) = (&rest[..colon], &rest[colon + 1..]);
            (1..=2).contains(&h.len())
                && h.iter().all(u8::is_ascii_digit)
                && (m.is_empty() || (m.len() == 2 && m.iter().all(u8::is_ascii_digit)))
        }
        None => (1..=4).contains(&rest.len()) && rest.iter().all(u8::is_ascii_digit),
    }
}

/// `^\d{4}-(?:1[012]|0\d|\d)-(?:[12]\d|3[01]|0\d|\d)$`
fn is_date(b: &[u8]) -> bool {
    let mut c = Cursor::new(b);
    if !(c.digits(4, 4) && c.eat(b'-')) {
        return false;
    }
    let month_len = c.rest().iter().take_while(|x| x.is_ascii_digit()).count();
    let month = &c.rest()[..month_len];
    let month_ok = matches!(month, [_] | [b'0', _] | [b'1', b'0'..=b'2']);
    if !month_ok {
        return false;
    }
    c.i += month_len;
    if !c.eat(b'-') {
        return false;
    }
    match c.rest() {
        [d] => d.is_ascii_digit(),
        [b'0'..=b'2', d] => d.is_ascii_digit(),
        [b'3', b'0' | b'1'] => true,
        _ => false,
    }
}

/// `.inf`, `+.inf`, `-.inf` and `.nan`, any case.
fn special_float(s: &str) -> Option<f64> {
    let lower = |t: &str, w: &str| t.eq_ignore_ascii_case(w);
    match s.len() {
        4 if lower(s, ".inf") => Some(f64::INFINITY),
        4 if lower(s, ".nan") => Some(f64::NAN),
        5 if lower(s, "+.inf") => Some(f64::INFINITY),
        5 if lower(s, "-.inf") => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// The Symbol name of `:name`, `:"quoted name"` or `:'quoted name'`.
fn symbol_name(s: &str) -> &str {
    let body = &s[1..];
    // `/^:(["'])(.*)\1/`: the greedy `.*` backtracks to the last quote.
    if let Some(q @ ('"' | '\'')) = body.chars().next() {
        let inner = &body[1..];
        if let Some(end) = inner.rfind(q) {
            let name = &inner[..end];
            return name.strip_prefix(':').unwrap_or(name);
        }
    }
    body
}

enum Sexagesimal {
    Int,
    Float,
}

/// `^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}$` (Int) and the same followed
/// by `\.[0-9_]*` (Float).
fn sexagesimal(b: &[u8]) -> Option<Sexagesimal> {
    let mut c = Cursor::new(b);
    if !(c.eat(b'-') || c.eat(b'+')) {
        // optional sign
    }
    if !c.eat_if(|x| x.is_ascii_digit()) {
        return None;
    }
    c.eat_while(|x| x.is_ascii_digit() || x == b'_');
    let mut groups = 0;
    while groups < 2 && c.eat(b':') {
        let n = c.rest().iter().take_while(|x| x.is_ascii_digit()).count();
        let ok = matches!(&c.rest()[..n], [_] | [b'0'..=b'5', _]);
        if !ok {
            return None;
        }
        c.i += n;
        groups += 1;
    }
    if groups == 0 {
        return None;
    }
    if c.at_end() {
        return Some(Sexagesimal::Int);
    }
    if c.eat(b'.') {
        c.eat_while(|x| x.is_ascii_digit() || x == b'_');
        if c.at_end() {
            return Some(Sexagesimal::Float);
        }
    }
    None
}

/// `"1_000:30".split(':')` summed as `n.to_i * 60 ** (e - 2).abs`.
fn sexagesimal_int(s: &str) -> Value {
    let parts: Vec<&str> = s.split(':').collect();
    let mut total = BigInt::from(0);
    for (e, part) in parts.iter().enumerate() {
        let weight = 60i64.pow((e as i32 - 2).unsigned_abs());
        total += ruby_to_i(part) * weight;
    }
    Value::integer(total)
}

/// The Float variant: `n.to_f * 60 ** (e - 2).abs`, summed left to right
/// from Integer 0, as Ruby does.
fn sexagesimal_float(s: &str) -> f64 {
    let mut total = 0.0f64;
    for (e, part) in s.split(':').enumerate() {
        let weight = 60i64.pow((e as i32 - 2).unsigned_abs()) as f64;
        total += ruby_to_f(part) * weight;
    }
    total
}

/// Digits with single underscores between them, as `to_i`/`to_f` read them;
/// returns the digits and how many bytes were consumed.
pub(super) fn lenient_digits(b: &[u8]) -> (String, usize) {
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            out.push(c as char);
            i += 1;
        } else if c == b'_' && !out.is_empty() && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
        } else {
            break;
        }
    }
    (out, i)
}

/// `String#to_i` on the shapes the sexagesimal regexp admits.
fn ruby_to_i(s: &str) -> BigInt {
    let b = s.as_bytes();
    let (neg, start) = match b.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let (digits, _) = lenient_digits(&b[start..]);
    let n: BigInt = digits.parse().unwrap_or_default();
    if neg { -n } else { n }
}

/// `String#to_f` on the shapes the sexagesimal regexp admits.
fn ruby_to_f(s: &str) -> f64 {
    let b = s.as_bytes();
    let mut text = String::new();
    let mut i = 0;
    if let Some(&sign @ (b'-' | b'+')) = b.first() {
        text.push(sign as char);
        i = 1;
    }
    let (int, used) = lenient_digits(&b[i..]);
    text.push_str(&int);
    i += used;
    if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        let (frac, _) = lenient_digits(&b[i + 1..]);
        text.push('.');
        text.push_str(&frac);
    }
    text.parse().unwrap_or(0.0)
}

/// `FLOAT`: `^[-+]?([0-9][0-9_,]*)?\.[0-9]*([eE][-+][0-9]+)?$`
fn is_float(b: &[u8]) -> bool {
    let mut c = Cursor::new(b);
    if !c.eat(b'-') {
        c.eat(b'+');
    }
    if c.eat_if(|x| x.is_ascii_digit()) {
        c.eat_while(|x| x.is_ascii_digit() || x == b'_' || x == b',');
    }
    if !c.eat(b'.') {
        return false;
    }
    c.eat_while(|x| x.is_ascii_digit());
    if c.eat(b'e') || c.eat(b'E') {
        if !(c.eat(b'-') || c.eat(b'+')) {
            return false;
        }
        if c.eat_while(|x| x.is_ascii_digit()) == 0 {
            return false;
        }
    }
    c.at_end()
}

/// `string.gsub(/[,_]|\.([Ee]|$)/, '\1')`
fn clean_float(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in b.iter().enumerate() {
        match c {
            b',' | b'_' => {}
            b'.' if matches!(b.get(i + 1), None | Some(b'e' | b'E')) => {}
            _ => out.push(c as char),
        }
    }
    out
}

/// `INTEGER`: binary, octal, decimal (with `,`/`_` between digits) or hex.
fn is_integer(b: &[u8]) -> bool {
    let body = match b.first() {
        Some(b'-' | b'+') => &b[1..],
        _ => b,
    };
    let all = |t: &[u8], f: fn(&u8) -> bool| !t.is_empty() && t.iter().all(f);
    if let Some(rest) = body.strip_prefix(b"0b") {
        return all(rest, |c| matches!(c, b'0' | b'1' | b'_' | b','));
    }
    if let Some(rest) = body.strip_prefix(b"0x") {
        return all(rest, |c| c.is_ascii_hexdigit() || matches!(c, b'_' | b','));
    }
    if body == b"0" {
        return true;
    }
    if let Some(rest) = body.strip_prefix(b"0") {
        return all(rest, |c| matches!(c, b'0'..=b'7' | b'_' | b','));
    }
    // `[1-9](?:[0-9]|,[0-9]|_[0-9])*`
    match body.split_first() {
        Some((b'1'..=b'9', mut rest)) => {
            while let Some((&c, tail)) = rest.split_first() {
                if c.is_ascii_digit() {
                    rest = tail;
                } else if matches!(c, b'_' | b',') && tail.first().is_some_and(u8::is_ascii_digit) {
                    rest = &tail[1..];
                } else {
                    return false;
                }
            }
            true
        }
        _ => false,
    }
}

/// `Integer(string.gsub(/[,_]/, ''))` on a string `is_integer` accepted.
fn parse_int(s: &str) -> Result<Value> {
    let cleaned: String = s.chars().filter(|&c| c != ',' && c != '_').collect();
    let (neg, body) = match cleaned.as_bytes().first() {
        Some(b'-') => (true, &cleaned[1..]),
        Some(b'+') => (false, &cleaned[1..]),
        _ => (false, &cleaned[..]),
    };
    let (radix, digits) = if let Some(d) = body.strip_prefix("0b") {
        (2, d)
    } else if let Some(d) = body.strip_prefix("0x") {
        (16, d)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() {
        return Err(invalid_value("Integer", &cleaned));
    }
    if let Ok(n) = i64::from_str_radix(digits, radix) {
        return Ok(Value::Int(if neg { -n } else { n }));
    }
    let n = BigInt::parse_bytes(digits.as_bytes(), radix)
        .ok_or_else(|| invalid_value("Integer", &cleaned))?;
    Ok(Value::integer(if neg { -n } else { n }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hiera::ErrorClass;

    fn f(x: f64) -> Value {
        Value::Float(x)
    }
    fn s(x: &str) -> Value {
        Value::str(x)
    }
    fn big(x: &str) -> Value {
        Value::integer(x.parse().unwrap())
    }

    #[test]
    fn tokenize_table() {
        let cases: Vec<(&str, Value)> = vec![
            ("", Value::Nil),
            ("~", Value::Nil),
            ("null", Value::Nil),
            ("nUll", Value::Nil),
            ("yes", true.into()),
            ("YES", true.into()),
            ("tRue", true.into()),
            ("on", true.into()),
            ("no", false.into()),
            ("Off", false.into()),
            ("FALSE", false.into()),
            ("y", s("y")),
            ("n", s("n")),
            ("yesyes", s("yesyes")),
            ("Infinity", s("Infinity")),
            ("on\nno", true.into()),
            ("a\nno", s("a\nno")),
            ("42", 42.into()),
            ("+12", 12.into()),
            ("-0", 0.into()),
            ("010", 8.into()),
            ("-010", (-8).into()),
            ("08", s("08")),
            ("0_8", s("0_8")),
            ("0x1F", 31.into()),
            ("0xFF_FF", 65535.into()),
            ("-0x1A", (-26).into()),
            ("0b101", 5.into()),
            ("0o10", s("0o10")),
            ("1_000", 1000.into()),
            ("1,000", 1000.into()),
            ("0,1", 1.into()),
            ("1,0,0", 100.into()),
            ("12_", s("12_")),
            ("_12", s("_12")),
            ("1__0", s("1__0")),
            ("1:30", 5400.into()),
            ("190:20:30", 685230.into()),
            ("-1:30", (-1800).into()),
            ("1:60", s("1:60")),
            ("1:30.5", f(5430.0)),
            ("1.5", f(1.5)),
            (".5", f(0.5)),
            ("1.", f(1.0)),
            ("0.", f(0.0)),
            ("1,000.5", f(1000.5)),
            ("1.0e+3", f(1000.0)),
            (".5e+3", f(500.0)),
            ("1e3", s("1e3")),
            ("1.0e3", s("1.0e3")),
            ("1.10", f(1.1)),
            (".inf", f(f64::INFINITY)),
            ("-.Inf", f(f64::NEG_INFINITY)),
            (".NaN", f(f64::NAN)),
            ("-.nan", s("-.nan")),
            (".", s(".")),
            ("-", s("-")),
            (":sym", Value::Symbol("sym".into())),
            (":\"a b\"c", Value::Symbol("a b".into())),
            ("::a", Value::Symbol(":a".into())),
            (":", s(":")),
            ("12345678901234567890", big("12345678901234567890")),
            ("<<", s("<<")),
        ];
        for (text, want) in cases {
            let got = tokenize(text).unwrap();
            assert_eq!(got, want, "tokenize({text:?})");
        }
    }

    #[test]
    fn tokenize_refusals() {
        let cases: &[(&str, ErrorClass, &str)] = &[
            (
                "2024-01-02",
                ErrorClass::PsychDisallowedClass,
                "Tried to load unspecified class: Date",
            ),
            (
                "2024-1-2",
                ErrorClass::PsychDisallowedClass,
                "Tried to load unspecified class: Date",
            ),
            (
                "2024-01-02 10:00:00",
                ErrorClass::PsychDisallowedClass,
                "Tried to load unspecified class: Time",
            ),
            (
                "2024-01-02T10:00:00Z",
                ErrorClass::PsychDisallowedClass,
                "Tried to load unspecified class: Time",
            ),
            (
                "2001-12-14t21:59:43.10-05:00",
                ErrorClass::PsychDisallowedClass,
                "Tried to load unspecified class: Time",
            ),
            (
                ".e+3",
                ErrorClass::ArgumentError,
                "invalid value for Float(): \"e+3\"",
            ),
            (
                "0b_",
                ErrorClass::ArgumentError,
                "invalid value for Integer(): \"0b\"",
            ),
        ];
        for (text, class, message) in cases {
            let err = tokenize(text).unwrap_err();
            assert_eq!(
                (err.class, err.message.as_str()),
                (*class, *message),
                "{text:?}"
            );
        }
        assert_eq!(tokenize("2024-13-01").unwrap(), s("2024-13-01"));
    }
}
