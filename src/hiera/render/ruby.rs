//! Ruby 3.1's text forms of a value: `Float#to_s`, `inspect`, `to_s` (what
//! interpolation inserts), `pp`, and the `hiera` command's ruby output
//! format (`puts` for a String, `pp` for anything else). No I/O.
//!
//! Strings are taken to be UTF-8 and Ruby's default external encoding to be
//! UTF-8 as well (a UTF-8 locale): under another locale Ruby's `inspect`
//! escapes every non-ASCII character instead.

use super::prettyprint::PrettyPrint;
use super::unicode;
use crate::hiera::Value;

/// `Float#to_s`: the shortest digits that read back as the same double, in
/// fixed notation for 0.0001 <= |f| < 1e15 and up to 1e16 when digits
/// follow the point (`100.0`, `0.0001`, `1578763851215890.8`), else in
/// scientific notation (`1.0e-05`, `1.0e+15`); `Infinity`, `-Infinity`,
/// `NaN`.
pub fn float_to_s(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let (digits, decpt) = shortest_digits(f.abs());
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    let ndigits = digits.len() as i32;
    if decpt > 0 && decpt < ndigits {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    } else if decpt > 0 && decpt <= 15 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (decpt - ndigits) as usize));
        out.push_str(".0");
    } else if decpt <= 0 && decpt > -4 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-decpt) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        out.push('.');
        out.push_str(if ndigits > 1 { &digits[1..] } else { "0" });
        out.push_str(&format!("e{:+03}", decpt - 1));
    }
    out
}

/// The shortest decimal digits that read back as `f` (finite, >= 0) and
/// Ruby's `decpt` (where the point goes relative to the first digit): `ryu`
/// breaks ties between two shortest candidates to the even digit, as Ruby's
/// dtoa mode 0 does (`872379885051571.25` prints as `...571.2`), where
/// Rust's own `{:e}` rounds them up.
fn shortest_digits(f: f64) -> (String, i32) {
    if f == 0.0 {
        return ("0".to_owned(), 1);
    }
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(f);
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().expect("ryu exponent")),
        None => (text, 0),
    };
    let point = mantissa.find('.').unwrap_or(mantissa.len()) as i32;
    let all: String = mantissa.chars().filter(|&c| c != '.').collect();
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0').to_owned();
    (digits, point - leading as i32 + exponent)
}

/// Ruby 3.1 `inspect`: `{"a"=>1, :sym=>2, 1=>"x", nil=>true}`,
/// `[1, 2.0, nil]`, Strings and Symbols with Ruby's escapes.
pub fn inspect(v: &Value) -> String {
    let mut out = String::new();
    inspect_into(v, &mut out);
    out
}

fn inspect_into(v: &Value, out: &mut String) {
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                inspect_into(item, out);
            }
            out.push(']');
        }
        Value::Hash(h) => {
            out.push('{');
            for (i, (k, item)) in h.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                inspect_into(k, out);
                out.push_str("=>");
                inspect_into(item, out);
            }
            out.push('}');
        }
        Value::String(s) => out.push_str(&inspect_str(s)),
        Value::Symbol(name) => out.push_str(&inspect_symbol(name)),
        Value::Nil => out.push_str("nil"),
        scalar => out.push_str(&to_s(scalar)),
    }
}

/// `to_s`, which string interpolation uses: nil → "", a String as it is, a
/// Symbol's name, numbers and booleans as Ruby prints them, an Array or a
/// Hash as its `inspect`.
pub fn to_s(v: &Value) -> String {
    match v {
        Value::Nil => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::BigInt(n) => n.to_string(),
        Value::Float(f) => float_to_s(*f),
        Value::String(s) | Value::Symbol(s) => s.clone(),
        Value::Array(_) | Value::Hash(_) => inspect(v),
    }
}

/// What `PP.pp(v, out, width)` writes, trailing newline included.
///
/// `width` is PrettyPrint's maximum line width. `pp v` (what the `hiera`
/// command calls) uses `PP.width_for($stdout)`: the terminal's columns - 1
/// on a terminal, else `$COLUMNS - 1` when COLUMNS holds a non-zero number,
/// else 79 — see [`pp_width`]. A width below zero prints like width 0.
pub fn pp(v: &Value, width: usize) -> String {
    let mut q = PrettyPrint::new(width);
    pp_object(&mut q, v);
    let mut out = q.finish();
    out.push('\n');
    out
}

/// The width `pp` uses when stdout is not a terminal, from the value of the
/// COLUMNS environment variable (`PP.width_for`: `COLUMNS.to_i`, when
/// non-zero, minus 1; else 79). Negative results are clamped to 0, which
/// `pp` prints identically.
pub fn pp_width(columns: Option<&str>) -> usize {
    let columns = columns.map(ruby_str_to_i).filter(|&n| n != 0).unwrap_or(80);
    usize::try_from(columns - 1).unwrap_or(0)
}

/// Ruby's `String#to_i` for the plain decimal case: leading whitespace, an
/// optional sign, then digits with single underscores between them.
fn ruby_str_to_i(s: &str) -> i64 {
    let s = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut n: i64 = 0;
    let mut last_underscore = false;
    for (i, b) in rest.bytes().enumerate() {
        match b {
            b'0'..=b'9' => {
                n = n.saturating_mul(10).saturating_add(i64::from(b - b'0'));
                last_underscore = false;
            }
            b'_' if i > 0 && !last_underscore => last_underscore = true,
            _ => break,
        }
    }
    if negative { -n } else { n }
}

/// The `hiera` command's ruby format: a String through `puts` (its text and a
/// newline unless it already ends with one), anything else through `pp` at
/// `width` (see [`pp`]).
pub fn cli_output(v: &Value, width: usize) -> String {
    match v {
        Value::String(s) => {
            let mut out = s.clone();
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out
        }
        _ => pp(v, width),
    }
}

/// `PP#pp`: every object gets its own group.
fn pp_object(q: &mut PrettyPrint, v: &Value) {
    q.group(0, "", "", |q| pretty_print(q, v));
}

/// The `pretty_print` methods of pp.rb for the classes a value can have.
fn pretty_print(q: &mut PrettyPrint, v: &Value) {
    match v {
        Value::Array(items) => q.group(1, "[", "]", |q| {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    comma_breakable(q);
                }
                pp_object(q, item);
            }
        }),
        Value::Hash(h) => q.group(1, "{", "}", |q| {
            for (i, (k, item)) in h.iter().enumerate() {
                if i > 0 {
                    comma_breakable(q);
                }
                q.group(0, "", "", |q| {
                    pp_object(q, k);
                    q.text("=>");
                    q.group(1, "", "", |q| {
                        q.breakable("");
                        pp_object(q, item);
                    });
                });
            }
        }),
        Value::String(s) => {
            let lines = ruby_lines(s);
            if lines.len() > 1 {
                // `"a\n" + "b"`: each line is pretty-printed on its own.
                q.group(0, "", "", |q| {
                    for (i, line) in lines.iter().enumerate() {
                        if i > 0 {
                            q.text(" +");
                            q.breakable(" ");
                        }
                        q.group(0, "", "", |q| q.text(&inspect_str(line)));
                    }
                });
            } else {
                q.text(&inspect_str(s));
            }
        }
        _ => q.text(&inspect(v)),
    }
}

fn comma_breakable(q: &mut PrettyPrint) {
    q.text(",");
    q.breakable(" ");
}

/// `String#lines`: pieces that each end after a "\n" (the last may not).
fn ruby_lines(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

/// `String#inspect` of a UTF-8 string.
pub(super) fn inspect_str(s: &str) -> String {
    inspect_encoded(s, false)
}

/// `Symbol#inspect`: `:name` when the name is a valid Ruby symbol literal
/// as it stands, else `:"..."` with String escapes.
fn inspect_symbol(name: &str) -> String {
    if is_plain_symbol(name) {
        format!(":{name}")
    } else {
        // An ASCII-only symbol is US-ASCII encoded in Ruby, which changes
        // how unprintable characters are escaped (`\x00`, not `\u0000`).
        format!(":{}", inspect_encoded(name, name.is_ascii()))
    }
}

/// `rb_str_inspect`; `us_ascii` selects the escapes of a US-ASCII string.
fn inspect_encoded(s: &str, us_ascii: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            // `#{`, `#$` and `#@` would interpolate inside a literal.
            '#' if matches!(chars.peek(), Some('$' | '@' | '{')) => out.push_str("\\#"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0c' => out.push_str("\\f"),
            '\x0b' => out.push_str("\\v"),
            '\x08' => out.push_str("\\b"),
            '\x07' => out.push_str("\\a"),
            '\x1b' => out.push_str("\\e"),
            c if printable(c, us_ascii) => out.push(c),
            c if us_ascii => out.push_str(&format!("\\x{:02X}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push_str(&format!("\\u{{{:X}}}", c as u32)),
        }
    }
    out.push('"');
    out
}

fn printable(c: char, us_ascii: bool) -> bool {
    if us_ascii {
        (' '..='~').contains(&c)
    } else {
        unicode::is_print(c)
    }
}

/// `rb_str_symname_p`: the name reads back as this symbol without quotes.
fn is_plain_symbol(name: &str) -> bool {
    !name.contains('\0')
        && symname_type(name.as_bytes()).is_some()
        && name.chars().all(|c| printable(c, false))
}

/// Ruby's identifier kinds, as far as symbol syntax needs them.
#[derive(Clone, Copy, PartialEq)]
enum IdType {
    Local,
    Instance,
    Global,
    AttrSet,
    Class,
    Junk,
}

/// `rb_enc_symname_type` with the attribute-setter rules of symbol
/// literals: which kind of name `name` is, or `None` if it needs quotes.
/// Bytes past the end read as NUL, like the C string it inspects.
fn symname_type(name: &[u8]) -> Option<IdType> {
    use IdType::*;
    let len = name.len();
    let at = |i: usize| name.get(i).copied().unwrap_or(0);
    if len == 0 {
        return None;
    }
    // (whether more identifier characters must follow, kind, bytes read)
    let (more, kind, read) = match name[0] {
        0 => return None,
        b'$' if is_special_global_name(&name[1..]) => (false, Global, len),
        b'$' => (true, Global, 1),
        b'@' if at(1) == b'@' => (true, Class, 2),
        b'@' => (true, Instance, 1),
        b'<' => match (at(1), at(2)) {
            (b'<', _) => (false, Junk, 2),
            (b'=', b'>') => (false, Junk, 3),
            (b'=', _) => (false, Junk, 2),
            _ => (false, Junk, 1),
        },
        b'>' => match at(1) {
            b'>' | b'=' => (false, Junk, 2),
            _ => (false, Junk, 1),
        },
        b'=' => match (at(1), at(2)) {
            (b'~', _) => (false, Junk, 2),
            (b'=', b'=') => (false, Junk, 3),
            (b'=', _) => (false, Junk, 2),
            _ => return None,
        },
        b'*' => (false, Junk, if at(1) == b'*' { 2 } else { 1 }),
        b'+' | b'-' => (false, Junk, if at(1) == b'@' { 2 } else { 1 }),
        b'|' | b'^' | b'&' | b'/' | b'%' | b'~' | b'`' => (false, Junk, 1),
        b'[' => match (at(1), at(2)) {
            (b']', b'=') => (false, Junk, 3),
            (b']', _) => (false, Junk, 2),
            _ => (true, Junk, 0),
        },
        b'!' => (
            false,
            Junk,
            if matches!(at(1), b'=' | b'~') { 2 } else { 1 },
        ),
        // Constants and locals are told apart by case in Ruby; both take
        // the same suffixes, so the difference does not matter here.
        _ => (true, Local, 0),
    };
    let mut m = read;
    let mut kind = kind;
    if more {
        let c = at(m);
        if m >= len || (c != b'_' && !c.is_ascii_alphabetic() && c.is_ascii()) {
            // "x=" where "x" is no identifier still reads as a setter name.
            if len > 1 && name[len - 1] == b'=' && symname_type(&name[..len - 1]) != Some(AttrSet) {
                return Some(AttrSet);
            }
            return None;
        }
        while m < len && is_identchar(name[m]) {
            m += 1;
        }
        if m < len {
            match name[m] {
                b'!' | b'?' => {
                    if matches!(kind, Global | Class | Instance) {
                        return None;
                    }
                    kind = Junk;
                    m += 1;
                    if m + 1 >= len && at(m) == b'=' {
                        // `a?=`: a setter is only allowed for locals and
                        // constants.
                        return None;
                    }
                }
                b'=' => {
                    if !matches!(kind, Local) {
                        return None;
                    }
                    kind = AttrSet;
                    m += 1;
                }
                _ => {}
            }
        }
    }
    (m == len).then_some(kind)
}

/// `is_special_global_name`: `$~`, `$0`, `$-w`, `$123` and the like.
fn is_special_global_name(name: &[u8]) -> bool {
    let Some(&first) = name.first() else {
        return false;
    };
    let mut m = 1;
    if b"~*$?!@/\\;,.=:<>\"&`'+0".contains(&first) {
        // a punctuation variable
    } else if first == b'-' {
        match name.get(1) {
            None => return false,
            Some(&c) if is_identchar(c) => m += utf8_len(c),
            Some(_) => {}
        }
    } else if first.is_ascii_digit() {
        while m < name.len() && name[m].is_ascii_digit() {
            m += 1;
        }
    } else {
        return false;
    }
    m == name.len()
}

fn is_identchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || !b.is_ascii()
}

/// Bytes in the UTF-8 sequence that starts with `lead`.
fn utf8_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    #[test]
    fn float_to_s_matches_ruby_forms() {
        let cases: &[(f64, &str)] = &[
            (1.5, "1.5"),
            (100.0, "100.0"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1e20, "1.0e+20"),
            (1e16, "1.0e+16"),
            (1e15, "1.0e+15"),
            (999999999999999.9, "999999999999999.9"),
            (1234567890123456.7, "1234567890123456.8"),
            (1234567890123456.0, "1.234567890123456e+15"),
            // Halfway between two shortest candidates: the even digit wins.
            (872379885051571.0 + 0.25, "872379885051571.2"),
            (0.0001, "0.0001"),
            (0.00001, "1.0e-05"),
            (1.5e-7, "1.5e-07"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5.0e-324"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
        ];
        for &(f, want) in cases {
            assert_eq!(float_to_s(f), want, "{f:?}");
        }
    }

    #[test]
    fn inspect_values() {
        let sym = |s: &str| Value::Symbol(s.into());
        let mut h = rhash! {"a" => 1};
        h.insert(sym("sym"), 2.into());
        h.insert(1.into(), "x".into());
        h.insert(Value::Nil, true.into());
        let cases: Vec<(Value, &str)> = vec![
            (Value::Hash(h), r#"{"a"=>1, :sym=>2, 1=>"x", nil=>true}"#),
            (
                Value::Array(vec![1.into(), Value::Float(2.0), Value::Nil]),
                "[1, 2.0, nil]",
            ),
            (Value::Array(vec![]), "[]"),
            (Value::Hash(rhash! {}), "{}"),
            ("a\nb\u{1b}\0".into(), r#""a\nb\e\u0000""#),
            ("#{x} #$y #@z #x".into(), r#""\#{x} \#$y \#@z #x""#),
            (
                "é\u{378}\u{7f}\u{10ffff}".into(),
                r#""é\u0378\u007F\u{10FFFF}""#,
            ),
            ("\"\\".into(), r#""\"\\""#),
            (sym("foo"), ":foo"),
            (sym("foo bar"), r#":"foo bar""#),
            (sym("9a"), r#":"9a""#),
            (sym("a?"), ":a?"),
            (sym("a?="), r#":"a?=""#),
            (sym("a="), ":a="),
            (sym("[]="), ":[]="),
            (sym("9 ="), ":9 ="),
            (sym("$-"), r#":"$-""#),
            (sym("$-w"), ":$-w"),
            (sym("@@a"), ":@@a"),
            (sym("@1"), r#":"@1""#),
            (sym(""), r#":"""#),
            (sym("a\0b"), r#":"a\x00b""#),
            (sym("é"), ":é"),
        ];
        for (v, want) in cases {
            assert_eq!(inspect(&v), want, "{v:?}");
        }
    }

    #[test]
    fn to_s_values() {
        let cases: Vec<(Value, &str)> = vec![
            (Value::Nil, ""),
            ("raw\n".into(), "raw\n"),
            (Value::Symbol("s".into()), "s"),
            (Value::Float(1e20), "1.0e+20"),
            (false.into(), "false"),
            (Value::Hash(rhash! {"k" => "v"}), r#"{"k"=>"v"}"#),
        ];
        for (v, want) in cases {
            assert_eq!(to_s(&v), want, "{v:?}");
        }
    }

    #[test]
    fn pp_breaks_at_width() {
        let long = Value::Hash(rhash! {
            "alpha" => "a".repeat(30),
            "beta" => Value::Array(vec![1.into(), 2.into()]),
            "gamma" => "x\ny",
        });
        let cases: Vec<(Value, usize, &str)> = vec![
            (Value::Nil, 79, "nil\n"),
            ("a\nb".into(), 79, "\"a\\n\" + \"b\"\n"),
            ("a\nb".into(), 3, "\"a\\n\" +\n\"b\"\n"),
            (
                long.clone(),
                79,
                "{\"alpha\"=>\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\n \"beta\"=>[1, 2],\n \"gamma\"=>\"x\\n\" + \"y\"}\n",
            ),
            (
                long,
                10,
                "{\"alpha\"=>\n  \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\n \"beta\"=>\n  [1, 2],\n \"gamma\"=>\n  \"x\\n\" +\n  \"y\"}\n",
            ),
        ];
        for (v, width, want) in cases {
            assert_eq!(pp(&v, width), want, "{v:?} at {width}");
        }
    }

    #[test]
    fn cli_output_puts_strings() {
        let cases: Vec<(Value, &str)> = vec![
            ("".into(), "\n"),
            ("a".into(), "a\n"),
            ("a\n".into(), "a\n"),
            (Value::Array(vec!["a".into()]), "[\"a\"]\n"),
            (Value::Float(1.5), "1.5\n"),
        ];
        for (v, want) in cases {
            assert_eq!(cli_output(&v, 79), want, "{v:?}");
        }
    }

    #[test]
    fn pp_width_from_columns() {
        let cases: &[(Option<&str>, usize)] = &[
            (None, 79),
            (Some("120"), 119),
            (Some("0"), 79),
            (Some("abc"), 79),
            (Some(" 40x"), 39),
            (Some("1_00"), 99),
            (Some("-5"), 0),
        ];
        for &(columns, want) in cases {
            assert_eq!(pp_width(columns), want, "{columns:?}");
        }
    }
}
