//! A lookup request's usual form read without serde (issue 15, goal 3):
//! an object of Strings, small integers, `true`, `false`, `null`, and
//! Arrays and objects of them, as the shim and `hierad bench` send it.
//! serde_json's visitors, its per-field seeds and the wire decoder's
//! bookkeeping cost more than the reading itself on a 200-byte body.
//!
//! It only ever accepts: anything it is not sure of (a `\u` escape, a
//! Float, a tagged value, deep nesting, any malformed text) makes it give
//! up, and [`super::read_fields`] reads the body again, with its exact
//! errors. What it accepts, it reads into the very [`Fields`] that
//! `read_fields` gives (a test checks this on mangled requests).

use super::{FIELDS, Fields};
use crate::hiera::{Hash, Value};
use crate::wire::{self, TAG};
use std::borrow::Cow;

/// The nesting it follows; deeper values are left to serde.
const DEPTH: usize = 16;

/// The digits of an integer it reads (any 18 fit an `i64`).
const DIGITS: usize = 18;

/// The request's fields, or `None`: left to [`super::read_fields`].
pub(super) fn fields(text: &str) -> Option<Fields> {
    let mut r = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
        // Room for a node's scope (a registered hierarchy's requests
        // have no Array).
        entries: Vec::with_capacity(8),
        items: Vec::new(),
    };
    let mut fields = Fields {
        unknown: None,
        values: Default::default(),
    };
    r.ws();
    r.eat(b'{')?;
    r.ws();
    if !r.eat_if(b'}') {
        loop {
            r.ws();
            let name = r.string()?;
            r.ws();
            r.eat(b':')?;
            r.ws();
            let value = r.value(0)?;
            match FIELDS.iter().position(|f| *f == name) {
                // A repeated field: the last wins, as in serde's reading.
                Some(i) => fields.values[i] = Some(value),
                None if name == "format" => {}
                None => {
                    fields.unknown.get_or_insert_with(|| name.into_owned());
                }
            }
            r.ws();
            if !r.eat_if(b',') {
                r.eat(b'}')?;
                break;
            }
        }
    }
    r.ws();
    (r.at == r.bytes.len()).then_some(fields)
}

struct Reader<'t> {
    text: &'t str,
    bytes: &'t [u8],
    at: usize,
    /// The entries and items of the objects and Arrays being read,
    /// innermost last (each built once complete, at its exact size, as
    /// [`wire::Decoding`] does).
    entries: Vec<(Value, Value)>,
    items: Vec<Value>,
}

impl<'t> Reader<'t> {
    /// Skips JSON's whitespace (not the form feed: serde refuses it).
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn eat_if(&mut self, b: u8) -> bool {
        let here = self.bytes.get(self.at) == Some(&b);
        if here {
            self.at += 1;
        }
        here
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        self.eat_if(b).then_some(())
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        match *self.bytes.get(self.at)? {
            b'"' => Some(Value::String(self.string()?.into_owned())),
            b'{' if depth < DEPTH => self.object(depth + 1),
            b'[' if depth < DEPTH => self.array(depth + 1),
            b't' => self.word(b"true", Value::Bool(true)),
            b'f' => self.word(b"false", Value::Bool(false)),
            b'n' => self.word(b"null", Value::Nil),
            b'-' | b'0'..=b'9' => self.integer(),
            _ => None,
        }
    }

    fn word(&mut self, word: &[u8], value: Value) -> Option<Value> {
        self.bytes[self.at..].starts_with(word).then(|| {
            self.at += word.len();
            value
        })
    }

    /// An integer of up to [`DIGITS`] digits, as serde_json and
    /// `hiera::json::number` read it (`-0` is 0); not a Float.
    fn integer(&mut self) -> Option<Value> {
        let start = self.at;
        self.eat_if(b'-');
        let digits = self.at;
        while let Some(b'0'..=b'9') = self.bytes.get(self.at) {
            self.at += 1;
        }
        let count = self.at - digits;
        if count == 0 || count > DIGITS || (count > 1 && self.bytes[digits] == b'0') {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = self.bytes.get(self.at) {
            return None;
        }
        self.text[start..self.at].parse().ok().map(Value::Int)
    }

    /// A String without escapes is borrowed from the text.
    fn string(&mut self) -> Option<Cow<'t, str>> {
        self.eat(b'"')?;
        let start = self.at;
        self.at += wire::plain_len(&self.bytes[start..]);
        match *self.bytes.get(self.at)? {
            b'"' => {
                let s = &self.text[start..self.at];
                self.at += 1;
                Some(Cow::Borrowed(s))
            }
            b'\\' => self.unescape(start).map(Cow::Owned),
            // A control character: serde refuses it.
            _ => None,
        }
    }

    /// The rest of a String whose text from `start` has no escape up to
    /// the backslash at the reader's place.
    fn unescape(&mut self, start: usize) -> Option<String> {
        let mut out = self.text[start..self.at].to_owned();
        loop {
            // Up to the next special byte, whole (an ASCII byte ends it:
            // the run is whole UTF-8 characters).
            let run = self.at;
            self.at += wire::plain_len(&self.bytes[run..]);
            out.push_str(&self.text[run..self.at]);
            let b = *self.bytes.get(self.at)?;
            self.at += 1;
            match b {
                b'"' => return Some(out),
                b'\\' => {
                    out.push(match *self.bytes.get(self.at)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        // `\u`: surrogates and their errors are serde's.
                        _ => return None,
                    });
                    self.at += 1;
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        self.at += 1;
        let start = self.entries.len();
        self.ws();
        if !self.eat_if(b'}') {
            loop {
                self.ws();
                let key = self.string()?;
                // A tagged value: the wire decoder's.
                if key == TAG {
                    return None;
                }
                self.ws();
                self.eat(b':')?;
                self.ws();
                let value = self.value(depth)?;
                self.entries.push((Value::String(key.into_owned()), value));
                self.ws();
                if !self.eat_if(b',') {
                    self.eat(b'}')?;
                    break;
                }
            }
        }
        let mut h = Hash::with_capacity_and_hasher(self.entries.len() - start, Default::default());
        // A repeated name: the last value, at the first one's place.
        h.extend(self.entries.drain(start..));
        Some(Value::Hash(h))
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        self.at += 1;
        let start = self.items.len();
        self.ws();
        if !self.eat_if(b']') {
            loop {
                self.ws();
                let item = self.value(depth)?;
                self.items.push(item);
                self.ws();
                if !self.eat_if(b',') {
                    self.eat(b']')?;
                    break;
                }
            }
        }
        let mut array = Vec::with_capacity(self.items.len() - start);
        array.extend(self.items.drain(start..));
        Some(Value::Array(array))
    }
}

#[cfg(test)]
mod tests;
