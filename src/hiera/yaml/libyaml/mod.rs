//! A replay of libyaml 0.2.5's scanner over the first document, for where
//! libyaml (YAML 1.1) and saphyr (YAML 1.2) read the same text differently.
//! It builds no tokens; it follows libyaml's state (flow level, block
//! indentation, simple keys) closely enough to tell:
//!
//! - where libyaml's scanner stops, and with which error (its wording and
//!   context mark), to report when saphyr fails at or after that point;
//! - which tabs libyaml skips as mere separation: saphyr refuses some
//!   (`key:\tvalue`), so they become spaces (same length: every position
//!   stays put), and which tabs libyaml refuses where saphyr does not
//!   (`\tkey: v`, `-\tx`, a tab-only line after a plain scalar);
//! - comments glued to a token (`[a,#c`), which libyaml reads and saphyr
//!   refuses: they are blanked out;
//! - the value of each block scalar, which libyaml ends differently at the
//!   end of the text (`a: |\n  x` is `"x"`, not `"x\n"`);
//! - on request, the lines saphyr wants indented further where libyaml
//!   does not care (inside flow collections and multi-line quoted
//!   scalars): they get leading spaces, which folding drops.

use std::borrow::Cow;

/// An error libyaml's scanner raises.
#[derive(Clone, Debug)]
pub(super) struct Refusal {
    /// Character index (in the text handed to saphyr) of the token libyaml
    /// was reading when it stopped, to order it against saphyr's error.
    pub(crate) index: usize,
    pub(crate) problem: &'static str,
    pub(crate) context: Option<&'static str>,
    /// libyaml's context mark, 0-based, in the original text.
    pub(crate) line: usize,
    pub(crate) col: usize,
    /// A tab refused where saphyr might accept it.
    pub(crate) tab: bool,
}

/// The text saphyr should read, libyaml's first scanner error, and the
/// spaces inserted (0-based line, count) to map saphyr's columns back.
pub(super) struct Replay<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) refusal: Option<Refusal>,
    pub(crate) pads: Vec<(usize, usize)>,
    /// The block scalars, as libyaml reads them.
    pub(crate) blocks: Vec<Block>,
}

/// A block scalar as libyaml reads it.
pub(super) struct Block {
    /// Character indices (in `text`) of its `|` or `>`, and of where
    /// libyaml's scanner stands after it.
    pub(crate) indicator: usize,
    pub(crate) end: usize,
    pub(crate) value: String,
}

/// Replays libyaml's scanner over `text`; `pad` also indents the lines
/// saphyr would refuse as under-indented.
pub(super) fn replay(text: &str, pad: bool) -> Replay<'_> {
    let mut scan = Scan::new(text, pad);
    while scan.next_token().is_ok() {}
    let Scan {
        replace,
        blank,
        mut refusal,
        pads,
        mut blocks,
        ..
    } = scan;
    if replace.is_empty() && blank.is_empty() && pads.is_empty() {
        return Replay {
            text: Cow::Borrowed(text),
            refusal,
            pads: Vec::new(),
            blocks,
        };
    }
    // 0xFF never occurs in UTF-8: it marks bytes to drop.
    const DROP: u8 = 0xFF;
    let mut bytes = text.as_bytes().to_vec();
    for i in replace {
        bytes[i] = b' ';
    }
    for (start, end) in blank {
        for b in &mut bytes[start..end] {
            *b = if *b & 0xC0 == 0x80 { DROP } else { b' ' };
        }
    }
    let added: usize = pads.iter().map(|p| p.count).sum();
    let mut out = Vec::with_capacity(bytes.len() + added);
    let mut next_pad = pads.iter().peekable();
    for (i, &b) in bytes.iter().enumerate() {
        while let Some(p) = next_pad.next_if(|p| p.byte == i) {
            out.resize(out.len() + p.count, b' ');
        }
        if b != DROP {
            out.push(b);
        }
    }
    // Characters inserted at or before a position move it.
    let inserted: Vec<usize> = pads
        .iter()
        .scan(0, |sum, p| {
            *sum += p.count;
            Some(*sum)
        })
        .collect();
    let moved = |index: usize| match pads.partition_point(|p| p.index <= index) {
        0 => index,
        n => index + inserted[n - 1],
    };
    if let Some(r) = refusal.as_mut() {
        r.index = moved(r.index);
    }
    for block in &mut blocks {
        block.indicator = moved(block.indicator);
        block.end = moved(block.end);
    }
    Replay {
        text: Cow::Owned(String::from_utf8(out).expect("only ASCII spaces changed")),
        refusal,
        pads: pads.iter().map(|p| (p.line, p.count)).collect(),
        blocks,
    }
}

/// Spaces to insert at a line start.
struct Pad {
    /// Byte offset and character index of the line start.
    byte: usize,
    index: usize,
    line: usize,
    count: usize,
}

/// A possible simple key, as libyaml tracks one per flow level.
#[derive(Clone, Copy, Default)]
struct Key {
    possible: bool,
    required: bool,
    line: usize,
    index: usize,
    col: usize,
}

/// An open flow collection.
#[derive(Clone, Copy)]
struct FlowOpen {
    mapping: bool,
    mark: (usize, usize),
    /// Its current entry started with `?`.
    explicit_key: bool,
}

/// The replay ended: libyaml stops here (an error, the end of the first
/// document, or the end of the text).
struct Stop;

type Step = Result<(), Stop>;

struct Scan<'t> {
    text: &'t str,
    bytes: &'t [u8],
    /// Byte offset, character index, 0-based line and character column.
    i: usize,
    ci: usize,
    line: usize,
    col: usize,
    /// Where the token being read starts.
    token_start: usize,
    flow: usize,
    /// Column of the outermost open flow collection.
    flow_col: usize,
    indent: i64,
    indents: Vec<i64>,
    simple_key_allowed: bool,
    keys: Vec<Key>,
    flows: Vec<FlowOpen>,
    /// The last token completed a node (a scalar, an alias, a flow end).
    after_node: bool,
    seen_content: bool,
    seen_directive: bool,
    /// The `%YAML` directives and `%TAG` handles of the document.
    versions: usize,
    tag_handles: Vec<String>,
    /// Byte offsets of tabs to turn into spaces.
    replace: Vec<usize>,
    /// Byte ranges of comments saphyr would refuse, to blank out (one
    /// space per character).
    blank: Vec<(usize, usize)>,
    refusal: Option<Refusal>,
    pad: bool,
    pads: Vec<Pad>,
    blocks: Vec<Block>,
}

// The scanner works on bytes: every character it tests is ASCII, and the
// bytes of other characters never equal one.
fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

fn is_break(c: u8) -> bool {
    c == b'\n' || c == b'\r'
}

/// Blank, break or end of text (`0` stands for the end).
fn is_blankz(c: u8) -> bool {
    is_blank(c) || is_break(c) || c == 0
}

/// libyaml's `IS_ALPHA`: the characters of anchors and tag handles.
fn is_alpha(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// Whether `c` is one of the ASCII characters in `set`.
fn one_of(c: u8, set: &str) -> bool {
    c != 0 && set.as_bytes().contains(&c)
}

impl<'t> Scan<'t> {
    fn new(text: &'t str, pad: bool) -> Scan<'t> {
        Scan {
            text,
            bytes: text.as_bytes(),
            i: 0,
            ci: 0,
            line: 0,
            col: 0,
            token_start: 0,
            flow: 0,
            flow_col: 0,
            indent: -1,
            indents: Vec::new(),
            simple_key_allowed: true,
            keys: vec![Key::default()],
            flows: Vec::new(),
            after_node: false,
            seen_content: false,
            seen_directive: false,
            versions: 0,
            tag_handles: Vec::new(),
            replace: Vec::new(),
            blank: Vec::new(),
            refusal: None,
            pad,
            pads: Vec::new(),
            blocks: Vec::new(),
        }
    }

    fn at(&self, k: usize) -> u8 {
        self.bytes.get(self.i + k).copied().unwrap_or(0)
    }

    fn at_end(&self) -> bool {
        self.i >= self.bytes.len()
    }

    /// Steps over one byte; a character counts at its first byte.
    fn skip(&mut self) {
        if self.at(0) & 0xC0 != 0x80 {
            self.ci += 1;
            self.col += 1;
        }
        self.i += 1;
    }

    fn skip_line(&mut self) {
        if self.at(0) == b'\r' && self.at(1) == b'\n' {
            self.i += 1;
            self.ci += 1;
        }
        self.i += 1;
        self.ci += 1;
        self.line += 1;
        self.col = 0;
    }

    /// Records libyaml's error, noticed at the current position.
    fn refuse(
        &mut self,
        problem: &'static str,
        context: Option<&'static str>,
        (line, col): (usize, usize),
    ) -> Step {
        self.refusal = Some(Refusal {
            index: self.token_start,
            problem,
            context,
            line,
            col,
            tab: false,
        });
        Err(Stop)
    }

    fn refuse_tab(
        &mut self,
        problem: &'static str,
        context: &'static str,
        mark: (usize, usize),
    ) -> Step {
        let _ = self.refuse(problem, Some(context), mark);
        if let Some(r) = self.refusal.as_mut() {
            r.tab = true;
        }
        Err(Stop)
    }

    fn here(&self) -> (usize, usize) {
        (self.line, self.col)
    }

    fn is_document_indicator(&self) -> bool {
        self.col == 0
            && (self.bytes[self.i..].starts_with(b"---")
                || self.bytes[self.i..].starts_with(b"..."))
            && is_blankz(self.at(3))
    }

    /// Pads the line starting at `start` up to `want` columns, for saphyr.
    fn pad_line(&mut self, (byte, index): (usize, usize), want: usize) {
        if self.pad && self.col < want && !self.is_document_indicator() && self.at(0) != b'%' {
            self.pads.push(Pad {
                byte,
                index,
                line: self.line,
                count: want - self.col,
            });
        }
    }

    /// One round of libyaml's `fetch_next_token`.
    fn next_token(&mut self) -> Step {
        self.scan_to_next_token();
        self.token_start = self.ci;
        self.stale_keys()?;
        self.unroll(self.col as i64);
        let c = self.at(0);
        if self.at_end() {
            // STREAM-END: a pending required key is an error.
            self.unroll(-1);
            self.remove_key()?;
            return Err(Stop);
        }
        if self.col == 0 && c == b'%' {
            if self.seen_content {
                return Err(Stop);
            }
            return self.directive();
        }
        if self.is_document_indicator() {
            if c == b'.' && !self.seen_content {
                // The implicit first document has no content: an error of
                // libyaml's parser, unless directives made it explicit.
                let here = self.here();
                return if self.seen_directive {
                    self.refuse("did not find expected <document start>", None, (0, 0))
                } else {
                    self.refuse(
                        "did not find expected node content",
                        Some("while parsing a block node"),
                        here,
                    )
                };
            }
            if self.seen_content || c == b'.' {
                self.unroll(-1);
                self.remove_key()?;
                return Err(Stop);
            }
            self.unroll(-1);
            self.remove_key()?;
            self.simple_key_allowed = false;
            self.seen_content = true;
            (0..3).for_each(|_| self.skip());
            return Ok(());
        }
        self.seen_content = true;
        let next = self.at(1);
        let after_node = std::mem::replace(&mut self.after_node, false);
        match c {
            b'[' | b'{' => {
                self.save_key()?;
                if self.flow > super::tree::MAX_DEPTH {
                    // Deeper than anything loads; the parse reports it.
                    return Err(Stop);
                }
                if self.flow == 0 {
                    self.flow_col = self.col;
                }
                self.flow += 1;
                self.keys.push(Key::default());
                self.flows.push(FlowOpen {
                    mapping: c == b'{',
                    mark: self.here(),
                    explicit_key: false,
                });
                self.simple_key_allowed = true;
                self.skip();
            }
            b']' | b'}' => {
                self.remove_key()?;
                if self.flow > 0 {
                    self.flow -= 1;
                    self.keys.pop();
                    self.flows.pop();
                }
                self.simple_key_allowed = false;
                self.skip();
                self.after_node = true;
            }
            b',' => {
                self.remove_key()?;
                self.simple_key_allowed = true;
                self.skip();
                if let Some(f) = self.flows.last_mut() {
                    f.explicit_key = false;
                }
            }
            b'-' if is_blankz(next) => {
                if self.flow == 0 {
                    if !self.simple_key_allowed {
                        let here = self.here();
                        return self.refuse(
                            "block sequence entries are not allowed in this context",
                            None,
                            here,
                        );
                    }
                    self.roll(self.col as i64);
                }
                self.remove_key()?;
                self.simple_key_allowed = true;
                self.skip();
            }
            b'?' if self.flow > 0 || is_blankz(next) => {
                if self.flow == 0 {
                    if !self.simple_key_allowed {
                        let here = self.here();
                        return self.refuse(
                            "mapping keys are not allowed in this context",
                            None,
                            here,
                        );
                    }
                    self.roll(self.col as i64);
                }
                self.remove_key()?;
                self.simple_key_allowed = self.flow == 0;
                self.skip();
                if let Some(f) = self.flows.last_mut() {
                    f.explicit_key = true;
                }
            }
            b':' if self.flow > 0 || is_blankz(next) => self.value(after_node)?,
            b'*' | b'&' => {
                self.save_key()?;
                self.simple_key_allowed = false;
                self.anchor(c == b'&')?;
                self.after_node = c == b'*';
            }
            b'!' => {
                self.save_key()?;
                self.simple_key_allowed = false;
                self.tag()?;
            }
            b'|' | b'>' if self.flow == 0 => {
                self.remove_key()?;
                self.simple_key_allowed = true;
                self.block_scalar()?;
                self.after_node = true;
            }
            b'\'' | b'"' => {
                self.save_key()?;
                self.simple_key_allowed = false;
                self.quoted(c == b'\'')?;
                self.after_node = true;
            }
            _ if self.plain_start(c, next) => {
                self.save_key()?;
                self.simple_key_allowed = false;
                self.plain()?;
                self.after_node = true;
            }
            _ => {
                let here = self.here();
                let problem = "found character that cannot start any token";
                let context = "while scanning for the next token";
                return if c == b'\t' {
                    self.refuse_tab(problem, context, here)
                } else {
                    self.refuse(problem, Some(context), here)
                };
            }
        }
        Ok(())
    }

    fn plain_start(&self, c: u8, next: u8) -> bool {
        !(is_blankz(c) || one_of(c, "-?:,[]{}#&*!|>'\"%@`"))
            || (c == b'-' && !is_blank(next))
            || (self.flow == 0 && (c == b'?' || c == b':') && !is_blankz(next))
    }

    /// `scan_to_next_token`: tabs are skipped only in the flow context or
    /// where no simple key may start.
    fn scan_to_next_token(&mut self) {
        let mut line_start = None;
        loop {
            if self.col == 0 && self.bytes[self.i..].starts_with("\u{feff}".as_bytes()) {
                (0..3).for_each(|_| self.skip());
            }
            while self.at(0) == b' '
                || ((self.flow > 0 || !self.simple_key_allowed) && self.at(0) == b'\t')
            {
                if self.at(0) == b'\t' {
                    self.replace.push(self.i);
                }
                self.skip();
            }
            if let Some(start) = line_start.take() {
                if self.flow > 0 && !is_break(self.at(0)) && !self.at_end() {
                    self.pad_line(start, self.flow_col + 1);
                }
            }
            if self.at(0) == b'#' {
                self.comment();
            }
            if is_break(self.at(0)) {
                self.skip_line();
                line_start = Some((self.i, self.ci));
                if self.flow == 0 {
                    self.simple_key_allowed = true;
                }
            } else {
                break;
            }
        }
    }

    /// A comment, to the end of the line. libyaml takes `#` for one
    /// wherever a token may start; saphyr (YAML 1.2) wants a blank before
    /// it, so one glued to the previous token is blanked out.
    fn comment(&mut self) {
        let start = self.i;
        let glued = start > 0 && !is_blankz(self.bytes[start - 1]);
        while !is_break(self.at(0)) && !self.at_end() {
            self.skip();
        }
        if glued {
            self.blank.push((start, self.i));
        }
    }

    fn stale_keys(&mut self) -> Step {
        let (line, i) = (self.line, self.ci);
        for k in 0..self.keys.len() {
            let key = self.keys[k];
            if key.possible && (key.line < line || key.index + 1024 < i) {
                if key.required {
                    return self.missing_colon(key);
                }
                self.keys[k].possible = false;
            }
        }
        Ok(())
    }

    fn missing_colon(&mut self, key: Key) -> Step {
        self.refuse(
            "could not find expected ':'",
            Some("while scanning a simple key"),
            (key.line, key.col),
        )
    }

    fn save_key(&mut self) -> Step {
        let required = self.flow == 0 && self.indent == self.col as i64;
        if self.simple_key_allowed {
            self.remove_key()?;
            let key = Key {
                possible: true,
                required,
                line: self.line,
                index: self.ci,
                col: self.col,
            };
            *self.keys.last_mut().expect("one key slot per level") = key;
        }
        Ok(())
    }

    fn remove_key(&mut self) -> Step {
        let key = *self.keys.last().expect("one key slot per level");
        if key.possible && key.required {
            return self.missing_colon(key);
        }
        self.keys
            .last_mut()
            .expect("one key slot per level")
            .possible = false;
        Ok(())
    }

    fn roll(&mut self, col: i64) {
        if self.flow == 0 && self.indent < col {
            self.indents.push(self.indent);
            self.indent = col;
        }
    }

    fn unroll(&mut self, col: i64) {
        if self.flow > 0 {
            return;
        }
        while self.indent > col {
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    /// A `:`; `after_node` when a complete node comes just before it.
    fn value(&mut self, after_node: bool) -> Step {
        let flow = self.flow;
        let key = *self.keys.last().expect("one key slot per level");
        let explicit_key = self.flows.last().is_some_and(|f| f.explicit_key);
        if let Some(f) = self.flows.last_mut() {
            f.explicit_key = false;
        }
        if flow > 0 && !key.possible && after_node && !explicit_key {
            // A key that is no simple key (it spans lines, or runs past
            // 1024 characters) and was not introduced by `?`: libyaml's
            // parser finds the value where it wants `,` or the end.
            let open = *self.flows.last().expect("a flow collection is open");
            let (problem, context) = if open.mapping {
                (
                    "did not find expected ',' or '}'",
                    "while parsing a flow mapping",
                )
            } else {
                (
                    "did not find expected ',' or ']'",
                    "while parsing a flow sequence",
                )
            };
            return self.refuse(problem, Some(context), open.mark);
        }
        if key.possible {
            if flow == 0 {
                self.roll(key.col as i64);
            }
            self.keys
                .last_mut()
                .expect("one key slot per level")
                .possible = false;
            self.simple_key_allowed = false;
        } else {
            if flow == 0 {
                if !self.simple_key_allowed {
                    let here = self.here();
                    return self.refuse(
                        "mapping values are not allowed in this context",
                        None,
                        here,
                    );
                }
                self.roll(self.col as i64);
            }
            self.simple_key_allowed = flow == 0;
        }
        self.skip();
        Ok(())
    }
}

mod directives;
mod scalars;
#[cfg(test)]
mod tests;
