//! Differential test of `hierad::hiera::yaml::load` against Ruby's own
//! `YAML.load` (Psych 4.0.3 on libyaml, as Hiera's yaml backend calls it):
//! every corpus text is loaded by both, in one Ruby process, and compared
//! value by value with types, key order and float signs; errors by class
//! and, unless a case says otherwise, by message.

use crate::tagged::{self, same};

use hierad::hiera::{HieraError, Value, yaml};
use std::fmt::Write as _;
use std::path::Path;

/// How a case is compared.
#[derive(Clone, Copy)]
enum Check {
    /// Same value, or same error class and message.
    Exact,
    /// Same error class; the message is Ruby's own text we do not copy.
    ClassOnly(&'static str),
    /// Knowingly different, for the reason given. The test fails if the
    /// case starts to agree, so stale reasons do not linger.
    Known(&'static str),
}
use Check::{ClassOnly, Exact, Known};

/// Plain scalars as Psych's ScalarScanner sees them (section 9.1 and the
/// corners of psych/scalar_scanner.rb). Each is loaded as a mapping value,
/// as a sequence item and as a mapping key.
const SCALARS: &[&str] = &[
    // booleans and nulls
    "yes",
    "Yes",
    "YES",
    "yEs",
    "true",
    "True",
    "TRUE",
    "tRue",
    "on",
    "On",
    "ON",
    "no",
    "No",
    "NO",
    "false",
    "False",
    "FALSE",
    "off",
    "Off",
    "OFF",
    "y",
    "Y",
    "n",
    "N",
    "~",
    "null",
    "Null",
    "NULL",
    "nUll",
    "",
    "nil",
    "none",
    "yesyes",
    "truth",
    "onion",
    "tru",
    // integers
    "0",
    "42",
    "+12",
    "-0",
    "-42",
    "010",
    "0777",
    "-010",
    "08",
    "09",
    "0_8",
    "0x1F",
    "0xff",
    "0xFF_FF",
    "-0x1A",
    "+0x1A",
    "0x",
    "0xG",
    "0b101",
    "0b1010_0111",
    "-0b101",
    "0b",
    "0b2",
    "0b_",
    "0o10",
    "0o7",
    "1_000",
    "1,000",
    "0,1",
    "1,0,0",
    "12_",
    "_12",
    "1__0",
    "1,,0",
    "1_0_0",
    "12345678901234567890",
    "-12345678901234567890",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "0777777777777777777777777",
    "0xFFFFFFFFFFFFFFFFFF",
    "0x_",
    "0_",
    "0,",
    "00",
    "007",
    "+0",
    "1 000",
    "١٢",
    // sexagesimal
    "1:30",
    "190:20:30",
    "12:30:00",
    "-1:30",
    "+1:30",
    "1:60",
    "1:5",
    "01:05",
    "1:30:60",
    "1:2:3:4",
    "1_0:30",
    "1:30.5",
    "1:30:15.5",
    "-1:30.5",
    "1:30.",
    "1:30.5_5",
    "123456789012345678901:30",
    "a:30",
    "1:3a",
    // floats
    "1.5",
    ".5",
    "1.",
    "0.",
    "-1.5",
    "+.5",
    "1_000.5",
    "1,000.5",
    "1.0e+3",
    "6.8523015e+5",
    "1.5E-2",
    ".5e+3",
    "1e3",
    "1.0e3",
    "1.5e3",
    "1E+3",
    "12e3",
    "1.10",
    "1.0",
    "-0.0",
    "0.0",
    "00.5",
    "1.e+3",
    ".e+3",
    "-.e+3",
    "+.",
    "-.",
    ".",
    "1.2.3",
    "1..2",
    "1_.5",
    "1._5",
    "3.14159265358979323846",
    "1.0e+400",
    "1.0e-400",
    "-1.",
    "+1.5e-3",
    // special floats
    ".inf",
    "+.inf",
    "-.inf",
    ".Inf",
    "-.Inf",
    ".INF",
    ".nan",
    ".NaN",
    ".NAN",
    "-.nan",
    "NaN",
    "Infinity",
    "-Infinity",
    "inf",
    "nan",
    "+.nan",
    // dates and times
    "2024-01-02",
    "2024-1-2",
    "2024-13-01",
    "2024-12-32",
    "2024-00-00",
    "2024-01-02 10:00:00",
    "2024-01-02T10:00:00Z",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5",
    "2001-12-15 2:59:43.10",
    "2024-01-02T10:00:00+0530",
    "2024-01-02T10:00:00+530",
    "2024-01-02 10:00",
    "12024-01-02",
    "-2024-01-02 10:00:00",
    "20240102",
    "2024-01-02x",
    // symbols
    ":sym",
    ":\"a b\"",
    ":'q'",
    ":\"unterminated",
    "::a",
    ":1",
    ":yes",
    ":\"a\"b",
    ":a b",
    ":\"\"",
    // quoted
    "'123'",
    "\"123\"",
    "'1.5'",
    "'true'",
    "\"~\"",
    "\"\"",
    "''",
    "\"null\"",
    "':sym'",
    "'2024-01-02'",
    "\"a\\tb\"",
    // words and punctuation
    ".",
    "+",
    "+1",
    "-a",
    "a-b",
    "_a",
    "~a",
    "~~",
    "<<",
    "=",
    "hello world",
    "a#b",
    "a #b",
    "yes!",
    "on_off",
    "n/a",
    "a:b",
    "http://x:80/y",
    "é",
    "Ünïcödé text",
    "10.0.0.1",
    "1.2.3.4/24",
    "v1.10",
    "0.1.0",
    "1.2e+3x",
    "$HOME",
    "%{hiera('x')}",
    "-5",
    "- 5",
    // tagged scalars
    "!!str 123",
    "!!int '42'",
    "!!float '1'",
    "!!binary aGVsbG8=",
    "!ruby/symbol foo",
    "!ruby/sym foo",
    "!!null ''",
    "!!null x",
    "!!bool yes",
    "!!int abc",
    "!!float abc",
    "!!float 0x1A",
    "!!float 1e3",
    "!!float 08",
    "!str 1",
    "!ruby/string 1",
    "!str:Foo 1",
    "! 123",
    "! '123'",
    "!foo 123",
    "!<tag:yaml.org,2002:str> 1",
    "!ruby/object:BigDecimal 1",
    "!ruby/object:DateTime 2001-01-01",
    "!ruby/regexp /a/",
    "!ruby/range 1..2",
    "!ruby/class Foo",
    "!ruby/class ''",
    "!ruby/object:Complex 1",
    "!ruby/object:Rational 1",
    "!!timestamp 2001-01-01",
    "!!binary ''",
    "!!str",
    "!!float 12345678901234567890123",
    "!!float '1.5 '",
    "!!float '+.5'",
    "!!float '1_000'",
    "!!binary \"/w==\"",
    "!!str 2024-01-02",
    "!ruby/symbol",
    "!!float .nan",
];

/// Scalars whose comparison is knowingly weaker, with the reason.
const SCALARS_SPECIAL: &[(&str, Check)] = &[
    (
        "!!float",
        ClassOnly("TypeError text is Ruby's own: can't convert nil into Float"),
    ),
    ("!!float ~", ClassOnly("TypeError text is Ruby's own")),
    ("!!float yes", ClassOnly("TypeError text is Ruby's own")),
    ("!!float :a", ClassOnly("TypeError text is Ruby's own")),
    (
        "!ruby/encoding UTF-8",
        Known(
            "an Encoding object has no place in the value model; loaded as nil, which is what Hiera's parse_answer makes of it",
        ),
    ),
];

/// Whole documents: structure, block scalars, merge keys, keys, errors.
const DOCUMENTS: &[(&str, &str, Check)] = &[
    ("flat map", "a: 1\nb: two\nc: 3.5\n", Exact),
    (
        "nested",
        "a:\n  b:\n    c: [1, 2]\n  d:\n    - x\n    - y: z\n",
        Exact,
    ),
    ("indentless sequence", "list:\n- a\n- b\nnext: 1\n", Exact),
    ("root sequence", "- 1\n- two\n- - nested\n  - list\n", Exact),
    ("root scalar", "--- just text\n", Exact),
    (
        "root block scalar",
        "--- |\n  line one\n  line two\n",
        Exact,
    ),
    (
        "block scalars",
        "clip: |\n  a\n  b\n\nstrip: |-\n  a\n  b\n\nkeep: |+\n  a\n  b\n\nlast: 1\n",
        Exact,
    ),
    (
        "folded scalars",
        "f: >\n  one\n  two\n\n  three\n    indented\n  back\nfs: >-\n  x\n  y\nfk: >+\n  x\n\n",
        Exact,
    ),
    (
        "block indentation indicator",
        "a: |2\n    two extra\n  base\n",
        Exact,
    ),
    (
        "plain multi-line",
        "a: one\n  two\n\n  three\nb: x\n   y\n",
        Exact,
    ),
    (
        "double-quoted escapes",
        "a: \"t\\tn\\nx\\x41u\\u00e9U\\U0001F600b\\\\q\\\"s\\/sp\\ n\\_N\\NL\\LP\\P0\\0a\\ab\\be\\ef\\fr\\rv\\v\"\n",
        Exact,
    ),
    (
        "double-quoted folding",
        "a: \"one\n  two\n\n  three\\\n  four\"\n",
        Exact,
    ),
    (
        "single-quoted",
        "a: 'it''s'\nb: 'one\n  two\n\n  three'\n",
        Exact,
    ),
    (
        "merge inline mapping",
        "base: &b {x: 1}\nchild:\n  <<: {x: 2, y: 3}\n  y: 4\n  z: 5\n",
        Exact,
    ),
    ("merge after keys", "x: 0\ny: 0\n<<: {x: 1, z: 1}\n", Exact),
    (
        "merge list",
        "<<: [{a: 1, c: 1}, {a: 2, b: 2}]\nd: 4\n",
        Exact,
    ),
    ("merge scalar", "<<: 1\na: 2\n", Exact),
    ("merge quoted key", "\"<<\": {a: 1}\n", Exact),
    ("merge str-tagged key", "!!str <<: {a: 1}\n", Exact),
    ("merge list with non-hash", "<<: [{a: 1}, 2]\n", Exact),
    (
        "merge of a str-tagged mapping",
        "<<: !str {str: x}\n",
        Exact,
    ),
    ("merge empty omap", "<<: !!omap []\na: 1\n", Exact),
    ("merge alias", "base: &b {a: 1}\nc:\n  <<: *b\n", Exact),
    ("duplicate keys", "a: 1\nb: 2\na: 3\nc: 4\nb: 5\n", Exact),
    (
        "duplicate float keys",
        "0.0: a\n-0.0: b\n1.0: c\n1: d\n",
        Exact,
    ),
    // Psych returns the one Float::NAN object, so the keys are identical.
    ("two NaN keys", ".nan: 1\n.NaN: 2\n", Exact),
    (
        "non-String keys",
        "yes: 1\nno: 2\n1: 3\n1.5: 4\n~: 5\n:k: 6\nnull: 7\n0x1F: 8\n'1': 9\n",
        Exact,
    ),
    (
        "complex keys",
        "[a, b]: c\n? {x: 1}\n: y\n? - p\n  - q\n: z\n",
        Exact,
    ),
    ("explicit keys", "? a\n: b\n? c\n", Exact),
    ("multi-document", "a: 1\n---\nb: 2\n", Exact),
    ("multi-document explicit", "--- 1\n--- 2\n", Exact),
    ("second document broken", "a: 1\n--- [\n", Exact),
    ("document end marker", "a: 1\n...\nb: [\n", Exact),
    ("empty", "", Exact),
    ("comments only", "# one\n  # two\n\n", Exact),
    ("dashes only", "---\n", Exact),
    ("dashes and end", "---\n...\n", Exact),
    ("leading document end", "...\na: 1\n", Exact),
    ("bom", "\u{feff}a: 1\n", Exact),
    ("bom only", "\u{feff}", Exact),
    (
        "anchors without aliases",
        "a: &x 1\nb: &y [1]\nc: &z {d: 2}\n",
        Exact,
    ),
    ("alias", "a: &x 1\nb: *x\n", Exact),
    ("undefined alias", "a: *nowhere\n", Exact),
    ("first alias wins", "a: *one\nb: *two\n", Exact),
    ("alias before date", "a: *x\nb: 2024-01-01\n", Exact),
    ("date before alias", "a: 2024-01-01\nb: *x\n", Exact),
    ("syntax error after alias", "a: *x\nb: [\n", Exact),
    ("nested date", "a:\n  - {b: 2024-01-01}\n", Exact),
    ("time key", "2024-01-02 10:00:00: x\n", Exact),
    (
        "tag map",
        "a: !!map {b: 1}\nb: !!seq [1]\nc: !foo {d: 1}\nd: !bar [x]\n",
        Exact,
    ),
    ("ruby object", "a: !ruby/object:OpenStruct {}\n", Exact),
    ("ruby object plain", "a: !ruby/object {}\n", Exact),
    ("ruby object hash", "a: !ruby/object:Hash {b: 1}\n", Exact),
    ("ruby struct", "a: !ruby/struct:S {b: 1}\n", Exact),
    ("ruby struct plain", "a: !ruby/struct {b: 1}\n", Exact),
    ("set", "a: !!set {b: 1}\n", Exact),
    ("omap mapping", "a: !!omap {b: 1}\n", Exact),
    (
        "omap sequence",
        "a: !!omap [{b: 1}, {c: 2}, [d, e]]\n",
        Exact,
    ),
    ("omap scalar item", "a: !!omap [b]\n", Exact),
    ("ruby exception", "a: !ruby/exception {message: x}\n", Exact),
    (
        "ruby exception child first",
        "a: !ruby/exception {message: *x}\n",
        Exact,
    ),
    ("ruby range map", "a: !ruby/range {begin: 1}\n", Exact),
    ("ruby array", "a: !ruby/array:Foo [1]\n", Exact),
    ("ruby hash", "a: !ruby/hash:Foo {b: 1}\n", Exact),
    ("map tag class", "a: !map:Foo {b: 1}\n", Exact),
    (
        "seq tag empty class",
        "a: !seq: [1]\n",
        ClassOnly("NoMethodError text is Ruby's own"),
    ),
    ("str mapping", "a: !str {str: hello}\nb: !str {}\n", Exact),
    ("str mapping class", "a: !str:Foo {str: hello}\n", Exact),
    ("marshalable", "a: !ruby/marshalable:Foo {}\n", Exact),
    ("root tag", "--- !ruby/object:Foo\na: 1\n", Exact),
    (
        "hiera config",
        ":backends:\n  - yaml\n:yaml:\n  :datadir: /etc/hiera\n:hierarchy:\n  - \"nodes/%{::trusted.certname}\"\n  - common\n:merge_behavior: deeper\n",
        Exact,
    ),
    (
        "flow mix",
        "a: [1, {b: 2, c: [3, 4]}, [5]]\nd: {e: [f, g], h: {i: j}}\n",
        Exact,
    ),
    (
        "flow multi-line",
        "a: [1,\n  2,\n  {b: 3,\n   c: 4}\n]\n",
        Exact,
    ),
    ("flow implicit pairs", "a: [b: 1, c: 2]\n", Exact),
    ("flow empty entries", "a: [1, 2, ]\nb: {c: 1, }\n", Exact),
    (
        "empty values",
        "a:\nb: ~\nc: ''\nlist:\n- \n- x\n-\n",
        Exact,
    ),
    (
        "unicode",
        "naïve: café\n日本: 語\nemoji: \"\\U0001F600\"\n",
        Exact,
    ),
    (
        "urls and colons",
        "url: http://example.com:8080/path?q=1#frag\nratio: 16:9\nkey:value: 1\n",
        Exact,
    ),
    (
        "comments everywhere",
        "# head\na: 1 # tail\n# middle\nb: [1, # in flow\n  2]\nc: 'x' # after quote\n",
        Exact,
    ),
    ("hash in plain", "a: b#c\nd: e #f\n", Exact),
    ("yaml directive", "%YAML 1.1\n---\na: 1\n", Exact),
    (
        "tag directive",
        "%TAG !e! tag:example.com,2000:\n---\na: !e!foo 1\n",
        Exact,
    ),
    ("crlf", "a: 1\r\nb:\r\n  - x\r\n  - y\r\n", Exact),
    (
        "deep nesting",
        "a:\n  b:\n    c:\n      d:\n        e:\n          f: [[[[1]]]]\n",
        Exact,
    ),
    (
        "big integers",
        "- 12345678901234567890\n- -98765432109876543210\n- 0x1234567890ABCDEF0\n",
        Exact,
    ),
    ("quoted keys", "'yes': 1\n\"1\": 2\n'~': 3\n", Exact),
    ("keys with spaces", "a key: 1\n  other key  : 2\n", Exact),
    ("long key", "k: v\n", Exact),
    ("sequence of maps", "- a: 1\n  b: 2\n- c: 3\n", Exact),
    ("empty flow", "a: []\nb: {}\n", Exact),
    ("anchor on collection item", "- &a x\n- &b\n  k: v\n", Exact),
    // libyaml accepts what saphyr (YAML 1.2) refuses, and the reverse
    (
        "flow closed at column 0",
        "a: [\n  1,\n  2\n]\nb: 1\n",
        Exact,
    ),
    ("flow content under-indented", "a: {x: 1,\ny: 2}\n", Exact),
    ("flow comment at column 0", "a: [1,\n# c\n2]\n", Exact),
    ("flow plain continuation", "a: [b\nc]\n", Exact),
    (
        "flow in sequence under-indented",
        "a:\n  - [a,\nb]\n",
        Exact,
    ),
    (
        "quoted continuation under-indented",
        "a: 'x\ny'\nb:\n  c: \"p\nq\"\n",
        Exact,
    ),
    ("quoted document indicator", "a: \"x\n---\n\"\n", Exact),
    ("root junk after flow", "[a]\nb: 1\n", Exact),
    ("root junk after quoted", "\"a\" b\n", Exact),
    ("root junk block scalar header", "\"d\":>\n  1: x\n", Exact),
    ("root junk with tab", "[a]\nb: 1\n\tc\n", Exact),
    ("symbol in flow sequence", "a: [:sym]\n", Exact),
    ("symbol key in flow", "{:a: 1}\n", Exact),
    ("symbol value in flow", "a: {b: :c}\n", Exact),
    ("question in flow sequence", "[?x, ?y z]\n", Exact),
    ("question key in flow", "{?x: 1}\n", Exact),
    ("question value in flow", "{a: ?x}\n", Exact),
    ("empty key in flow mapping", "{: v}\n", Exact),
    ("empty key in flow sequence", "[a, : v]\n", Exact),
    ("explicit empty key in flow", "{? : v}\n", Exact),
    ("keyless value", ": v\n", Exact),
    ("keyless value after key", "a: 1\n: 2\n", Exact),
    ("explicit empty key", "?\n: v\n", Exact),
    ("literal indicator in flow", "[|]\n", Exact),
    ("tag then brace", "{a: !x}\n", Exact),
    ("tag then comma", "[!x, y]\n", Exact),
    ("control character", "a: \u{1}\n", Exact),
    ("delete character", "a: b\u{7f}\n", Exact),
    (
        "control character after the document",
        "a: 1\n---\nb: \u{2}\n",
        Exact,
    ),
    ("colon and flow indicator", "[a:]\n", Exact),
    (
        "comment glued to a flow indicator",
        "a: [b,#c\n  d]\n",
        Exact,
    ),
    ("comment glued to a quoted scalar", "a: 'b'#c\n", Exact),
    (
        "comment glued to a block scalar header",
        "a: |#c\n  x\n",
        Exact,
    ),
    ("symbol after blank in flow", "[ :x]\n", Exact),
    (
        "line separator character",
        "a: x\u{2028}y\n",
        Known(
            "libyaml takes U+2028 (and U+2029, U+0085) for a line break, saphyr (YAML 1.2) for text",
        ),
    ),
    // syntax errors
    ("unclosed flow sequence", "a: [1, 2\n", Exact),
    ("unclosed flow sequence eof", "[1, 2", Exact),
    ("unclosed flow mapping", "a: {x: 1\nb: 2\n", Exact),
    ("unclosed nested flow", "{a: [1, 2}\n", Exact),
    ("unclosed double quote", "a: \"x\n", Exact),
    ("unclosed single quote", "a: 'x\nb: 1\n", Exact),
    ("bad indentation", "a:\n  b: 1\n c: 2\n", Exact),
    ("bad indentation sequence", "a:\n  - b\n c: 1\n", Exact),
    ("mapping values not allowed", "a: 1\n b: 2\n", Exact),
    ("mapping values inline", "a: b: c\n", Exact),
    ("continuation with colon", "foo: bar\n  baz: 1\n", Exact),
    ("simple key", "a: 1\nb\n", Exact),
    ("simple key late", "? a\n? b\n: c\nd\n", Exact),
    ("sequence then key", "- a\nb: 1\n", Exact),
    ("key then sequence", "a: b\n- c\n", Exact),
    ("stray bracket value", "a: ]\n", Exact),
    ("stray brace value", "a: }\n", Exact),
    ("stray bracket after flow", "a: [1, 2]]\n", Exact),
    ("stray bracket line", "a: 1\n]\n", Exact),
    ("stray bracket root", "]\n", Exact),
    ("trailing after quoted", "key: \"a\" b\n", Exact),
    ("trailing after quoted in sequence", "- \"a\" b\n", Exact),
    ("trailing after root flow", "[a] b\n", Exact),
    ("at sign", "a: @x\n", Exact),
    ("backquote", "a: `x\n", Exact),
    ("percent", "a: %x\n", Exact),
    (
        "yaml directive without document",
        "%YAML 1.1\na: 1\n",
        Exact,
    ),
    ("unknown directive", "%FOO bar\n--- 1\n", Exact),
    ("incompatible yaml version", "%YAML 2.0\n---\na: 1\n", Exact),
    (
        "duplicate yaml directive",
        "%YAML 1.1\n%YAML 1.1\n---\na: 1\n",
        Exact,
    ),
    ("bad yaml version", "%YAML x\n--- a\n", Exact),
    (
        "duplicate tag directive",
        "%TAG !e! tag:e,2000:\n%TAG !e! tag:f:\n--- a\n",
        Exact,
    ),
    (
        "document start with a mapping on its line",
        "--- a: 1\n",
        Exact,
    ),
    ("verbatim tag unclosed", "a: !<x 1\n", Exact),
    ("empty anchor", "a: &  1\n", Exact),
    ("empty alias", "a: *\n", Exact),
    ("anchor with dot", "a: &x.y 1\n", Exact),
    ("undefined tag handle", "a: !x!y z\n", Exact),
    ("block scalar indicator zero", "a: |0\n  x\n", Exact),
    ("block scalar junk", "a: |x\n  y\n", Exact),
    ("block scalar less indented", "a: |\n    x\n  y\n", Exact),
    ("unknown escape", "a: \"\\q\"\n", Exact),
    ("bad hex escape", "a: \"\\xZZ\"\n", Exact),
    ("sequence in flow", "- [a, b\n- c\n", Exact),
    ("mapping in sequence", "- a\n  b: 1\n", Exact),
    ("error in second document", "a: 1\n---\nb: [\n", Exact),
    // tabs
    ("tab after colon", "key:\tvalue\nnum:\t1\n", Exact),
    ("tab inside value", "a: b\tc\n", Exact),
    ("tab before comment", "a: 1\t# c\n", Exact),
    ("trailing tab", "a: 1 \t\nb: 2\n", Exact),
    ("tab indentation", "a:\n\tb: 1\n", Exact),
    ("tab indentation sequence", "a:\n\t- b\n", Exact),
    ("tab at start", "\tb: 1\n", Exact),
    ("tab comment line", "a: 1\n\t# c\nb: 2\n", Exact),
    ("tab blank line", "a: 1\n\t\nb: 2\n", Exact),
    ("tab after spaces", "a:\n  b: 1\n  \tc: 2\n", Exact),
    ("tab after dash", "- a\n-\tb\n", Exact),
    ("tab after dash space", "- \tx\n", Exact),
    ("tab after complex value", "? a\n:\tb\n", Exact),
    ("tab in flow", "[1,\t2]\n", Exact),
    ("tab in flow mapping", "{a:\t1}\n", Exact),
    ("tab in quoted continuation", "a: \"x\n\ty\"\n", Exact),
    ("tab in plain continuation", "a: x\n\ty\n", Exact),
    (
        "tab in deeper plain continuation",
        "a:\n  b: x\n    \ty\n",
        Exact,
    ),
    ("tab in block scalar", "a: |\n  x\n  \ty\n", Exact),
    ("tab before key colon", "key\t: value\n", Exact),
    ("tab after anchor", "a: &x\t1\n", Exact),
    ("tab after document start", "---\tx\n", Exact),
    ("tab in single quotes", "a: 'x\ty'\n", Exact),
];

/// Puts a scalar into a document.
type Wrap = fn(&str) -> String;

fn scalar_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let contexts: [(&str, Wrap); 3] = [
        ("value", |s| format!("k: {s}\n")),
        ("item", |s| format!("- {s}\n")),
        ("key", |s| format!("{s}: v\n")),
    ];
    let all = SCALARS
        .iter()
        .map(|s| (*s, Exact))
        .chain(SCALARS_SPECIAL.iter().copied());
    for (scalar, check) in all {
        for (context, wrap) in contexts {
            cases.push(Case {
                name: format!("scalar {scalar:?} as {context}"),
                text: wrap(scalar),
                check,
            });
        }
    }
    cases
}

struct Case {
    name: String,
    text: String,
    check: Check,
}

/// Documents too long to write out: libyaml's 1024-character limit on
/// simple keys, long scalars, deep nesting.
fn generated_cases() -> Vec<Case> {
    let deep_block: String = (0..40)
        .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
        .collect::<String>()
        + &"  ".repeat(40)
        + "v\n";
    [
        ("long block key", format!("{}: v\n", "k".repeat(1100))),
        (
            "key at the 1024 limit",
            format!("{}: v\n", "k".repeat(1023)),
        ),
        ("long value", format!("a: {}\n", "x".repeat(5000))),
        (
            "long quoted flow key",
            format!("{{\"{}\": 1}}\n", "q".repeat(1030)),
        ),
        (
            "deep flow nesting",
            format!("{}{}\n", "[".repeat(40), "]".repeat(40)),
        ),
        ("deep block nesting", deep_block),
    ]
    .into_iter()
    .map(|(name, text)| Case {
        name: format!("generated {name}"),
        text,
        check: Exact,
    })
    .collect()
}

/// A Hiera data file of the usual shapes, for the mutation cases.
const HIERA_DATA: &str = "---
classes:
  - profile::base
  - profile::web
ntp::servers: [0.pool.ntp.org, 1.pool.ntp.org]
apache::vhosts:
  www.example.com:
    port: 80
    docroot: /var/www/html
    options: ['Indexes', 'FollowSymLinks']
  secure.example.com:
    port: 443
    ssl: true
users:
  alice:
    uid: 1001
    groups: {wheel: true, docker: true}
    shell: \"/bin/bash\"
motd: |
  Welcome to %{::fqdn}
  Managed by Puppet
limits:
  nofile: 65536
";

/// A small deterministic generator (xorshift), so the mutations are the
/// same on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The everyday mistakes, made at random in real data: a bracket or quote
/// lost, a line indented one space too far or too little, a colon dropped,
/// a tab typed for spaces, a stray list item, a doubled value. Each case
/// has one to three of them.
fn mutated_cases(fuel: &[Case]) -> Vec<Case> {
    let mut bases = vec![HIERA_DATA.to_owned()];
    for case in fuel.iter().take(3) {
        let lines: Vec<&str> = case.text.lines().collect();
        for chunk in lines.chunks(40).take(8) {
            bases.push(chunk.join("\n") + "\n");
        }
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mutate = |doc: &str, rng: &mut Rng| -> String {
        let mut lines: Vec<String> = doc.lines().map(str::to_owned).collect();
        let filled: Vec<usize> = (0..lines.len())
            .filter(|&i| !lines[i].trim().is_empty())
            .collect();
        let i = filled[rng.below(filled.len())];
        let line = lines[i].clone();
        let indent = line.len() - line.trim_start_matches(' ').len();
        lines[i] = match rng.below(9) {
            0 if line.contains([']', '}']) => {
                let at = line.rfind([']', '}']).unwrap_or_default();
                format!("{}{}", &line[..at], &line[at + 1..])
            }
            1 if line.contains(['"', '\'']) => {
                let at = line.rfind(['"', '\'']).unwrap_or_default();
                format!("{}{}", &line[..at], &line[at + 1..])
            }
            2 => format!(" {line}"),
            3 if indent > 0 => line[1..].to_owned(),
            4 if line.contains(": ") => line.replacen(": ", " ", 1),
            5 => format!("{}\t{}", &line[..indent], &line[indent..]),
            6 => format!("{}- stray\n{line}", " ".repeat(indent)),
            7 if line.contains(": ") => line.replacen(": ", ": x: ", 1),
            8 if line.contains("- ") => line.replacen("- ", "", 1),
            _ => format!("{line} ]"),
        };
        lines.join("\n") + "\n"
    };
    (0..300)
        .map(|n| {
            let mut text = bases[rng.below(bases.len())].clone();
            for _ in 0..=rng.below(3) {
                text = mutate(&text, &mut rng);
            }
            Case {
                name: format!("mutation {n}"),
                text,
                check: Exact,
            }
        })
        .collect()
}

fn fuel_cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuel");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/fuel")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 10,
        "fuel fixtures missing from {}",
        dir.display()
    );
    paths
        .into_iter()
        .map(|p| Case {
            name: format!("fuel {}", p.file_name().unwrap().to_string_lossy()),
            text: std::fs::read_to_string(&p).expect("fixture"),
            check: Exact,
        })
        .collect()
}

/// What Ruby answered for one text.
enum Answer {
    Value(Value),
    /// An object outside the value model (its class).
    Other(String),
    Error(String, String),
}

/// Runs the whole corpus through one Ruby process (`YAML.load`, or with
/// `puppet` Puppet's `safe_load(…, aliases: true)`).
fn ruby_answers(texts: &[&str], puppet: bool) -> Vec<Answer> {
    let support = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/psych_load.rb");
    let corpus = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(corpus.path(), serde_json::to_string(texts).unwrap()).expect("write corpus");
    let out = crate::tools::command("ruby")
        .arg(&support)
        .arg(corpus.path())
        .args(puppet.then_some("puppet"))
        .output()
        .expect("ruby must be installed to run the differential YAML test");
    assert!(
        out.status.success(),
        "psych_load.rb failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("psych_load.rb output");
    answers
        .iter()
        .map(|a| {
            if let Some(err) = a.get("error") {
                Answer::Error(
                    err[0].as_str().unwrap().to_owned(),
                    err[1].as_str().unwrap().to_owned(),
                )
            } else {
                match tagged::decode(&a["ok"]) {
                    Ok(v) => Answer::Value(v),
                    Err(class) => Answer::Other(class),
                }
            }
        })
        .collect()
}

/// A Ruby-like rendering for the diff.
fn show(v: &Value) -> String {
    match v {
        Value::Nil => "nil".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::BigInt(n) => n.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::String(s) => format!("{s:?}"),
        Value::Symbol(s) => format!(":{s:?}"),
        Value::Array(a) => format!("[{}]", a.iter().map(show).collect::<Vec<_>>().join(", ")),
        Value::Hash(h) => format!(
            "{{{}}}",
            h.iter()
                .map(|(k, v)| format!("{}=>{}", show(k), show(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn show_ours(r: &Result<Value, HieraError>) -> String {
    match r {
        Ok(v) => show(v),
        Err(e) => format!("{}: {}", e.class.ruby_name(), e.message),
    }
}

fn show_ruby(a: &Answer) -> String {
    match a {
        Answer::Value(v) => show(v),
        Answer::Other(class) => format!("#<{class}>"),
        Answer::Error(class, message) => format!("{class}: {message}"),
    }
}

/// Whether our result agrees with Ruby's under the case's check.
fn agrees(ours: &Result<Value, HieraError>, ruby: &Answer, check: Check) -> bool {
    match (ours, ruby) {
        (Ok(v), Answer::Value(w)) => same(v, w),
        (Err(e), Answer::Error(class, message)) => {
            e.class.ruby_name() == class && (matches!(check, ClassOnly(_)) || e.message == *message)
        }
        _ => false,
    }
}

#[test]
fn yaml_load_agrees_with_psych() {
    let mut cases = scalar_cases();
    let scalar_count = SCALARS.len() + SCALARS_SPECIAL.len();
    cases.extend(DOCUMENTS.iter().map(|(name, text, check)| Case {
        name: format!("document {name}"),
        text: (*text).to_owned(),
        check: *check,
    }));
    cases.extend(generated_cases());
    let fuel = fuel_cases();
    cases.extend(mutated_cases(&fuel));
    cases.extend(fuel);
    assert!(scalar_count >= 150, "only {scalar_count} scalar cases");
    assert!(DOCUMENTS.len() >= 40, "only {} documents", DOCUMENTS.len());

    let texts: Vec<&str> = cases.iter().map(|c| c.text.as_str()).collect();
    let answers = ruby_answers(&texts, false);
    assert_eq!(answers.len(), cases.len());

    let mut report = String::new();
    let mut failures = 0;
    for (case, ruby) in cases.iter().zip(&answers) {
        let ours = yaml::load(&case.text);
        let ok = agrees(&ours, ruby, case.check);
        let failed = match case.check {
            Exact | ClassOnly(_) => !ok,
            // A known difference that vanished must be taken out of the corpus.
            Known(_) => ok,
        };
        if failed {
            failures += 1;
            let why = match case.check {
                Known(reason) => format!("\n  marked known-different ({reason}) but agrees now"),
                ClassOnly(reason) => format!("\n  compared by class only ({reason})"),
                Exact => String::new(),
            };
            let _ = write!(
                report,
                "\n{}\n  text: {:?}\n  ruby: {}\n  ours: {}{why}\n",
                case.name,
                case.text.chars().take(300).collect::<String>(),
                show_ruby(ruby).chars().take(600).collect::<String>(),
                show_ours(&ours).chars().take(600).collect::<String>(),
            );
        }
    }
    assert!(
        failures == 0,
        "{failures} of {} cases disagree with Ruby's YAML.load:\n{report}",
        cases.len()
    );
}

/// Documents whose aliases Puppet's reader resolves, beside the corpus's
/// own alias cases. (No alias inside its own anchor, no alias bomb: Ruby
/// shares the objects, and the comparison would walk them for ever; the
/// unit tests of `hiera::yaml` cover ours.)
const ALIASES: &[(&str, &str)] = &[
    ("scalar alias", "a: &x hello\nb: *x\nc: [*x, *x]\n"),
    ("mapping alias", "base: &b {x: 1, y: [1, 2]}\nother: *b\n"),
    (
        "merge key",
        "base: &b\n  x: 1\n  y: 2\nm:\n  <<: *b\n  y: 3\n",
    ),
    (
        "merge list",
        "a: &a {x: 1}\nb: &b {x: 2, y: 2}\nm:\n  <<: [*a, *b]\n  z: 3\n",
    ),
    (
        "merge of a sequence alias",
        "s: &s [{x: 1}]\nm:\n  <<: *s\n",
    ),
    ("merge of a scalar alias", "s: &s 1\nm:\n  <<: *s\n"),
    ("redefined anchor", "a: &x 1\nb: *x\nc: &x 2\nd: *x\n"),
    ("alias as key", "k: &k key\n*k : v\n"),
    ("nested aliases", "a: &a [1]\nb: &b [*a, *a]\nc: [*b, *b]\n"),
    ("tagged anchor", "a: &x !!str 12\nb: *x\n"),
    ("symbol alias", "a: &x :sym\nb: *x\n"),
    ("alias before anchor", "a: *x\nb: &x 1\n"),
    ("date alias", "a: &x 2024-01-01\nb: *x\n"),
];

/// `yaml::load_puppet` against Puppet 7's reader: the corpus's documents
/// and [`ALIASES`]. Known differences of `YAML.load` are left out.
#[test]
fn puppet_yaml_agrees_with_psych_safe_load() {
    let cases: Vec<(String, &str)> = DOCUMENTS
        .iter()
        .filter(|(_, _, check)| matches!(check, Exact))
        .map(|(name, text, _)| (format!("document {name}"), *text))
        .chain(
            ALIASES
                .iter()
                .map(|(name, text)| (format!("alias {name}"), *text)),
        )
        .collect();
    let texts: Vec<&str> = cases.iter().map(|(_, text)| *text).collect();
    let answers = ruby_answers(&texts, true);
    assert_eq!(answers.len(), cases.len());
    let mut report = String::new();
    let mut resolved = 0;
    for ((name, text), ruby) in cases.iter().zip(&answers) {
        let ours = yaml::load_puppet(text);
        if text.contains('*') && ours.is_ok() {
            resolved += 1;
        }
        if !agrees(&ours, ruby, Exact) {
            let _ = write!(
                report,
                "\n{name}\n  text: {text:?}\n  ruby: {}\n  ours: {}\n",
                show_ruby(ruby),
                show_ours(&ours)
            );
        }
    }
    assert!(
        report.is_empty(),
        "load_puppet disagrees with Puppet's safe_load:{report}"
    );
    // Not vacuous: most alias cases load, as Puppet loads them.
    assert!(
        resolved >= 10,
        "only {resolved} documents with aliases loaded"
    );
}
