//! The parser of json 2.6.1's C extension (ext/json/ext/parser/parser.rl,
//! Ragel machines), mirrored machine by machine so that every failure
//! stops at the byte where Ruby's stops and raises from the same place.
//!
//! How the machines fail, which decides every message:
//! - the document, array and string machines stop at the first byte no
//!   transition takes (end of input included); the document and array
//!   machines then raise `unexpected token at '<rest>'`, prefixed with the
//!   parser.rl line of their `rb_enc_raise` (859 and 451);
//! - a value that does not parse (`nul`, a broken string, `-`) hands its
//!   caller its own first byte, where the caller then stops;
//! - an object never raises: when it fails, its caller stops at its `{`,
//!   which is why `{"k": 1,}` reports the whole object;
//! - NaN, Infinity and -Infinity raise as soon as they are read (225, 232,
//!   249) unless allowed; a lone high surrogate at the end of a string
//!   raises `incomplete surrogate pair` (521).
//!
//! The rest is C's `%s`: it runs to the first NUL byte.

use super::additions;
use crate::hiera::error::{ErrorClass, HieraError, Result};
use crate::hiera::value::{Hash, Value};

/// Parser options, as `JSON::Ext::Parser#initialize` takes them.
pub(super) struct Options {
    pub(crate) allow_nan: bool,
    /// 0 = unlimited (`max_nesting: false`).
    pub(crate) max_nesting: usize,
    /// The `json_class` hook of `JSON.load`.
    pub(crate) create_additions: bool,
}

/// Nesting past which `JSON.load` (no `max_nesting`) gives up with Ruby's
/// `SystemStackError`. Ruby's own limit is its C stack (about 58,000
/// levels under an 8 MB stack, varying with the stack); ours is far lower
/// because every consumer of a [`Value`] (drop included) recurses, and
/// must fit a 2 MB thread stack even unoptimised.
pub(crate) const STACK_DEPTH: usize = 1_000;

// The parser.rl lines whose `__LINE__` Ruby's messages carry (read from the
// compiled parser.so of Ruby 3.1.2).
const LINE_NAN: u32 = 225;
const LINE_INFINITY: u32 = 232;
const LINE_MINUS_INFINITY: u32 = 249;
const LINE_ARRAY: u32 = 451;
const LINE_SURROGATE: u32 = 521;
const LINE_DOCUMENT: u32 = 859;

/// Why a machine stopped.
enum Stop {
    /// An exception is on its way up.
    Raise(HieraError),
    /// The machine failed at this byte; the caller decides what it means.
    At(usize),
}

impl From<HieraError> for Stop {
    fn from(e: HieraError) -> Stop {
        Stop::Raise(e)
    }
}

type Step<T> = std::result::Result<T, Stop>;

/// Parses a whole document (`cParser_parse`).
pub(super) fn parse(text: &str, opts: Options) -> Result<Value> {
    Parser {
        text,
        src: text.as_bytes(),
        opts,
    }
    .document()
}

/// An open container, innermost last.
enum Open {
    Array {
        items: Vec<Value>,
    },
    Object {
        start: usize,
        hash: Hash,
        /// The name whose value is being read.
        name: Option<String>,
    },
}

/// What the machines do next.
enum Next {
    /// Read a value from this byte (a `begin_value`).
    Value(usize),
    /// A value is complete; the byte after it.
    Done(Value, usize),
}

fn pop_array(stack: &mut Vec<Open>) -> Value {
    match stack.pop() {
        Some(Open::Array { items }) => Value::Array(items),
        _ => unreachable!("pop_array ends an array"),
    }
}

struct Parser<'a> {
    text: &'a str,
    src: &'a [u8],
    opts: Options,
}

fn begins_value(b: u8) -> bool {
    matches!(
        b,
        b'n' | b'f' | b't' | b'"' | b'-' | b'[' | b'{' | b'N' | b'I' | b'0'..=b'9'
    )
}

impl Parser<'_> {
    fn byte(&self, i: usize) -> Option<u8> {
        self.src.get(i).copied()
    }

    fn digit(&self, i: usize) -> bool {
        self.byte(i).is_some_and(|b| b.is_ascii_digit())
    }

    /// C's `'%s'` of the source from `at`: up to the first NUL. `None` is
    /// the byte before the source, which Ruby reads for a top-level
    /// Infinity and which has always been a NUL there.
    fn rest(&self, at: Option<usize>) -> String {
        let Some(at) = at else {
            return String::new();
        };
        let tail = &self.src[at.min(self.src.len())..];
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        String::from_utf8_lossy(&tail[..end]).into_owned()
    }

    fn unexpected(&self, line: u32, at: Option<usize>) -> HieraError {
        HieraError::new(
            ErrorClass::JsonParserError,
            format!("{line}: unexpected token at '{}'", self.rest(at)),
        )
    }

    /// The `JSON` machine (`ignore* begin_value >parse_value ignore*`, the
    /// whole input consumed) driving the value, array and object machines
    /// over an explicit stack of open containers, so that nesting costs no
    /// native stack.
    fn document(&self) -> Result<Value> {
        let mut stack = Vec::new();
        let mut next = self.ignore(0).and_then(|p| match self.byte(p) {
            Some(b) if begins_value(b) => Ok(Next::Value(p)),
            _ => Err(Stop::At(p)),
        });
        loop {
            let step = match next {
                Ok(Next::Value(p)) => match self.src[p] {
                    b'[' | b'{' => self.open(&mut stack, p),
                    _ => self.scalar(p).map(|(v, end)| Next::Done(v, end)),
                },
                Ok(Next::Done(v, end)) if stack.is_empty() => {
                    return match self.ignore(end) {
                        Ok(at) if at == self.src.len() => Ok(v),
                        Ok(at) | Err(Stop::At(at)) => Err(self.fail(&mut stack, at)),
                        Err(Stop::Raise(e)) => Err(e),
                    };
                }
                Ok(Next::Done(v, end)) => self.deliver(&mut stack, v, end),
                Err(Stop::At(at)) => return Err(self.fail(&mut stack, at)),
                Err(Stop::Raise(e)) => return Err(e),
            };
            next = step;
        }
    }

    /// The innermost open machine failed at `at`: an array raises there; an
    /// object gives up and its caller fails at its `{`; the document raises.
    fn fail(&self, stack: &mut Vec<Open>, mut at: usize) -> HieraError {
        while let Some(open) = stack.pop() {
            match open {
                Open::Array { .. } => return self.unexpected(LINE_ARRAY, Some(at)),
                Open::Object { start, .. } => at = start,
            }
        }
        self.unexpected(LINE_DOCUMENT, Some(at))
    }

    /// Enters the array or object machine at its `[` or `{`.
    fn open(&self, stack: &mut Vec<Open>, p: usize) -> Step<Next> {
        self.check_nesting(stack.len() + 1)?;
        if self.src[p] == b'[' {
            stack.push(Open::Array { items: Vec::new() });
            let i = self.ignore(p + 1)?;
            match self.byte(i) {
                Some(b']') => Ok(Next::Done(pop_array(stack), i + 1)),
                Some(b) if begins_value(b) => Ok(Next::Value(i)),
                _ => Err(Stop::At(i)),
            }
        } else {
            stack.push(Open::Object {
                start: p,
                hash: Hash::default(),
                name: None,
            });
            let i = self.ignore(p + 1)?;
            match self.byte(i) {
                Some(b'}') => Ok(Next::Done(self.close(stack)?, i + 1)),
                Some(b'"') => self.pair(stack, i),
                _ => Err(Stop::At(i)),
            }
        }
    }

    /// An object's `begin_name ignore* ':' ignore* begin_value`, from the
    /// name's `"` to the value's first byte.
    fn pair(&self, stack: &mut [Open], p: usize) -> Step<Next> {
        let (name, np) = self.string(p)?;
        if let Some(Open::Object { name: slot, .. }) = stack.last_mut() {
            *slot = Some(name);
        }
        let i = self.ignore(np)?;
        if self.byte(i) != Some(b':') {
            return Err(Stop::At(i));
        }
        let i = self.ignore(i + 1)?;
        match self.byte(i) {
            Some(b) if begins_value(b) => Ok(Next::Value(i)),
            _ => Err(Stop::At(i)),
        }
    }

    /// Hands a complete value to the innermost open container and reads on
    /// to its next value or its end.
    fn deliver(&self, stack: &mut Vec<Open>, v: Value, end: usize) -> Step<Next> {
        let closer = match stack.last_mut() {
            Some(Open::Array { items }) => {
                items.push(v);
                b']'
            }
            Some(Open::Object { hash, name, .. }) => {
                // Hash#[]=: a repeated name keeps its place, takes the value.
                hash.insert(Value::String(name.take().unwrap_or_default()), v);
                b'}'
            }
            None => unreachable!("the document takes its own value"),
        };
        let i = self.ignore(end)?;
        match self.byte(i) {
            Some(b',') => {
                let i = self.ignore(i + 1)?;
                match self.byte(i) {
                    Some(b'"') if closer == b'}' => self.pair(stack, i),
                    Some(b) if closer == b']' && begins_value(b) => Ok(Next::Value(i)),
                    _ => Err(Stop::At(i)),
                }
            }
            Some(b) if b == closer && closer == b']' => Ok(Next::Done(pop_array(stack), i + 1)),
            Some(b) if b == closer => Ok(Next::Done(self.close(stack)?, i + 1)),
            _ => Err(Stop::At(i)),
        }
    }

    /// Ends the innermost (object) machine, through `json_class` when
    /// `create_additions`.
    fn close(&self, stack: &mut Vec<Open>) -> Step<Value> {
        let Some(Open::Object { hash, .. }) = stack.pop() else {
            unreachable!("close ends an object");
        };
        Ok(if self.opts.create_additions {
            additions::create(hash)?
        } else {
            Value::Hash(hash)
        })
    }

    /// `ignore*`: white space (space, tab, CR, LF), `/* */` and `//`
    /// comments (the latter ended by a newline). `Stop::At` is where a
    /// broken comment stops the machine.
    fn ignore(&self, mut p: usize) -> Step<usize> {
        let end = self.src.len();
        loop {
            match self.byte(p) {
                Some(b' ' | b'\t' | b'\r' | b'\n') => p += 1,
                Some(b'/') => match self.byte(p + 1) {
                    Some(b'*') => {
                        let body = &self.src[p + 2..];
                        match body.windows(2).position(|w| w == b"*/") {
                            Some(i) => p += 2 + i + 2,
                            None => return Err(Stop::At(end)),
                        }
                    }
                    Some(b'/') => match self.src[p + 2..].iter().position(|&b| b == b'\n') {
                        Some(i) => p += 2 + i + 1,
                        None => return Err(Stop::At(end)),
                    },
                    Some(_) => return Err(Stop::At(p + 1)),
                    None => return Err(Stop::At(end)),
                },
                _ => return Ok(p),
            }
        }
    }

    /// The `JSON_value` machine for all but arrays and objects, entered at
    /// a `begin_value` byte: the value and the byte after it. Its trailing
    /// `ignore*` never runs: the exit action fires on the first byte after
    /// the value.
    fn scalar(&self, p: usize) -> Step<(Value, usize)> {
        let literal = |word: &[u8], v: Value| {
            if self.src[p..].starts_with(word) {
                Ok((v, p + word.len()))
            } else {
                Err(Stop::At(p))
            }
        };
        match self.src[p] {
            b'"' => self.string(p).map(|(s, np)| (Value::String(s), np)),
            b'n' => literal(b"null", Value::Nil),
            b't' => literal(b"true", Value::Bool(true)),
            b'f' => literal(b"false", Value::Bool(false)),
            b'N' => {
                let got = literal(b"NaN", Value::Float(f64::NAN))?;
                if !self.opts.allow_nan {
                    return Err(self.unexpected(LINE_NAN, Some(p)).into());
                }
                Ok(got)
            }
            b'I' => {
                let got = literal(b"Infinity", Value::Float(f64::INFINITY))?;
                if !self.opts.allow_nan {
                    // Ruby points one byte too early (`p - 8` at the `y`).
                    return Err(self.unexpected(LINE_INFINITY, p.checked_sub(1)).into());
                }
                Ok(got)
            }
            _ => {
                if self.src[p..].starts_with(b"-Infinity") {
                    if !self.opts.allow_nan {
                        return Err(self.unexpected(LINE_MINUS_INFINITY, Some(p)).into());
                    }
                    return Ok((Value::Float(f64::NEG_INFINITY), p + 9));
                }
                self.number(p)
            }
        }
    }

    /// `parse_number`: the `JSON_float` machine, else the `JSON_integer`
    /// one; neither matching leaves the value at its first byte.
    fn number(&self, p: usize) -> Step<(Value, usize)> {
        let text = |end: usize| &self.text[p..end];
        if let Some(end) = self.float_end(p) {
            // Ruby's strtod and Rust's parse both round correctly.
            let f = text(end).parse::<f64>().expect("a float literal");
            return Ok((Value::Float(f), end));
        }
        if let Some(end) = self.integer_end(p) {
            let v = match text(end).parse::<i64>() {
                Ok(n) => Value::Int(n),
                Err(_) => Value::integer(text(end).parse().expect("an integer literal")),
            };
            return Ok((v, end));
        }
        Err(Stop::At(p))
    }

    /// `-? (0 | [1-9][0-9]*)`, the end of the integer part.
    fn int_part(&self, p: usize) -> Option<usize> {
        let mut i = p + usize::from(self.byte(p) == Some(b'-'));
        match self.byte(i)? {
            b'0' => Some(i + 1),
            b'1'..=b'9' => {
                i += 1;
                while self.digit(i) {
                    i += 1;
                }
                Some(i)
            }
            _ => None,
        }
    }

    /// `JSON_float`: an integer part, then a fraction, an exponent or both,
    /// then end of input or a byte outside `[0-9Ee.-]`.
    fn float_end(&self, p: usize) -> Option<usize> {
        let mut i = self.int_part(p)?;
        let mut float = false;
        if self.byte(i) == Some(b'.') {
            i += 1;
            if !self.digit(i) {
                return None;
            }
            while self.digit(i) {
                i += 1;
            }
            float = true;
        }
        if matches!(self.byte(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(self.byte(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !self.digit(i) {
                return None;
            }
            while self.digit(i) {
                i += 1;
            }
            float = true;
        }
        match self.byte(i) {
            _ if !float => None,
            Some(b'0'..=b'9' | b'E' | b'e' | b'.' | b'-') => None,
            _ => Some(i),
        }
    }

    /// `JSON_integer`: an integer part not followed by a digit (`01` fails).
    fn integer_end(&self, p: usize) -> Option<usize> {
        let i = self.int_part(p)?;
        (!self.digit(i)).then_some(i)
    }

    fn check_nesting(&self, nesting: usize) -> Step<()> {
        let max = self.opts.max_nesting;
        if max > 0 && nesting > max {
            return Err(HieraError::new(
                ErrorClass::JsonNestingError,
                format!("nesting of {nesting} is too deep"),
            )
            .into());
        }
        if nesting > STACK_DEPTH {
            return Err(
                HieraError::new(ErrorClass::SystemStackError, "stack level too deep").into(),
            );
        }
        Ok(())
    }

    /// The `JSON_string` machine, entered at `"`: no raw control bytes
    /// (0x00-0x1f), a backslash before any byte but a control byte, `\u`
    /// before four hex digits. Failing, it leaves its caller at the `"`.
    fn string(&self, p: usize) -> Step<(String, usize)> {
        let mut i = p + 1;
        let mut escaped = false;
        loop {
            match self.byte(i) {
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    match self.byte(i + 1) {
                        Some(b'u') => {
                            let hex = self.src.get(i + 2..i + 6).ok_or(Stop::At(p))?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return Err(Stop::At(p));
                            }
                            i += 6;
                        }
                        Some(0x20..) => i += 2,
                        _ => return Err(Stop::At(p)),
                    }
                }
                Some(0x20..) => i += 1,
                _ => return Err(Stop::At(p)),
            }
        }
        if !escaped {
            // Quotes are ASCII, so the slice is on char boundaries.
            return Ok((self.text[p + 1..i].to_owned(), i + 1));
        }
        Ok((self.unescape(p + 1, i)?, i + 1))
    }

    /// `json_string_unescape` over the string's bytes `start..end` (`end`
    /// is the closing quote), with its quirks: an unknown escape keeps the
    /// escaped byte; a high surrogate followed by any `\u` combines with it
    /// (valid low surrogate or not); one followed by anything else becomes
    /// `?` and swallows the next byte; a lone low surrogate is encoded as
    /// it is (Ruby's String is then invalid UTF-8: ours gets U+FFFDs).
    /// Ruby's "incomplete unicode character escape sequence" cannot happen:
    /// the machine has already seen four hex digits after every `\u`.
    fn unescape(&self, start: usize, end: usize) -> Step<String> {
        let s = self.src;
        let mut out = Vec::with_capacity(end - start);
        let mut run = start;
        let mut i = start;
        while i < end {
            if s[i] != b'\\' {
                i += 1;
                continue;
            }
            out.extend_from_slice(&s[run..i]);
            i += 1;
            let simple = match s[i] {
                b'n' => Some(b'\n'),
                b'r' => Some(b'\r'),
                b't' => Some(b'\t'),
                b'"' => Some(b'"'),
                b'\\' => Some(b'\\'),
                b'b' => Some(0x08),
                b'f' => Some(0x0c),
                b'u' => None,
                _ => {
                    // Unknown escape: the backslash goes, the byte stays.
                    run = i;
                    continue;
                }
            };
            if let Some(b) = simple {
                out.push(b);
            } else {
                let mut ch = hex4(&s[i + 1..]);
                i += 4;
                if ch & 0xFC00 == 0xD800 {
                    i += 1;
                    if i + 6 > end {
                        return Err(HieraError::new(
                            ErrorClass::JsonParserError,
                            format!(
                                "{LINE_SURROGATE}: incomplete surrogate pair at '{}'",
                                self.rest(Some(run))
                            ),
                        )
                        .into());
                    }
                    if s[i] == b'\\' && s[i + 1] == b'u' {
                        let low = hex4(&s[i + 2..]);
                        ch = ((ch & 0x3F) << 10) | ((((ch >> 6) & 0xF) + 1) << 16) | (low & 0x3FF);
                        i += 5;
                        push_utf8(&mut out, ch);
                    } else {
                        out.push(b'?');
                    }
                } else {
                    push_utf8(&mut out, ch);
                }
            }
            i += 1;
            run = i;
        }
        out.extend_from_slice(&s[run.min(end)..end]);
        Ok(match String::from_utf8(out) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }
}

/// `unescape_unicode`: four hex digits, or U+FFFD at the first that is not
/// one (only reachable once a swallowed byte has shifted the escapes).
fn hex4(bytes: &[u8]) -> u32 {
    let mut ch = 0;
    for &b in bytes.iter().take(4) {
        match (b as char).to_digit(16) {
            Some(d) => ch = (ch << 4) | d,
            None => return 0xFFFD,
        }
    }
    ch
}

/// `convert_UTF32_to_UTF8`, which encodes surrogates like any other code.
fn push_utf8(out: &mut Vec<u8>, ch: u32) {
    match ch {
        0..=0x7F => out.push(ch as u8),
        0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (ch >> 6) as u8, 0x80 | (ch & 0x3F) as u8]),
        0x800..=0xFFFF => out.extend_from_slice(&[
            0xE0 | (ch >> 12) as u8,
            0x80 | ((ch >> 6) & 0x3F) as u8,
            0x80 | (ch & 0x3F) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xF0 | (ch >> 18) as u8,
            0x80 | ((ch >> 12) & 0x3F) as u8,
            0x80 | ((ch >> 6) & 0x3F) as u8,
            0x80 | (ch & 0x3F) as u8,
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    const PARSE: Options = Options {
        allow_nan: false,
        max_nesting: 100,
        create_additions: false,
    };

    fn s(text: &str) -> Value {
        Value::str(text)
    }

    #[test]
    fn values() {
        let cases: Vec<(&str, Value)> = vec![
            ("1", Value::Int(1)),
            ("-0", Value::Int(0)),
            ("1.0", Value::Float(1.0)),
            ("-0.0", Value::Float(-0.0)),
            ("1E+2", Value::Float(100.0)),
            ("1e400", Value::Float(f64::INFINITY)),
            (
                "99999999999999999999",
                Value::integer("99999999999999999999".parse().unwrap()),
            ),
            (" /* a */ null // b\n", Value::Nil),
            (r#""\u00e9\/\x""#, s("é/x")),
            (r#""\ud83d\ude00""#, s("😀")),
            // A high surrogate combines with whatever \u follows it...
            (r#""\ud800\u0041""#, s("\u{10041}")),
            // ...and before anything else becomes "?" and eats one byte.
            (r#""\ud800abcdef""#, s("?bcdef")),
            (r#""\ud800\\nabc""#, s("?\nabc")),
            // The eaten backslash shifts the escapes: "\u123" + the quote.
            (r#""\ud800\\u123""#, s("?\u{fffd}")),
            (r#""\ud800\\u1234""#, s("?\u{1234}")),
            (
                r#"{"b":1,"a":[true,false],"b":2}"#,
                Value::Hash(
                    rhash! {"b" => 2, "a" => Value::Array(vec![true.into(), false.into()])},
                ),
            ),
        ];
        for (text, want) in cases {
            let got = parse(text, PARSE);
            assert!(
                matches!(&got, Ok(v) if format!("{v:?}") == format!("{want:?}")),
                "{text:?}: {got:?}"
            );
        }
    }

    #[test]
    fn parse_errors() {
        // (text, message): where each machine stops and who raises.
        let cases: &[(&str, &str)] = &[
            ("", "859: unexpected token at ''"),
            ("  ", "859: unexpected token at ''"),
            ("x", "859: unexpected token at 'x'"),
            ("1 x", "859: unexpected token at 'x'"),
            ("1 // c", "859: unexpected token at ''"),
            ("1 /x", "859: unexpected token at 'x'"),
            // A failed value leaves its caller at its first byte.
            ("nul", "859: unexpected token at 'nul'"),
            ("[nul]", "451: unexpected token at 'nul]'"),
            (r#"["a"#, "451: unexpected token at '\"a'"),
            ("[-]", "451: unexpected token at '-]'"),
            ("01", "859: unexpected token at '01'"),
            // A number ends where its machine can: the caller fails there.
            ("1.", "859: unexpected token at '.'"),
            ("[1.5e]", "451: unexpected token at '.5e]'"),
            ("[1e5-]", "451: unexpected token at 'e5-]'"),
            ("[1.5+]", "451: unexpected token at '+]'"),
            // Arrays raise where they stop.
            ("[1,]", "451: unexpected token at ']'"),
            ("[1 2]", "451: unexpected token at '2]'"),
            ("[1", "451: unexpected token at ''"),
            // Objects never raise: their caller stops at the `{`.
            (r#"{"k": 1,}"#, "859: unexpected token at '{\"k\": 1,}'"),
            (r#"[{"k":}]"#, "451: unexpected token at '{\"k\":}]'"),
            (
                r#"{"a":{"b":1,}}"#,
                "859: unexpected token at '{\"a\":{\"b\":1,}}'",
            ),
            (r#"{"a":[1,]}"#, "451: unexpected token at ']}'"),
            // NaN and Infinity raise once read; Infinity one byte early.
            ("NaNx", "225: unexpected token at 'NaNx'"),
            ("[Infinity]", "232: unexpected token at '[Infinity]'"),
            ("Infinity", "232: unexpected token at ''"),
            ("[-Infinity]", "249: unexpected token at '-Infinity]'"),
            ("[-Infinit]", "451: unexpected token at '-Infinit]'"),
            // C's %s ends at a NUL.
            ("[1,\0]", "451: unexpected token at ''"),
            ("[\"a\", 1 x\0y]", "451: unexpected token at 'x'"),
            // A lone high surrogate at a string's end: from the run's start.
            (
                r#"["ab\ud800"]"#,
                "521: incomplete surrogate pair at 'ab\\ud800\"]'",
            ),
            (
                r#"["\n\ud800x"]"#,
                "521: incomplete surrogate pair at '\\ud800x\"]'",
            ),
        ];
        for (text, message) in cases {
            let got = parse(text, PARSE).unwrap_err();
            assert_eq!(got.class, ErrorClass::JsonParserError, "{text:?}");
            assert_eq!(got.message, *message, "{text:?}");
        }
    }

    #[test]
    fn nesting_errors() {
        let cases: &[(String, usize, ErrorClass, &str)] = &[
            (
                "[".repeat(101),
                100,
                ErrorClass::JsonNestingError,
                "nesting of 101 is too deep",
            ),
            (
                "{\"a\":".repeat(3),
                2,
                ErrorClass::JsonNestingError,
                "nesting of 3 is too deep",
            ),
            (
                "[".repeat(STACK_DEPTH + 1),
                0,
                ErrorClass::SystemStackError,
                "stack level too deep",
            ),
            // The limit is checked on entry, so an earlier error wins.
            (
                "[[1,] [[[".to_owned(),
                2,
                ErrorClass::JsonParserError,
                "451: unexpected token at '] [[['",
            ),
        ];
        for (text, max_nesting, class, message) in cases {
            let opts = Options {
                allow_nan: false,
                max_nesting: *max_nesting,
                create_additions: false,
            };
            let got = parse(text, opts).unwrap_err();
            assert_eq!(
                (got.class, got.message.as_str()),
                (*class, *message),
                "{text:?}"
            );
        }
    }
}
