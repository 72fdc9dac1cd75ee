//! Differential test of `hiera::render` against the real Ruby 3.1: a corpus
//! of values (hand-written edge cases, seeded random nested values and every
//! top-level value of the Fuel fixtures) is rendered by Ruby
//! (`tests/support/render.rb`, one process) and by the Rust renderers, and
//! every format must agree byte for byte: `inspect`, `to_s`, `PP.pp` at
//! several widths, `JSON.dump`, `to_yaml`, and the `hiera` command's output
//! in each format. Ruby's answers are produced at test time.

use crate::tagged;

use hierad::hiera::render::{json, ruby, unicode, yaml};
use hierad::hiera::{Hash, Value};
use num_bigint::BigInt;
use serde_json::{Value as Json, json};
use std::io::Write;
use std::process::Stdio;

/// The `pp` widths every value is printed at (79 is `pp`'s default).
const WIDTHS: &[usize] = &[79, 40, 10, 200, 0, 1, 25];
/// The widths the `hiera` command's ruby format is checked at, through
/// COLUMNS (Ruby's pp is slow: the command is checked at fewer widths).
const CLI_WIDTHS: &[usize] = &[79, 10, 0];
/// Both, for the Fuel fixture values.
const FIXTURE_WIDTHS: &[usize] = &[79, 40, 10];

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fuel");

#[test]
fn renderers_match_ruby() {
    let values = corpus();
    assert!(values.len() >= 200, "corpus has {} values", values.len());
    let floats = float_corpus();
    let fixtures = fixture_files();
    let input = json!({
        "values": values.iter().map(tagged::encode).collect::<Vec<_>>(),
        "widths": WIDTHS,
        "cli_widths": CLI_WIDTHS,
        "floats": floats.iter().map(|f| f.to_bits().to_string()).collect::<Vec<_>>(),
        "fixtures": fixtures,
        "fixture_widths": FIXTURE_WIDTHS,
    });
    let started = std::time::Instant::now();
    let out = run_ruby(&input);
    let ruby_time = started.elapsed();

    let mut report = Report::default();
    check_unicode(&out["unicode"], &mut report);

    let results = out["values"].as_array().expect("values");
    assert_eq!(results.len(), values.len());
    for (i, (v, expected)) in values.iter().zip(results).enumerate() {
        let label = format!("value #{i} {}", short(v));
        compare(&label, v, expected, WIDTHS, CLI_WIDTHS, &mut report);
    }

    let ruby_floats = out["floats"].as_array().expect("floats");
    for (f, expected) in floats.iter().zip(ruby_floats) {
        report.check(
            &format!("Float#to_s of {f:e} (bits {:#x})", f.to_bits()),
            expected.as_str().expect("text"),
            &ruby::float_to_s(*f),
        );
    }

    let fixture_results = out["fixtures"].as_array().expect("fixtures");
    assert!(
        fixture_results.len() > 100,
        "only {} fixture values",
        fixture_results.len()
    );
    for entry in fixture_results {
        let label = format!("fixture {} key {:?}", entry["file"], entry["key"]);
        match tagged::decode(&entry["value"]) {
            Ok(v) => compare(
                &label,
                &v,
                &entry["result"],
                FIXTURE_WIDTHS,
                FIXTURE_WIDTHS,
                &mut report,
            ),
            Err(class) => report.fail(&label, &format!("holds a {class}, outside the value model")),
        }
    }

    println!(
        "{} values, {} floats, {} fixture values, {} comparisons (ruby {:.1?}, total {:.1?})",
        values.len(),
        floats.len(),
        fixture_results.len(),
        report.checks,
        ruby_time,
        started.elapsed()
    );
    report.finish();
}

/// The real `hiera` command prints answers as the `cli_output` functions
/// do: a data file (written by our own `to_yaml`, which Psych must read back
/// to the same values) is looked up through `/usr/bin/hiera` in every
/// format, with COLUMNS unset and set.
#[test]
fn hiera_command_prints_like_cli_output() {
    let long = "word ".repeat(20);
    let answers = vec![
        (
            "nested",
            hash(vec![
                (
                    s("list"),
                    arr(vec![s("one"), s(&long), Value::Nil, Value::Float(2.5)]),
                ),
                (Value::Int(1), Value::Bool(true)),
                (Value::Nil, s("nil key")),
                (s("text"), s("line one\nline two\n")),
                (
                    s("quoted"),
                    arr(vec![s("true"), s("1:30"), s("-a"), s("it's"), s("")]),
                ),
                (s("big"), big("123456789012345678901234567890")),
                (s("float"), Value::Float(1e20)),
                (
                    s("deep"),
                    hash(vec![(s("a"), hash(vec![(s("b"), arr(vec![]))]))]),
                ),
            ]),
        ),
        ("text", s("line one\nline two")),
        ("float", Value::Float(-0.0)),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let config = dir.path().join("hiera.yaml");
    std::fs::write(
        &config,
        format!(
            ":backends:\n  - yaml\n:yaml:\n  :datadir: {}\n:hierarchy:\n  - common\n:logger: noop\n",
            data.display()
        ),
    )
    .expect("config");
    let file = hash(answers.iter().map(|(k, v)| (s(k), v.clone())).collect());
    std::fs::write(
        data.join("common.yaml"),
        yaml::to_yaml(&file).expect("yaml"),
    )
    .expect("data");

    let mut report = Report::default();
    for (key, v) in &answers {
        for (format, columns) in [
            ("ruby", None),
            ("ruby", Some("31")),
            ("json", None),
            ("yaml", None),
        ] {
            let mut command = crate::tools::command("hiera");
            command.args(["-c", &config.display().to_string(), "-f", format, key]);
            command.env("LANG", "C.UTF-8").env("LC_ALL", "C.UTF-8");
            match columns {
                Some(c) => command.env("COLUMNS", c),
                None => command.env_remove("COLUMNS"),
            };
            let output = command.output().expect("hiera runs");
            assert!(
                output.status.success(),
                "hiera {key} -f {format}: {output:?}"
            );
            let ours = match format {
                "ruby" => ruby::cli_output(v, ruby::pp_width(columns)),
                "json" => json::cli_output(v),
                _ => yaml::cli_output(v).expect("yaml"),
            };
            report.check(
                &format!("hiera -f {format} {key} (COLUMNS={columns:?})"),
                &String::from_utf8(output.stdout).expect("UTF-8"),
                &ours,
            );
        }
    }
    report.finish();
}

/// Runs render.rb once with everything to render.
fn run_ruby(input: &Json) -> Json {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/render.rb");
    let mut child = crate::tools::command("ruby")
        .arg(script)
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8")
        .env_remove("COLUMNS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("ruby runs");
    let text = input.to_string();
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let output = child.wait_with_output().expect("ruby output");
    writer.join().expect("writer").expect("write to ruby");
    assert!(
        output.status.success(),
        "render.rb failed: {}",
        output.status
    );
    serde_json::from_slice(&output.stdout).expect("render.rb writes JSON")
}

/// Compares every format of one value with Ruby's `result`, printed by pp
/// at `widths` and by the command at `cli_widths`.
fn compare(
    label: &str,
    v: &Value,
    result: &Json,
    widths: &[usize],
    cli_widths: &[usize],
    report: &mut Report,
) {
    let text = |key: &str| {
        result[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key}"))
            .to_owned()
    };
    report.check(
        &format!("{label}: inspect"),
        &text("inspect"),
        &ruby::inspect(v),
    );
    report.check(&format!("{label}: to_s"), &text("to_s"), &ruby::to_s(v));
    report.check(
        &format!("{label}: JSON.dump"),
        &text("json"),
        &json::dump(v),
    );
    report.check(
        &format!("{label}: cli json"),
        &text("cli_json"),
        &json::cli_output(v),
    );
    for (i, &width) in widths.iter().enumerate() {
        report.check(
            &format!("{label}: PP.pp width {width}"),
            result["pp"][i].as_str().expect("pp"),
            &ruby::pp(v, width),
        );
    }
    for (i, &width) in cli_widths.iter().enumerate() {
        report.check(
            &format!("{label}: cli ruby, COLUMNS={}", width + 1),
            result["cli_ruby"][i].as_str().expect("cli"),
            &ruby::cli_output(v, ruby::pp_width(Some(&(width + 1).to_string()))),
        );
    }
    for (key, ours) in [
        ("yaml", yaml::to_yaml(v)),
        ("cli_yaml", yaml::cli_output(v)),
    ] {
        let expected = match (&result[key]["ok"], &result[key]["error"]) {
            (Json::String(s), _) => s.clone(),
            (_, Json::Array(e)) => format!(
                "raises {}: {}",
                e[0].as_str().expect("class"),
                e[1].as_str().expect("message")
            ),
            other => panic!("bad {key} result {other:?}"),
        };
        let actual = match ours {
            Ok(s) => s,
            Err(e) => format!("raises {}: {}", e.class.ruby_name(), e.message),
        };
        report.check(&format!("{label}: {key}"), &expected, &actual);
    }
}

/// The Unicode tables against the installed Ruby, for every code point.
fn check_unicode(tables: &Json, report: &mut Report) {
    for (name, class) in [
        ("print", unicode::is_print as fn(char) -> bool),
        ("word", unicode::is_word),
    ] {
        let ruby_ranges: Vec<(u32, u32)> = tables[name]
            .as_array()
            .expect("ranges")
            .iter()
            .map(|r| (r[0].as_u64().unwrap() as u32, r[1].as_u64().unwrap() as u32))
            .collect();
        let mut ours: Vec<(u32, u32)> = Vec::new();
        for c in (0..=0x10ffff)
            .filter_map(char::from_u32)
            .filter(|&c| class(c))
        {
            let c = c as u32;
            match ours.last_mut() {
                Some(last) if last.1 + 1 == c || (last.1 == 0xd7ff && c == 0xe000) => last.1 = c,
                _ => ours.push((c, c)),
            }
        }
        report.check(
            &format!("unicode class {name}"),
            &format!("{ruby_ranges:x?}"),
            &format!("{ours:x?}"),
        );
    }
}

/// Collects mismatches and shows each with a line diff.
#[derive(Default)]
struct Report {
    checks: usize,
    failures: Vec<String>,
}

impl Report {
    fn check(&mut self, label: &str, expected: &str, actual: &str) {
        self.checks += 1;
        if expected != actual {
            self.failures
                .push(format!("{label}\n{}", diff(expected, actual)));
        }
    }

    fn fail(&mut self, label: &str, why: &str) {
        self.checks += 1;
        self.failures.push(format!("{label}: {why}"));
    }

    fn finish(self) {
        if self.failures.is_empty() {
            return;
        }
        let shown: Vec<&String> = self.failures.iter().take(40).collect();
        panic!(
            "{} of {} comparisons differ from Ruby (first {} shown):\n\n{}",
            self.failures.len(),
            self.checks,
            shown.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n\n")
        );
    }
}

/// The first differing line with two lines of context, `-` Ruby, `+` ours;
/// long lines are cut to a window around the first differing character.
fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.split_inclusive('\n').collect();
    let a: Vec<&str> = actual.split_inclusive('\n').collect();
    let first = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let from = first.saturating_sub(2);
    let (el, al) = (
        e.get(first).copied().unwrap_or(""),
        a.get(first).copied().unwrap_or(""),
    );
    let column = el
        .chars()
        .zip(al.chars())
        .take_while(|(x, y)| x == y)
        .count();
    let window = |line: &str| -> String {
        let start = column.saturating_sub(40);
        let cut: String = line.chars().skip(start).take(80).collect();
        if start > 0 || line.chars().count() > start + 80 {
            format!("…{cut:?}…")
        } else {
            format!("{cut:?}")
        }
    };
    let mut out = String::new();
    for line in &e[from..first] {
        out.push_str(&format!("    {}\n", window(line)));
    }
    for line in e.iter().skip(first).take(3) {
        out.push_str(&format!("  - {}  (ruby)\n", window(line)));
    }
    for line in a.iter().skip(first).take(3) {
        out.push_str(&format!("  + {}  (ours)\n", window(line)));
    }
    out.push_str(&format!(
        "  (line {}, character {}; ruby {} lines, ours {} lines)",
        first + 1,
        column + 1,
        e.len(),
        a.len()
    ));
    out
}

fn short(v: &Value) -> String {
    let text = ruby::inspect(v);
    if text.chars().count() > 70 {
        format!("{}…", text.chars().take(70).collect::<String>())
    } else {
        text
    }
}

fn fixture_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(FIXTURES)
        .expect("Fuel fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    files
}

// ---------------------------------------------------------------- corpus

fn s(text: &str) -> Value {
    Value::String(text.to_owned())
}

fn sym(name: &str) -> Value {
    Value::Symbol(name.to_owned())
}

fn arr(items: Vec<Value>) -> Value {
    Value::Array(items)
}

fn hash(pairs: Vec<(Value, Value)>) -> Value {
    Value::Hash(pairs.into_iter().collect::<Hash>())
}

fn big(text: &str) -> Value {
    Value::integer(text.parse::<BigInt>().expect("integer"))
}

/// Strings that exercise a rule of some renderer: Ruby's escapes, Psych's
/// and libyaml's quoting, JSON escapes, pp's line splitting.
const NASTY: &[&str] = &[
    "",
    " ",
    "a",
    "plain text",
    "y",
    "n",
    "Y",
    "N",
    "yes",
    "No",
    "ON",
    "off",
    "true",
    "False",
    "null",
    "NULL",
    "~",
    "nULL",
    "yeſ",
    "oﬀ",
    "ﬀ",
    "tru",
    "<<",
    "=",
    "123",
    "-123",
    "+1",
    "0",
    "00",
    "019",
    "0o7",
    "0x1F",
    "0b101",
    "1_000",
    "1,000",
    "1.5",
    "1.",
    ".5",
    "1e3",
    "1.0e+3",
    "1.5e3",
    ".inf",
    "-.Inf",
    ".NaN",
    ".",
    "1:30",
    "-1:30:00",
    "1:30.5",
    "1:60",
    "2001-01-01",
    "2001-02-29",
    "2000-02-29",
    "1582-10-10",
    "1500-02-29",
    "2001-13-01",
    "2001-12-14 21:59:43",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14T21:59:43Z",
    "2001-02-30 10:00:00 +01",
    "2001-12-14 24:00:01",
    "2001-12-14 10:00:00 +24",
    ":sym",
    ":",
    "::",
    "a: b",
    "a:b",
    "a :b",
    "key:",
    "http://example.com/a?b=c#d",
    "a #b",
    "a#b",
    "#comment",
    "- a",
    "-a",
    "-",
    "--",
    "---",
    "--- a",
    "...",
    "? a",
    "?a",
    "*a",
    "&a",
    "!a",
    "%a",
    "@a",
    "`a",
    "|a",
    ">a",
    "'quoted'",
    "\"dq\"",
    "it's",
    "say \"hi\"",
    "a\"b",
    "-\"a\"",
    "[a, b]",
    "{a: b}",
    "a, b",
    "a]b",
    "/etc/hosts",
    "C:\\path",
    "\\",
    " leading",
    "trailing ",
    "two  spaces",
    "tab\there",
    "\t",
    "a\n",
    "a\n\n",
    "a\n\n\n",
    "\n",
    "\n\n",
    "a\nb",
    "a\nb\n",
    "a\nb\n\n",
    " a\nb",
    "a \nb",
    "a\n b",
    "\na",
    "a\r\nb",
    "a\rb",
    "#{x}",
    "#$x #@y #z",
    "\u{0}",
    "a\u{0}b",
    "\u{7}\u{8}\u{b}\u{c}\u{1b}\u{1f}\u{7f}",
    "é",
    "naïve café",
    "中文",
    "😀",
    "a😀b",
    "\u{85}",
    "\u{a0}",
    "a\u{2028}b",
    "a\u{2029}",
    "\u{feff}bom",
    "\u{200b}",
    "\u{378}",
    "\u{e000}",
    "\u{fffd}",
    "\u{fffe}",
    "\u{10ffff}",
    "e\u{301}",
    "\u{301}e",
    "٣",
    "_x",
    "ÿ",
    "%{hiera('x')}",
    "Ñ: x",
];

/// Strings whose `to_yaml` raises in Ruby (Psych's scanner fails on them);
/// kept out of the random values so that those still print.
const RAISING: &[&str] = &[
    "0b_",
    "0x_,",
    "+0b,",
    "2001-12-14\t21:59:43",
    "2001-12-14\t21:59:43 Z",
    "2001-12-14\t21:59:43.5 +05:00",
];

fn long_strings() -> Vec<String> {
    vec![
        "word ".repeat(30).trim_end().to_owned(),
        "word ".repeat(30),
        "x".repeat(200),
        format!("{}  {}", "a".repeat(79), "b".repeat(10)),
        format!("{} {}", "a".repeat(80), "b".repeat(10)),
        format!("{} {}", "a".repeat(81), "b".repeat(10)),
        format!("tab\t{}", "word ".repeat(25)),
        format!("tab\t{}", "wd  ".repeat(30)),
        format!("it's {}", "word ".repeat(25)),
        format!("{}: x", "k".repeat(130)),
        "line one\n".repeat(12),
        "é ".repeat(60),
        format!("{}\n{}", "a ".repeat(50), "b ".repeat(50)),
        "k".repeat(129),
        "k".repeat(128),
    ]
}

fn float_values() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        1.0,
        1.5,
        -2.5,
        100.0,
        0.1,
        1.0 / 3.0,
        1e15,
        1e16,
        123456789012345678.0,
        9007199254740993.0,
        1e20,
        1e22,
        1e100,
        1e-4,
        1e-5,
        0.00012345,
        2.5e-10,
        5e-324,
        f64::MIN_POSITIVE,
        f64::MAX,
        -f64::MAX,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        8080.0,
        1.23456,
        872379885051571.0 + 0.25,
        -1578763851215890.8,
        1234567890123456.0,
        999999999999999.9,
    ]
}

fn corpus() -> Vec<Value> {
    let mut values = Vec::new();
    // Scalars on their own.
    values.extend([Value::Nil, Value::Bool(true), Value::Bool(false)]);
    for n in [0, 1, -1, 8080, i64::MAX, i64::MIN] {
        values.push(Value::Int(n));
    }
    for b in [
        "9223372036854775808",
        "-9223372036854775809",
        "123456789012345678901234567890",
    ] {
        values.push(big(b));
    }
    values.extend(float_values().into_iter().map(Value::Float));
    // Every nasty string as a value, a Symbol, a Hash key and value, and an
    // Array element.
    let strings: Vec<String> = NASTY
        .iter()
        .chain(RAISING)
        .map(|t| t.to_string())
        .chain(long_strings())
        .collect();
    for t in &strings {
        values.push(s(t));
        values.push(sym(t));
        values.push(hash(vec![(s(t), s(t))]));
        values.push(arr(vec![s(t), sym(t)]));
    }
    values.push(hash(
        NASTY.iter().take(60).map(|t| (sym(t), s(t))).collect(),
    ));
    // Keys of every class.
    values.push(hash(vec![
        (s("a"), Value::Int(1)),
        (sym("sym"), Value::Int(2)),
        (Value::Int(1), s("x")),
        (Value::Nil, Value::Bool(true)),
        (Value::Bool(true), Value::Nil),
        (Value::Bool(false), Value::Float(1.5)),
        (Value::Float(1e20), s("f")),
        (big("99999999999999999999"), s("big")),
        (arr(vec![Value::Int(1), s("two")]), s("array key")),
        (arr(vec![]), hash(vec![])),
        (hash(vec![(s("k"), s("v"))]), s("hash key")),
        (hash(vec![]), arr(vec![])),
        (sym(""), s("empty symbol key")),
        (s(""), s("empty key")),
    ]));
    // Structures.
    values.push(arr(vec![]));
    values.push(hash(vec![]));
    values.push(arr(vec![
        arr(vec![]),
        hash(vec![]),
        Value::Nil,
        arr(vec![Value::Nil]),
    ]));
    values.push(arr(vec![arr(vec![arr(vec![s("deep")])])]));
    values.push(hash(vec![(
        s("a"),
        hash(vec![(
            s("b"),
            hash(vec![(
                s("c"),
                arr(vec![s("d"), hash(vec![(s("e"), s("f"))])]),
            )]),
        )]),
    )]));
    values.push(hash(vec![
        (s("list"), arr(vec![s("one"), s("two")])),
        (s("map"), hash(vec![(s("k"), s("v"))])),
        (s("nil"), Value::Nil),
        (s("multi"), s("line 1\nline 2\n")),
        (s("empty"), s("")),
    ]));
    values.push(arr((0..30).map(Value::Int).collect()));
    values.push(hash(
        (0..25)
            .map(|i| (s(&format!("key{i}")), s(&"v".repeat(i * 3))))
            .collect(),
    ));
    values.push(arr(vec![s("a\nb\nc"), hash(vec![(s("x\ny"), s("p\nq"))])]));
    values.push(hash(vec![(
        s("ssh_key"),
        s(&format!("ssh-rsa {} user@host\n", "A".repeat(300))),
    )]));
    // Seeded random values.
    let mut rng = Rng(0x5eed_2024_0610);
    for _ in 0..250 {
        values.push(random_value(&mut rng, 0));
    }
    values
}

fn float_corpus() -> Vec<f64> {
    let mut rng = Rng(42);
    let mut floats = float_values();
    while floats.len() < 3000 {
        let f = match rng.below(5) {
            // Any bit pattern.
            0 => f64::from_bits(rng.next()),
            // Around the fixed/scientific switches.
            1 => (rng.next() % 1_000_000) as f64 * 10f64.powi(rng.below(40) as i32 - 20),
            // Short decimals.
            2 => (rng.next() % 100_000) as f64 / 10f64.powi(rng.below(8) as i32),
            // Quarters of large integers: ties between shortest candidates.
            3 => ((1u64 << 49) + rng.below(1 << 52)) as f64 + 0.25 * rng.below(4) as f64,
            _ => rng.float(),
        };
        if f.is_finite() {
            floats.push(f);
        }
    }
    floats
}

/// SplitMix64: a fixed, seeded sequence.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    fn float(&mut self) -> f64 {
        let mantissa = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        let exponent = self.below(80) as i32 - 40;
        let f = mantissa * 10f64.powi(exponent);
        if self.below(2) == 0 { f } else { -f }
    }
}

/// Characters random strings are built from, nasty ones over-represented.
const CHARS: &[char] = &[
    'a',
    'b',
    'z',
    'A',
    'Q',
    '0',
    '1',
    '9',
    ' ',
    ' ',
    ' ',
    ':',
    '#',
    '-',
    '?',
    ',',
    '[',
    ']',
    '{',
    '}',
    '&',
    '*',
    '!',
    '|',
    '>',
    '\'',
    '"',
    '%',
    '@',
    '`',
    '\\',
    '/',
    '.',
    '_',
    '~',
    '=',
    '+',
    '$',
    '\n',
    '\n',
    '\t',
    '\r',
    '\0',
    '\u{1b}',
    '\u{7f}',
    'é',
    'ü',
    '中',
    '😀',
    '\u{85}',
    '\u{a0}',
    '\u{2028}',
    '\u{feff}',
    '\u{200b}',
    '\u{378}',
    '\u{e000}',
    '\u{fffe}',
    '\u{10ffff}',
    'ſ',
    '٣',
    '\u{301}',
];

fn random_string(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => rng.pick(NASTY).to_string(),
        1 => {
            // Long text with spaces, for line folding.
            let words = 10 + rng.below(40);
            (0..words)
                .map(|_| "w".repeat(1 + rng.below(12) as usize))
                .collect::<Vec<_>>()
                .join(if rng.below(5) == 0 { "  " } else { " " })
        }
        2 => format!("{}{}", rng.pick(NASTY), rng.pick(NASTY)),
        _ => {
            let max = if rng.below(4) == 0 { 120 } else { 12 };
            let len = rng.below(max);
            (0..len).map(|_| *rng.pick(CHARS)).collect()
        }
    }
}

fn random_scalar(rng: &mut Rng) -> Value {
    match rng.below(12) {
        0 => Value::Nil,
        1 => Value::Bool(rng.below(2) == 0),
        2 => Value::Int(rng.next() as i64 >> rng.below(64)),
        3 => big(&format!(
            "{}{:019}",
            1 + rng.below(1000),
            rng.below(10u64.pow(19))
        )),
        4 => Value::Float(rng.float()),
        5 => Value::Float(*rng.pick(&float_values())),
        6 | 7 => sym(&random_string(rng)),
        _ => s(&random_string(rng)),
    }
}

fn random_key(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(14) {
        0 => Value::Nil,
        1 => Value::Bool(rng.below(2) == 0),
        2 => Value::Int(rng.below(1000) as i64 - 500),
        3 => Value::Float(rng.float()),
        4 => sym(&random_string(rng)),
        5 if depth < 3 => arr(vec![random_scalar(rng), random_scalar(rng)]),
        6 if depth < 3 => hash(vec![(s(&random_string(rng)), random_scalar(rng))]),
        7 => arr(vec![]),
        _ => s(&random_string(rng)),
    }
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    if depth >= 5 || rng.below(3) == 0 {
        return random_scalar(rng);
    }
    // Wide near the top, narrow deeper down, to keep values printable.
    let len = rng.below(if depth < 2 { 7 } else { 4 }) as usize;
    if rng.below(2) == 0 {
        arr((0..len).map(|_| random_value(rng, depth + 1)).collect())
    } else {
        hash(
            (0..len)
                .map(|_| (random_key(rng, depth), random_value(rng, depth + 1)))
                .collect(),
        )
    }
}
