//! `to_yaml` as Psych 4.0.3 (Ruby 3.1) writes it, and the `hiera` command's
//! yaml output format. No I/O.
//!
//! Psych's `YAMLTree` turns the value into emitter events and picks a style
//! for each String so that it loads back as a String: literal `|` for text
//! with inner line breaks, double quotes for `y`/`n` and for text with a
//! line starting with a non-word character, single quotes for text its own
//! `ScalarScanner` would read as something else (`'true'`, `'1:30'`,
//! `'2001-01-01'`, `''`). libyaml (module `libyaml`) then makes the
//! final choice, quoting what plain style cannot hold and folding long lines.
//!
//! One difference cannot arise from a tree: Psych writes `&1`/`*1` anchors
//! when the very same Array or Hash object appears twice (never for equal
//! but distinct objects, nor for Strings). Hiera answers built from YAML
//! data hold distinct objects, so a [`Value`] always prints without them.

use super::libyaml::{self, Node, Scalar, Style};
use super::{ruby, unicode};
use crate::hiera::{ErrorClass, HieraError, Result, Value};
use regex::Regex;
use std::sync::LazyLock;

/// `v.to_yaml`.
///
/// # Errors
///
/// Ruby raises, and so does this, for a few Strings that Psych's scalar
/// scanner chokes on while deciding how to quote them: `ArgumentError`
/// (`invalid value for Integer(): "0b"`) for `0b_`, `0x_` and the like, and
/// `NoMethodError` for timestamps whose date and time are separated by a
/// tab rather than a space or `T`.
pub fn to_yaml(v: &Value) -> Result<String> {
    Ok(libyaml::emit_document(&node(v)?))
}

/// The `hiera` command's yaml format: `puts v.to_yaml` (which already ends
/// with a newline).
///
/// # Errors
///
/// As [`to_yaml`].
pub fn cli_output(v: &Value) -> Result<String> {
    to_yaml(v)
}

/// `YAMLTree#accept` for the classes a value can have.
fn node(v: &Value) -> Result<Node> {
    Ok(match v {
        Value::Nil => Node::Scalar(Scalar {
            value: String::new(),
            tag: Some("tag:yaml.org,2002:null"),
            plain_implicit: true,
            quoted_implicit: false,
            style: Style::Any,
        }),
        Value::Bool(b) => implicit_plain(b.to_string()),
        Value::Int(n) => implicit_plain(n.to_string()),
        Value::BigInt(n) => implicit_plain(n.to_string()),
        Value::Float(f) if f.is_nan() => implicit_plain(".nan".to_owned()),
        Value::Float(f) if f.is_infinite() => {
            implicit_plain(if *f > 0.0 { ".inf" } else { "-.inf" }.to_owned())
        }
        Value::Float(f) => implicit_plain(ruby::float_to_s(*f)),
        Value::Symbol(name) if name.is_empty() => Node::Scalar(Scalar {
            value: String::new(),
            tag: Some("!ruby/symbol"),
            plain_implicit: false,
            quoted_implicit: false,
            style: Style::Any,
        }),
        Value::Symbol(name) => implicit_plain(format!(":{name}")),
        Value::String(s) => Node::Scalar(string_scalar(s)?),
        Value::Array(items) => Node::Sequence(items.iter().map(node).collect::<Result<_>>()?),
        Value::Hash(h) => Node::Mapping(
            h.iter()
                .map(|(k, item)| Ok((node(k)?, node(item)?)))
                .collect::<Result<_>>()?,
        ),
    })
}

/// A scalar Psych marks plain-implicit only (numbers, booleans, symbols):
/// if libyaml has to quote it, it gets the `!` tag.
fn implicit_plain(value: String) -> Node {
    Node::Scalar(Scalar {
        value,
        tag: None,
        plain_implicit: true,
        quoted_implicit: false,
        style: Style::Any,
    })
}

/// `YAMLTree#visit_String` for a UTF-8 String.
fn string_scalar(s: &str) -> Result<Scalar> {
    let mut scalar = Scalar {
        value: s.to_owned(),
        tag: None,
        plain_implicit: true,
        quoted_implicit: true,
        style: Style::Plain,
    };
    scalar.style = if has_inner_newline(s) {
        Style::Literal
    } else if s == "<<" {
        scalar.tag = Some("tag:yaml.org,2002:str");
        scalar.plain_implicit = false;
        scalar.quoted_implicit = false;
        Style::SingleQuoted
    } else if s == "y" || s == "n" || has_line_starting_with_non_word(s) {
        Style::DoubleQuoted
    } else if !tokenizes_as_string(s)? || OCTAL_LOOKALIKE.is_match(s) {
        Style::SingleQuoted
    } else {
        Style::Plain
    };
    Ok(scalar)
}

/// `s =~ /\n(?!\Z)/`: a line break that is not the last character, nor
/// the next-to-last one before a final "\n".
fn has_inner_newline(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c == b'\n' && {
            let next = i + 1;
            !(next == b.len() || (next == b.len() - 1 && b[next] == b'\n'))
        }
    })
}

/// The starts of Ruby's lines for `^`: the text's start and every position
/// after a "\n" except the very end.
fn line_starts(s: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0)
        .chain(s.match_indices('\n').map(|(i, _)| i + 1))
        .filter(move |&i| i < s.len())
}

/// `s =~ /^[^[:word:]][^"]*$/`: some line starts with a non-word character
/// (a line break included) and has no `"` before the line ends.
fn has_line_starting_with_non_word(s: &str) -> bool {
    line_starts(s).any(|start| {
        let mut chars = s[start..].chars();
        match chars.next() {
            Some(c) if !unicode::is_word(c) => {
                // `[^"]*` may run over line breaks, so the first "\n" or
                // the end reached before any `"` completes the match.
                chars.find(|&c| c == '"' || c == '\n') != Some('"')
            }
            _ => false,
        }
    })
}

static OCTAL_LOOKALIKE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\A0[0-7]*[89]").unwrap());

/// Regexes of Psych's `ScalarScanner#tokenize`, applied only to text
/// without line breaks, where Ruby's `^`/`$` mean the text's ends. `\d` and
/// `\s` are ASCII in Ruby.
static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^-?[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t\x0b\x0c\r]+)[0-9]{1,2}:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t\x0b\x0c\r]*(?:Z|[-+][0-9]{1,2}:?(?:[0-9][0-9])?))?$",
    )
    .unwrap()
});
static DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([0-9]{4})-(1[012]|0[0-9]|[0-9])-([12][0-9]|3[01]|0[0-9]|[0-9])$").unwrap()
});
static INF_NAN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^(?:\+?\.inf|-\.inf|\.nan)$").unwrap());
static SEXAGESIMAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9]){1,2}(?:\.[0-9_]*)?$").unwrap()
});
static FLOAT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[-+]?(?:[0-9][0-9_,]*)?\.[0-9]*(?:[eE][-+][0-9]+)?$").unwrap());
static INTEGER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[-+]?0b[0-1_,]+|[-+]?0[0-7_,]+|[-+]?(?:0|[1-9](?:[0-9]|,[0-9]|_[0-9])*)|[-+]?0x[0-9a-fA-F_,]+)$",
    )
    .unwrap()
});

/// Whether `ScalarScanner#tokenize(s)` returns `s` itself (a String) rather
/// than nil, a boolean, a number, a Symbol, a Date or a Time.
fn tokenizes_as_string(s: &str) -> Result<bool> {
    if s.is_empty() {
        return Ok(false);
    }
    if s.contains('\n') || starts_word_like(s) {
        return Ok(!is_null_or_bool(s));
    }
    if TIME.is_match(s) {
        return Ok(!time_is_valid(s)?);
    }
    if let Some(c) = DATE.captures(s) {
        let num = |i: usize| c[i].parse::<u32>().expect("digits");
        return Ok(!date_is_valid(num(1), num(2), num(3)));
    }
    if INF_NAN.is_match(s) || (s.starts_with(':') && s.chars().count() > 1) {
        return Ok(false);
    }
    if SEXAGESIMAL.is_match(s) {
        return Ok(false);
    }
    if FLOAT.is_match(s) {
        // A lone "." (with a sign or not) stays a String.
        return Ok(matches!(s, "." | "+." | "-."));
    }
    if INTEGER.is_match(s) {
        parse_int(s)?;
        return Ok(false);
    }
    Ok(true)
}

/// The first test of `tokenize`, `/^[^\d.:-]?[[:alpha:]_\s!@#$%\^&*(){}<>|/\\~;=]+/`,
/// for text without line breaks. Its outcome only matters through the null
/// and boolean checks it leads to, which can only succeed for text starting
/// with one of `ytonf~` (text the regex always matches). For other text it
/// makes no difference whether it matches: the later patterns all need a
/// sign, a digit, `.` or `:` first, where the regex cannot match.
fn starts_word_like(s: &str) -> bool {
    matches!(
        s.as_bytes()[0],
        b'y' | b't' | b'o' | b'n' | b'f' | b'Y' | b'T' | b'O' | b'N' | b'F' | b'~'
    )
}

/// The rest of that branch: text of at most 5 characters is nil, true or
/// false when every line starts with one of `ytonf~` (any case) and the
/// text is `~` or one of its lines is a null or boolean word (any case).
fn is_null_or_bool(s: &str) -> bool {
    if s.chars().count() > 5 {
        return false;
    }
    let starts_ok = line_starts(s).all(|i| {
        matches!(
            s.as_bytes()[i].to_ascii_lowercase(),
            b'y' | b't' | b'o' | b'n' | b'f' | b'~'
        )
    });
    if !starts_ok {
        return false;
    }
    if s == "~" {
        return true;
    }
    // `$` also matches before a line break, so every line is a candidate.
    s.split('\n').any(|line| {
        let folded = fold_case(line);
        matches!(
            folded.as_str(),
            "null" | "yes" | "true" | "on" | "no" | "false" | "off"
        )
    })
}

/// Ruby's case-insensitive matching as far as the null and boolean words
/// need it: ASCII letters, plus the two characters whose case folding
/// yields their letters (`ſ` is "s", `ﬀ` is "ff").
fn fold_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\u{17f}' => out.push('s'),
            '\u{fb00}' => out.push_str("ff"),
            c => out.push(c.to_ascii_lowercase()),
        }
    }
    out
}

/// `parse_int`: `Integer()` of the text without `,` and `_`, which fails
/// when a `0b`/`0x` prefix has no digits after it.
fn parse_int(s: &str) -> Result<()> {
    let cleaned: String = s.chars().filter(|&c| c != ',' && c != '_').collect();
    let unsigned = cleaned.trim_start_matches(['+', '-']);
    if unsigned == "0b" || unsigned == "0x" {
        return Err(HieraError::new(
            ErrorClass::ArgumentError,
            format!(
                "invalid value for Integer(): {}",
                ruby::inspect_str(&cleaned)
            ),
        ));
    }
    Ok(())
}

/// `Date.strptime(s, '%Y-%m-%d')` succeeds: a real day of Ruby's default
/// calendar, Julian before 15 October 1582 and Gregorian from then on (the
/// ten days between do not exist).
fn date_is_valid(year: u32, month: u32, day: u32) -> bool {
    if !(1..=12).contains(&month) || day == 0 {
        return false;
    }
    let gregorian = (year, month, day) >= (1582, 10, 15);
    if (year, month) == (1582, 10) && (5..15).contains(&day) {
        return false;
    }
    let leap = if gregorian {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    } else {
        year % 4 == 0
    };
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    day <= days
}

static TIME_PART: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"([0-9]+:[0-9]+:[0-9]+)(?:\.([0-9]*))?[ \t\n\x0b\x0c\r]*(Z|[-+][0-9]+(:[0-9][0-9])?)?",
    )
    .unwrap()
});
static DATE_PART: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(-?[0-9]{4})-([0-9]{1,2})-([0-9]{1,2})").unwrap());
static ZONE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([+\-]?[0-9]{1,2}):?([0-9]{1,2})?$").unwrap());

/// `ScalarScanner#parse_time` succeeds, for text that matched TIME: Ruby's
/// `Time.utc`/`Time.new` accept the fields (an invalid time is an
/// `ArgumentError`, which `tokenize` turns into "a String").
///
/// # Errors
///
/// `NoMethodError` where Ruby's parse_time itself fails: the date and time
/// are split at the first space, `t` or `T`, and a tab separator leaves no
/// time part, or a time part without the time.
fn time_is_valid(s: &str) -> Result<bool> {
    let Some(split) = s.find([' ', 't', 'T']) else {
        return Err(no_method("match"));
    };
    let (date, time) = (&s[..split], &s[split + 1..]);
    let Some(md) = TIME_PART.captures(time) else {
        return Err(no_method("[]"));
    };
    let dm = DATE_PART.captures(date).expect("TIME matched");
    let field = |text: &str| text.parse::<u64>().unwrap_or(u64::MAX);
    let year: i64 = dm[1].parse().expect("four digits");
    let (mut month, mut day) = (field(&dm[2]), field(&dm[3]));
    let hms: Vec<u64> = md[1].split(':').map(field).collect();
    let (hour, min, sec) = (hms[0], hms[1], hms[2]);
    // Time's argument checks: bit widths first, then ranges after moving
    // days past a short month's end into the next month.
    if month > 15 || day > 31 || hour > 31 || min > 63 || sec > 63 {
        return Ok(false);
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 => {
            let last = if leap { 29 } else { 28 };
            if day > last {
                day -= last;
                month += 1;
            }
        }
        4 | 6 | 9 | 11 if day == 31 => {
            month += 1;
            day = 1;
        }
        _ => {}
    }
    let (last_min, last_sec) = if hour == 24 { (0, 0) } else { (59, 60) };
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 24
        || min > last_min
        || sec > last_sec
    {
        return Ok(false);
    }
    match md.get(3).map(|m| m.as_str()) {
        None | Some("Z") => Ok(true),
        Some(zone) => {
            let Some(z) = ZONE.captures(zone) else {
                return Err(no_method("[]"));
            };
            // Hours and minutes add up away from zero; the offset must stay
            // within a day.
            let hours: i64 = z[1].parse().expect("digits");
            let minutes: i64 = z.get(2).map_or(0, |m| m.as_str().parse().expect("digits"));
            Ok(hours.abs() * 3600 + minutes * 60 < 86400)
        }
    }
}

fn no_method(method: &str) -> HieraError {
    HieraError::new(
        ErrorClass::NoMethodError,
        format!("undefined method `{method}' for nil:NilClass"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    #[test]
    fn scalars() {
        let cases: Vec<(Value, &str)> = vec![
            (Value::Nil, "---\n"),
            ("a".into(), "--- a\n"),
            ("".into(), "--- ''\n"),
            ("true".into(), "--- 'true'\n"),
            ("123".into(), "--- '123'\n"),
            ("1:30".into(), "--- '1:30'\n"),
            ("019".into(), "--- '019'\n"),
            ("y".into(), "--- \"y\"\n"),
            ("Y".into(), "--- Y\n"),
            ("-a".into(), "--- \"-a\"\n"),
            ("/etc/x".into(), "--- \"/etc/x\"\n"),
            ("a: b".into(), "--- 'a: b'\n"),
            ("a ".into(), "--- 'a '\n"),
            ("a\tb".into(), "--- \"a\\tb\"\n"),
            ("<<".into(), "--- !!str '<<'\n"),
            ("a\nb".into(), "--- |-\n  a\n  b\n"),
            ("a\n".into(), "--- 'a\n\n  '\n"),
            ("a\n\n\n".into(), "--- |+\n  a\n\n\n...\n"),
            ("2001-02-29".into(), "--- 2001-02-29\n"),
            ("2000-02-29".into(), "--- '2000-02-29'\n"),
            ("1e3".into(), "--- 1e3\n"),
            ("yeſ".into(), "--- 'yeſ'\n"),
            (Value::Symbol("s".into()), "--- :s\n"),
            (Value::Symbol("".into()), "--- !ruby/symbol\n"),
            (Value::Float(f64::INFINITY), "--- .inf\n"),
            (Value::Float(1e20), "--- 1.0e+20\n"),
            (1.into(), "--- 1\n"),
        ];
        for (v, want) in cases {
            assert_eq!(to_yaml(&v).unwrap(), want, "{v:?}");
        }
    }

    #[test]
    fn collections() {
        let mut keys = rhash! {"k" => Value::Nil};
        keys.insert(Value::Nil, 1.into());
        keys.insert(Value::Array(vec![1.into()]), 2.into());
        keys.insert(Value::Array(vec![]), Value::Hash(rhash! {}));
        let cases: Vec<(Value, &str)> = vec![
            (Value::Array(vec![]), "--- []\n"),
            (Value::Array(vec![Value::Nil]), "---\n-\n"),
            (
                Value::Hash(rhash! {"a" => Value::Array(vec!["x".into()])}),
                "---\na:\n- x\n",
            ),
            (Value::Hash(keys), "---\nk:\n! '': 1\n? - 1\n: 2\n[]: {}\n"),
        ];
        for (v, want) in cases {
            assert_eq!(to_yaml(&v).unwrap(), want, "{v:?}");
        }
    }

    #[test]
    fn scanner_failures_raise_like_ruby() {
        let cases: &[(&str, ErrorClass, &str)] = &[
            (
                "0b_",
                ErrorClass::ArgumentError,
                "invalid value for Integer(): \"0b\"",
            ),
            (
                "0x,",
                ErrorClass::ArgumentError,
                "invalid value for Integer(): \"0x\"",
            ),
            (
                "2001-12-14\t21:59:43",
                ErrorClass::NoMethodError,
                "undefined method `match' for nil:NilClass",
            ),
            (
                "2001-12-14\t21:59:43 Z",
                ErrorClass::NoMethodError,
                "undefined method `[]' for nil:NilClass",
            ),
        ];
        for &(s, class, message) in cases {
            let err = to_yaml(&s.into()).unwrap_err();
            assert_eq!((err.class, err.message.as_str()), (class, message), "{s:?}");
        }
    }
}
