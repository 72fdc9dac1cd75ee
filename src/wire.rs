//! The wire and storage form of Hiera values: JSON, with a small tagged
//! escape for what JSON cannot say, so every Ruby type distinction survives
//! HTTP and the database.
//!
//! Plain JSON where it suffices: nil, booleans, Strings, Arrays, Hashes
//! with String keys. Integers are written without a fraction and Floats
//! always with one (`1.0`), so the two stay apart; big Integers are plain
//! JSON numbers (arbitrary length). The rest is an object whose first key
//! is `"__hierad__"`:
//!
//! - `{"__hierad__": "sym", "name": "foo"}`: the Symbol `:foo`;
//! - `{"__hierad__": "float", "value": "NaN" | "Infinity" | "-Infinity"}`;
//! - `{"__hierad__": "hash", "pairs": [[k, v], …]}`: a Hash with a
//!   non-String key, or with a `"__hierad__"` key of its own (so user data
//!   can never be mistaken for a tag).
//!
//! Depth: a stored value nests at most [`MAX_DEPTH`] levels of Arrays and
//! Hashes (the store refuses deeper ones). Tags add JSON levels (a tagged
//! Hash takes three: the object, its pairs, a pair; a Symbol or a NaN one
//! more at the bottom), so the stored form of an accepted value nests up to
//! [`MAX_JSON_DEPTH`] JSON levels, past serde_json's own limit of 128.
//! The reader therefore lifts that limit, grows its stack as it descends
//! ([`stacker`], so any thread can read any accepted value), and stops at
//! [`MAX_JSON_DEPTH`] itself: no accepted value is refused, and no input,
//! however deep, costs more than that much stack.

use crate::hiera::json::number;
use crate::hiera::render::ruby::float_to_s;
use crate::hiera::{Hash, Value};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value as Json};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::OnceLock;

/// The tag key; an object holding it is a tagged value.
pub(crate) const TAG: &str = "__hierad__";

/// How many levels of Hashes and Arrays a stored value may nest, a
/// document's own Hash being the first (keys count as the values do).
/// 64 leaves every accepted document's answer within the 100 levels of
/// Ruby's `JSON.parse` (the shim's reader) while it uses plain Hashes, and
/// is far beyond what Hiera data needs (Fuel's deepest astute: 9).
pub(crate) const MAX_DEPTH: usize = 64;

/// The deepest JSON the stored form of a value within [`MAX_DEPTH`] can
/// be: three JSON levels per level (tagged Hashes), plus a tagged Symbol
/// or Float at the bottom. The reader refuses anything deeper.
pub(crate) const MAX_JSON_DEPTH: usize = 3 * MAX_DEPTH + 1;

/// Stack kept free below each JSON level the reader descends (serde_json's
/// frames and ours for one level take a few kilobytes unoptimised); when
/// less is left, the reader continues on a new segment of this size.
const STACK_RED_ZONE: usize = 64 * 1024;
const STACK_SEGMENT: usize = 1024 * 1024;

/// Errors decoding the wire form.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WireError {
    /// The text is not JSON.
    #[error("malformed JSON: {0}")]
    Json(String),
    /// A `__hierad__` object that is not one of the known tags.
    #[error("malformed tagged value: {0}")]
    Tag(String),
    /// JSON nested deeper than any value hierad stores.
    #[error(
        "the JSON nests more than {MAX_JSON_DEPTH} levels deep; hierad stores values nesting at most {MAX_DEPTH} levels of Hashes and Arrays"
    )]
    TooDeep,
}

/// Encodes a value as wire JSON.
pub fn to_json(v: &Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(n) => Json::Number((*n).into()),
        Value::BigInt(n) => json_number(&n.to_string()),
        Value::Float(f) if f.is_finite() => json_number(&float_to_s(*f)),
        Value::Float(f) => {
            let text = if f.is_nan() {
                "NaN"
            } else if *f > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            };
            tagged("float", "value", Json::String(text.to_owned()))
        }
        Value::String(s) => Json::String(s.clone()),
        Value::Symbol(s) => tagged("sym", "name", Json::String(s.clone())),
        Value::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Hash(h) => {
            let plain = h.keys().all(|k| matches!(k, Value::String(s) if s != TAG));
            if plain {
                let mut map = Map::with_capacity(h.len());
                for (k, v) in h {
                    if let Value::String(k) = k {
                        map.insert(k.clone(), to_json(v));
                    }
                }
                Json::Object(map)
            } else {
                let pairs = h
                    .iter()
                    .map(|(k, v)| Json::Array(vec![to_json(k), to_json(v)]))
                    .collect();
                tagged("hash", "pairs", Json::Array(pairs))
            }
        }
    }
}

/// Encodes a value as wire JSON text.
pub(crate) fn to_string(v: &Value) -> String {
    let mut out = Vec::new();
    write_to(&mut out, v);
    // Whole UTF-8 strings and ASCII are all that is written.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Appends a value's wire JSON text to `out`, as [`to_json`] encodes it,
/// but written straight from the value: answers of tens of kilobytes
/// build no JSON tree, and land in the buffer that becomes the response.
pub(crate) fn write_to(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        // Both as text, as `json_number` keeps them.
        Value::BigInt(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::Float(f) if f.is_finite() => out.extend_from_slice(float_to_s(*f).as_bytes()),
        Value::Float(f) => {
            out.extend_from_slice(br#"{"__hierad__":"float","value":"#);
            out.extend_from_slice(if f.is_nan() {
                br#""NaN"}"#
            } else if *f > 0.0 {
                br#""Infinity"}"#
            } else {
                br#""-Infinity"}"#
            });
        }
        Value::String(s) => write_str(out, s),
        Value::Symbol(s) => {
            out.extend_from_slice(br#"{"__hierad__":"sym","name":"#);
            write_str(out, s);
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_to(out, item);
            }
            out.push(b']');
        }
        Value::Hash(h) => write_hash(out, h),
    }
}

/// Appends a Hash's wire JSON text to `out` ([`write_to`] of it as a
/// Value), from a borrowed Hash: a stored document is encoded without
/// first being copied into a Value.
pub(crate) fn write_hash(out: &mut Vec<u8>, h: &Hash) {
    if h.keys().all(|k| matches!(k, Value::String(s) if s != TAG)) {
        out.push(b'{');
        for (i, (k, v)) in h.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_to(out, k);
            out.push(b':');
            write_to(out, v);
        }
        out.push(b'}');
    } else {
        out.extend_from_slice(br#"{"__hierad__":"hash","pairs":["#);
        for (i, (k, v)) in h.iter().enumerate() {
            out.extend_from_slice(if i > 0 { b",[" } else { b"[" });
            write_to(out, k);
            out.push(b',');
            write_to(out, v);
            out.push(b']');
        }
        out.extend_from_slice(b"]}");
    }
}

/// A string as JSON text, with serde_json's escapes (`\"`, `\\`, `\b`,
/// `\f`, `\n`, `\r`, `\t`, other control characters as `\u00xx`), the
/// unescaped runs copied whole. serde_json's own writer, set up per
/// string, cost most of a small answer's writing.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    loop {
        let i = start + plain_len(&bytes[start..]);
        out.extend_from_slice(&bytes[start..i]);
        let Some(&b) = bytes.get(i) else { break };
        let escape = ESCAPE[usize::from(b)];
        start = i + 1;
        if escape == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xF)]);
        } else {
            out.push(b'\\');
            out.push(escape);
        }
    }
    out.push(b'"');
}

/// How many bytes `bytes` starts with that JSON writes as themselves in
/// a string (no control character, `"` or `\\`): eight at a time, as
/// most strings have none (a byte at a time, the scan was most of
/// writing a small answer).
fn plain_len(bytes: &[u8]) -> usize {
    let mut chunks = bytes.chunks_exact(8);
    let mut plain = 0;
    for chunk in &mut chunks {
        let special = specials(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
        if special != 0 {
            return plain + first(special);
        }
        plain += 8;
    }
    // The last few, in a word filled up with plain bytes.
    let rest = chunks.remainder();
    let mut last = [b' '; 8];
    last[..rest.len()].copy_from_slice(rest);
    match specials(u64::from_le_bytes(last)) {
        0 => plain + rest.len(),
        special => plain + first(special),
    }
}

const ONES: u64 = u64::from_le_bytes([1; 8]);
const HIGH: u64 = ONES << 7;

/// The high bit of each byte of `w` (little-endian) under 0x20, or `"`,
/// or `\\`, exactly up to the first such byte (a borrow may mark bytes
/// after it: only the first counts).
fn specials(w: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    control | zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\')))
}

/// The place of the first byte [`specials`] marks.
fn first(special: u64) -> usize {
    (special.trailing_zeros() / 8) as usize
}

/// Per byte, the letter of its escape (`u`: `\u00xx`), or 0 if written
/// as itself.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Decodes wire JSON.
///
/// # Errors
///
/// A malformed `__hierad__` object.
pub fn from_wire(json: Json) -> Result<Value, WireError> {
    let decoding = Decoding::default();
    decoding
        .seed()
        .deserialize(json)
        .map_err(|e| decoding.error(&e))
}

/// Decodes wire JSON text.
///
/// # Errors
///
/// Text that is not JSON, or a malformed tagged value.
pub fn from_str(text: &str) -> Result<Value, WireError> {
    let decoding = Decoding::default();
    let mut de = serde_json::Deserializer::from_str(text);
    // The decoder bounds the depth itself (MAX_JSON_DEPTH), past 128.
    de.disable_recursion_limit();
    decoding
        .seed()
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| decoding.error(&e))
}

/// Parses JSON text holding wire values inside an envelope (an API
/// answer, a request) into `T`: serde_json's 128 levels are lifted, as the
/// stored form of an accepted value nests up to [`MAX_JSON_DEPTH`], and
/// the text's nesting is bounded before the (recursive) parse.
///
/// # Errors
///
/// Text that is not a `T`, or nests past [`MAX_JSON_DEPTH`] plus a few
/// levels of envelope.
pub(crate) fn from_envelope<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, WireError> {
    // Envelopes (an answer, an explanation) add a few levels.
    const ENVELOPE: usize = 8;
    if json_nesting(text.as_bytes()) > MAX_JSON_DEPTH + ENVELOPE {
        return Err(WireError::TooDeep);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    // Bounded just above.
    de.disable_recursion_limit();
    stacker::maybe_grow(STACK_RED_ZONE, 4 * STACK_SEGMENT, || {
        T::deserialize(&mut de)
    })
    .and_then(|v| de.end().map(|()| v))
    .map_err(|e| WireError::Json(e.to_string()))
}

/// How deep brackets nest in JSON text (outside strings); a cheap bound
/// checked before a recursive parse.
fn json_nesting(text: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0, false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Decodes wire values straight from a serde deserializer: from JSON text,
/// no JSON tree is built (request bodies and stored documents are parsed
/// once, into their final values). One per document; [`Decoding::seed`]
/// decodes a value of it.
pub(crate) struct Decoding {
    /// Why the parse stopped at a malformed tagged value: serde's errors
    /// carry only text (and serde_json adds the position to it).
    tag_error: Cell<Option<WireError>>,
    /// The entries and items of the Hashes and Arrays being decoded,
    /// innermost last: each is built once complete, at its exact size.
    /// Grown entry by entry, they were scattered over the heap, and
    /// walking stored documents (every lookup does) was 30% slower.
    entries: RefCell<Vec<(Value, Value)>>,
    items: RefCell<Vec<Value>>,
    /// JSON Arrays and objects open around the value being decoded.
    depth: Cell<usize>,
}

thread_local! {
    /// The work lists the last [`Decoding`] on this thread left, empty,
    /// for the next: a lookup request's two cost more to allocate (past
    /// the allocator's small sizes) than the rest of its fields to parse.
    static SPARE: Cell<Option<WorkLists>> = const { Cell::new(None) };
}

/// [`Decoding::entries`] and [`Decoding::items`], between decodings.
type WorkLists = (Vec<(Value, Value)>, Vec<Value>);

/// Work lists longer than this are not kept: a large document's would
/// hold its memory for as long as the thread lives.
const SPARE_MAX: usize = 1024;

impl Default for Decoding {
    fn default() -> Decoding {
        Decoding::with_capacity(0, 0)
    }
}

impl Decoding {
    /// One whose work lists start with room for `items` Array items and
    /// `entries` Hash entries (a lookup request's hierarchy and scope),
    /// instead of growing to them: this thread's spare lists when it has
    /// them.
    pub(crate) fn with_capacity(items: usize, entries: usize) -> Decoding {
        let (mut entry_list, mut item_list) =
            (SPARE.try_with(Cell::take).ok().flatten()).unwrap_or_default();
        entry_list.reserve(entries);
        item_list.reserve(items);
        Decoding {
            tag_error: Cell::new(None),
            entries: RefCell::new(entry_list),
            items: RefCell::new(item_list),
            depth: Cell::new(0),
        }
    }

    pub(crate) fn seed(&self) -> Decode<'_> {
        Decode(self)
    }

    /// Opens one more JSON level, on a new stack segment if little stack
    /// is left; refused past [`MAX_JSON_DEPTH`].
    fn nested<E: de::Error>(&self, f: impl FnOnce() -> Result<Value, E>) -> Result<Value, E> {
        let depth = self.depth.get() + 1;
        if depth > MAX_JSON_DEPTH {
            self.tag_error.set(Some(WireError::TooDeep));
            return Err(de::Error::custom("nested too deep"));
        }
        self.depth.set(depth);
        let out = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, f);
        self.depth.set(depth - 1);
        out
    }

    /// What stopped a parse: the tagged value's error, or serde's.
    pub(crate) fn error(&self, e: &impl fmt::Display) -> WireError {
        self.tag_error
            .take()
            .unwrap_or_else(|| WireError::Json(e.to_string()))
    }

    /// Whether the parse stopped at a malformed tagged value.
    pub(crate) fn take_tag_error(&self) -> Option<WireError> {
        self.tag_error.take()
    }
}

impl Drop for Decoding {
    fn drop(&mut self) {
        let (entries, items) = (self.entries.get_mut(), self.items.get_mut());
        if entries.capacity() <= SPARE_MAX && items.capacity() <= SPARE_MAX {
            // A parse that stopped part-way leaves values behind.
            entries.clear();
            items.clear();
            let spare = (std::mem::take(entries), std::mem::take(items));
            // Not kept by a thread that is exiting.
            let _ = SPARE.try_with(|cell| cell.set(Some(spare)));
        }
    }
}

/// A [`DeserializeSeed`] of one wire value, from [`Decoding::seed`].
#[derive(Clone, Copy)]
pub(crate) struct Decode<'d>(&'d Decoding);

/// Whether serde_json presents a number with the map type `A`: with
/// `arbitrary_precision`, a number that is not a 64-bit integer comes as a
/// one-entry map of its text, whose key, `"$serde_json::private::Number"`,
/// any JSON object may hold as well (`{"a": {that key: "xyz"}}`
/// was stored as `{"a": 0}`). The map's type tells them apart, and only a
/// number has it; the type is learnt from serde_json itself, once.
fn is_number<A>() -> bool {
    static NUMBER: OnceLock<&'static str> = OnceLock::new();
    let number = NUMBER.get_or_init(|| {
        struct Probe(&'static str);
        impl<'de> serde::Deserialize<'de> for Probe {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Probe, D::Error> {
                struct Visit;
                impl<'de> Visitor<'de> for Visit {
                    type Value = Probe;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("a number")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probe, A::Error> {
                        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                        Ok(Probe(std::any::type_name::<A>()))
                    }
                }
                d.deserialize_any(Visit)
            }
        }
        // Always a map: serde_json is built with arbitrary_precision.
        serde_json::from_str::<Probe>("0.5").map_or("", |p| p.0)
    });
    std::any::type_name::<A>() == *number
}

impl<'de> DeserializeSeed<'de> for Decode<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Decode<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a wire value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Int(n))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(i64::try_from(n).map_or_else(|_| Value::integer(n.into()), Value::Int))
    }

    fn visit_i128<E>(self, n: i128) -> Result<Value, E> {
        Ok(Value::integer(n.into()))
    }

    fn visit_u128<E>(self, n: u128) -> Result<Value, E> {
        Ok(Value::integer(n.into()))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Float(f))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        self.0.nested(|| self.seq(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if is_number::<A>() {
            return match map.next_entry::<IgnoredAny, String>()? {
                Some((_, text)) => Ok(number(&text)),
                None => Err(de::Error::custom("a number without its text")),
            };
        }
        self.0.nested(|| self.map(map))
    }
}

impl Decode<'_> {
    fn seq<'de, A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let start = self.0.items.borrow().len();
        while let Some(item) = seq.next_element_seed(self)? {
            self.0.items.borrow_mut().push(item);
        }
        let mut items = self.0.items.borrow_mut();
        let mut array = Vec::with_capacity(items.len() - start);
        array.extend(items.drain(start..));
        Ok(Value::Array(array))
    }

    fn map<'de, A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let start = self.0.entries.borrow().len();
        while let Some(key) = map.next_key::<String>()? {
            if key == TAG {
                return self.tagged(start, map);
            }
            let v = map.next_value_seed(self)?;
            self.0.entries.borrow_mut().push((Value::String(key), v));
        }
        let mut entries = self.0.entries.borrow_mut();
        let mut h = Hash::with_capacity_and_hasher(entries.len() - start, Default::default());
        // Inserting keeps JSON's rule for a repeated name: the last wins.
        h.extend(entries.drain(start..));
        Ok(Value::Hash(h))
    }

    /// The rest of an object found to hold the tag; its fields written
    /// before the tag are the entries from `start` (decoded as plain
    /// values, which is what the tags' fields are made of).
    fn tagged<'de, A: MapAccess<'de>>(self, start: usize, mut map: A) -> Result<Value, A::Error> {
        let mut fields: [Option<Value>; 3] = Default::default();
        for (k, v) in self.0.entries.borrow_mut().drain(start..) {
            if let Some(i) = TAG_FIELDS.iter().position(|f| k.as_str() == Some(f)) {
                fields[i] = Some(v);
            }
        }
        let mut tag = map.next_value_seed(self)?;
        while let Some(key) = map.next_key::<String>()? {
            if key == TAG {
                tag = map.next_value_seed(self)?;
            } else if let Some(i) = TAG_FIELDS.iter().position(|f| *f == key) {
                fields[i] = Some(map.next_value_seed(self)?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        untag(&tag, fields).map_err(|e| {
            self.0.tag_error.set(Some(e));
            de::Error::custom("malformed tagged value")
        })
    }
}

/// The fields the tags use, in the order [`untag`] receives them.
const TAG_FIELDS: [&str; 3] = ["name", "value", "pairs"];

/// The value a tagged object stands for.
fn untag(tag: &Value, [name, value, pairs]: [Option<Value>; 3]) -> Result<Value, WireError> {
    let field = |v: Option<Value>, name: &str| {
        v.ok_or_else(|| WireError::Tag(format!("{TAG} object without \"{name}\"")))
    };
    match tag.as_str() {
        Some("sym") => match field(name, "name")? {
            Value::String(s) => Ok(Value::Symbol(s)),
            other => Err(WireError::Tag(format!("symbol name {}", to_string(&other)))),
        },
        Some("float") => match field(value, "value")? {
            Value::String(s) if s == "NaN" => Ok(Value::Float(f64::NAN)),
            Value::String(s) if s == "Infinity" => Ok(Value::Float(f64::INFINITY)),
            Value::String(s) if s == "-Infinity" => Ok(Value::Float(f64::NEG_INFINITY)),
            other => Err(WireError::Tag(format!("float value {}", to_string(&other)))),
        },
        Some("hash") => {
            let Value::Array(pairs) = field(pairs, "pairs")? else {
                return Err(WireError::Tag("hash pairs must be a list".into()));
            };
            let mut h = Hash::with_capacity_and_hasher(pairs.len(), Default::default());
            for pair in pairs {
                let pair = match pair {
                    Value::Array(kv) => <[Value; 2]>::try_from(kv).map_err(Value::Array),
                    other => Err(other),
                };
                match pair {
                    Ok([k, v]) => {
                        h.insert(k, v);
                    }
                    Err(other) => {
                        return Err(WireError::Tag(format!("hash pair {}", to_string(&other))));
                    }
                }
            }
            Ok(Value::Hash(h))
        }
        _ => Err(WireError::Tag(format!("unknown tag {}", to_string(tag)))),
    }
}

fn json_number(text: &str) -> Json {
    // With serde_json's arbitrary_precision, a Number keeps its exact text.
    Json::Number(text.parse::<Number>().unwrap_or_else(|_| Number::from(0)))
}

fn tagged(tag: &str, field: &str, value: Json) -> Json {
    let mut map = Map::new();
    map.insert(TAG.to_owned(), Json::String(tag.to_owned()));
    map.insert(field.to_owned(), value);
    Json::Object(map)
}

#[cfg(test)]
mod tests;
