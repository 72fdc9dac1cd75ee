//! The Ruby conversions Psych leans on for tagged scalars: `Kernel#Float`
//! (string and object forms), `String#unpack('m')`, and the `ArgumentError`
//! texts of `Float()`/`Integer()` with Ruby's binary-string `inspect`.

use super::scalar::{Cursor, is_space, lenient_digits};
use crate::hiera::{ErrorClass, HieraError, Result, Value};
use num_traits::ToPrimitive;

/// Ruby's `ArgumentError` of `Float()`/`Integer()`. Ruby quotes the
/// string from its C bytes, as a binary string: non-ASCII bytes show as
/// `\xHH`.
pub(super) fn invalid_value(kind: &str, s: &str) -> HieraError {
    HieraError::new(
        ErrorClass::ArgumentError,
        format!(
            "invalid value for {kind}(): {}",
            inspect_bytes(s.as_bytes())
        ),
    )
}

/// Ruby's `String#inspect` of a binary (ASCII-8BIT) string.
fn inspect_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x0c => out.push_str("\\f"),
            0x0b => out.push_str("\\v"),
            0x08 => out.push_str("\\b"),
            0x07 => out.push_str("\\a"),
            0x1b => out.push_str("\\e"),
            b'#' if matches!(bytes.get(i + 1), Some(b'{' | b'$' | b'@')) => out.push_str("\\#"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02X}")),
        }
    }
    out.push('"');
    out
}

/// Ruby's `Kernel#Float(string)`: surrounding whitespace, `_` between
/// digits, an optional exponent, hexadecimal with an optional `p` exponent;
/// no trailing dot, no `Infinity`/`NaN`.
pub(super) fn ruby_float(s: &str) -> Option<f64> {
    let t = s.trim_matches(is_space);
    let b = t.as_bytes();
    let mut c = Cursor::new(b);
    let mut text = String::with_capacity(t.len());
    if let Some(sign @ (b'-' | b'+')) = c.peek() {
        text.push(sign as char);
        c.i += 1;
    }
    if c.rest().starts_with(b"0x") || c.rest().starts_with(b"0X") {
        c.i += 2;
        return hex_float(c.rest()).map(|f| if text == "-" { -f } else { f });
    }
    let digits = |c: &mut Cursor, text: &mut String| -> bool {
        let (d, used) = lenient_digits(c.rest());
        c.i += used;
        // `lenient_digits` stops before a stray `_`, which must fail here.
        text.push_str(&d);
        !d.is_empty()
    };
    let int = digits(&mut c, &mut text);
    if c.eat(b'.') {
        text.push('.');
        if !digits(&mut c, &mut text) {
            return None;
        }
    } else if !int {
        return None;
    }
    if c.eat(b'e') || c.eat(b'E') {
        text.push('e');
        if let Some(sign @ (b'-' | b'+')) = c.peek() {
            text.push(sign as char);
            c.i += 1;
        }
        if !digits(&mut c, &mut text) {
            return None;
        }
    }
    if !c.at_end() || s.contains('\0') {
        return None;
    }
    text.parse().ok()
}

/// The hexadecimal form of `Float()`: `hh[.hh][p[+-]dd]`.
fn hex_float(b: &[u8]) -> Option<f64> {
    let mut c = Cursor::new(b);
    let mut mantissa = 0f64;
    let mut any = false;
    while let Some(d) = c.peek().and_then(|x| (x as char).to_digit(16)) {
        mantissa = mantissa * 16.0 + f64::from(d);
        any = true;
        c.i += 1;
    }
    let mut scale = 0i32;
    if c.eat(b'.') {
        while let Some(d) = c.peek().and_then(|x| (x as char).to_digit(16)) {
            mantissa = mantissa * 16.0 + f64::from(d);
            scale -= 4;
            any = true;
            c.i += 1;
        }
    }
    if !any {
        return None;
    }
    if c.eat(b'p') || c.eat(b'P') {
        let neg = c.eat(b'-');
        if !neg {
            c.eat(b'+');
        }
        let start = c.i;
        if c.eat_while(|x| x.is_ascii_digit()) == 0 {
            return None;
        }
        let exp: i32 = std::str::from_utf8(&b[start..c.i]).ok()?.parse().ok()?;
        scale += if neg { -exp } else { exp };
    }
    c.at_end().then(|| mantissa * 2f64.powi(scale))
}

/// Ruby's `Kernel#Float(obj)` on what `tokenize` returned (`!!float`).
///
/// # Errors
/// `TypeError` for nil, booleans and Symbols; `ArgumentError` for strings
/// `Float()` rejects.
pub(super) fn float_of(v: Value) -> Result<f64> {
    match v {
        Value::Float(f) => Ok(f),
        Value::Int(n) => Ok(n as f64),
        Value::BigInt(n) => Ok(n.to_f64().unwrap_or(f64::NAN)),
        Value::String(s) => ruby_float(&s).ok_or_else(|| invalid_value("Float", &s)),
        Value::Nil => Err(cannot_convert("nil")),
        Value::Bool(b) => Err(cannot_convert(if b { "true" } else { "false" })),
        other => Err(cannot_convert(other.class_name())),
    }
}

fn cannot_convert(what: &str) -> HieraError {
    HieraError::new(
        ErrorClass::TypeError,
        format!("can't convert {what} into Float"),
    )
}

/// `String#unpack('m')`: lenient Base64 that skips foreign characters and
/// stops at padding, as Ruby's pack.c does.
pub(super) fn unpack_base64(s: &str) -> Vec<u8> {
    fn val(c: u8) -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some(u32::from(c - b'A')),
            b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    let mut i = 0;
    // Finds the next sextet; `stop_at_pad` ends the scan on '='.
    let next = |i: &mut usize, stop_at_pad: bool| -> Option<u32> {
        while *i < b.len() {
            if let Some(v) = val(b[*i]) {
                *i += 1;
                return Some(v);
            }
            if stop_at_pad && b[*i] == b'=' {
                return None;
            }
            *i += 1;
        }
        None
    };
    while let Some(a) = next(&mut i, false) {
        let Some(bb) = next(&mut i, false) else { break };
        let Some(c) = next(&mut i, true) else {
            out.push((a << 2 | bb >> 4) as u8);
            break;
        };
        let Some(d) = next(&mut i, true) else {
            out.push((a << 2 | bb >> 4) as u8);
            out.push((bb << 4 | c >> 2) as u8);
            break;
        };
        out.push((a << 2 | bb >> 4) as u8);
        out.push((bb << 4 | c >> 2) as u8);
        out.push((c << 6 | d) as u8);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ruby_float_table() {
        let cases: &[(&str, Option<f64>)] = &[
            (".5", Some(0.5)),
            ("-.5", Some(-0.5)),
            ("1.", None),
            ("1.e3", None),
            ("1e3", Some(1000.0)),
            ("1_0.5", Some(10.5)),
            ("1__0", None),
            ("_1", None),
            ("1_", None),
            ("0x1A", Some(26.0)),
            ("0x1.8p1", Some(3.0)),
            ("0x", None),
            ("  1.5  ", Some(1.5)),
            ("Infinity", None),
            ("08", Some(8.0)),
            ("1,000", None),
            ("", None),
            ("+", None),
            ("1e+", None),
            ("1._5", None),
            ("1e3.5", None),
        ];
        for (text, want) in cases {
            assert_eq!(ruby_float(text), *want, "Float({text:?})");
        }
    }

    #[test]
    fn base64_table() {
        let cases: &[(&str, &[u8])] = &[
            ("aGVsbG8=", b"hello"),
            ("aGVsbG8", b"hello"),
            ("aGVs\nbG8=", b"hello"),
            ("a", b""),
            ("ab", b"i"),
            ("abc", b"i\xb7"),
            ("ab=cd", b"i"),
            ("a=bcd", b"i\xb7\x1d"),
            ("!!aGVs", b"hel"),
            ("YQ==YQ==", b"a"),
        ];
        for (text, want) in cases {
            assert_eq!(unpack_base64(text), *want, "{text:?}");
        }
    }

    #[test]
    fn inspect_bytes_table() {
        let cases: [(&[u8], &str); 3] = [
            ("é".as_bytes(), "\"\\xC3\\xA9\""),
            (b"a\x01\n", "\"a\\x01\\n\""),
            (b"#{x}", "\"\\#{x}\""),
        ];
        for (bytes, want) in cases {
            assert_eq!(inspect_bytes(bytes), want);
        }
    }
}
