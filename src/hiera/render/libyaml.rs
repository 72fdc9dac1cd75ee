//! The parts of libyaml 0.2.5's emitter (emitter.c) that Psych's `to_yaml`
//! drives: one explicit document (`---`) holding block collections, empty
//! flow collections and scalars, with libyaml's own choice of scalar style,
//! its quoting and escaping, and its folding of long lines at 80 columns.
//! No I/O.
//!
//! The emitter's state variables (column, indent stack, the `whitespace`
//! and `indention` flags, `open_ended`) are kept as in C because every one
//! of them shows in the output. Psych's settings are fixed: indent 2, width
//! 80, unicode output on, never canonical. Anchors, aliases and folded
//! (`>`) scalars are left out: Psych emits them only for shared objects and
//! for an explicit `line_width`, neither of which a Hiera value can carry.
//! Flow style is only ever used for empty collections (`[]`, `{}`), so no
//! scalar is written in flow context and the flow-only rules are left out.

/// A node as Psych's `YAMLTree` hands it to the emitter.
pub(super) enum Node {
    Scalar(Scalar),
    Sequence(Vec<Node>),
    Mapping(Vec<(Node, Node)>),
}

/// A scalar event: `Psych::Emitter#scalar(value, nil, tag, plain, quoted,
/// style)`.
pub(super) struct Scalar {
    pub(crate) value: String,
    pub(crate) tag: Option<&'static str>,
    /// May be written plain without its tag.
    pub(crate) plain_implicit: bool,
    /// May be written quoted without its tag.
    pub(crate) quoted_implicit: bool,
    pub(crate) style: Style,
}

/// The style Psych asks for; libyaml may still pick another.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Style {
    Any,
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

const BEST_INDENT: i32 = 2;
const BEST_WIDTH: usize = 80;

/// libyaml's default `%TAG` directives, in the order it tries them.
const TAG_DIRECTIVES: [(&str, &str); 2] = [("!", "!"), ("!!", "tag:yaml.org,2002:")];

/// Emits a stream holding one document whose root is `root`, as Psych's
/// `to_yaml` does (explicit start, implicit end).
pub(super) fn emit_document(root: &Node) -> String {
    let mut e = Emitter {
        out: String::new(),
        column: 0,
        whitespace: true,
        indention: true,
        indent: -1,
        indents: Vec::new(),
        open_ended: 0,
        simple_key_context: false,
    };
    // DOCUMENT-START, not implicit.
    e.write_indent();
    e.write_indicator("---", true, false, false);
    e.open_ended = 0;
    e.emit_node(root, false, false);
    // DOCUMENT-END, implicit.
    e.write_indent();
    if e.open_ended == 0 {
        e.open_ended = 1;
    }
    // STREAM-END: a trailing `|+` block scalar needs an explicit end.
    if e.open_ended == 2 {
        e.write_indicator("...", true, false, false);
        e.write_indent();
    }
    e.out
}

struct Emitter {
    out: String,
    /// Characters (not bytes) written on the current line.
    column: usize,
    /// The last thing written was whitespace.
    whitespace: bool,
    /// Only indentation has been written on the current line.
    indention: bool,
    indent: i32,
    indents: Vec<i32>,
    /// 2 after a block scalar kept with `+`: the stream must end with `...`.
    open_ended: u8,
    simple_key_context: bool,
}

/// What `yaml_emitter_analyze_scalar` learns about a scalar's text.
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// A tag as it will be written: `handle` + `suffix`, or `!<suffix>`.
#[derive(Clone, Copy, Default)]
struct TagData {
    handle: Option<&'static str>,
    suffix: Option<&'static str>,
}

impl TagData {
    fn len(&self) -> usize {
        self.handle.map_or(0, str::len) + self.suffix.map_or(0, str::len)
    }

    fn is_none(&self) -> bool {
        self.handle.is_none() && self.suffix.is_none()
    }
}

impl Emitter {
    /// `yaml_emitter_emit_node`.
    fn emit_node(&mut self, node: &Node, mapping_context: bool, simple_key: bool) {
        self.simple_key_context = simple_key;
        match node {
            Node::Scalar(s) => self.emit_scalar(s),
            Node::Sequence(items) if items.is_empty() => self.emit_empty_flow("[", "]"),
            Node::Mapping(pairs) if pairs.is_empty() => self.emit_empty_flow("{", "}"),
            Node::Sequence(items) => {
                // A sequence that is a mapping's value on the key's line is
                // not indented ("indentless").
                self.increase_indent(false, mapping_context && !self.indention);
                for item in items {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    self.emit_node(item, false, false);
                }
                self.pop_indent();
            }
            Node::Mapping(pairs) => {
                self.increase_indent(false, false);
                for (key, value) in pairs {
                    self.write_indent();
                    if check_simple_key(key) {
                        self.emit_node(key, true, true);
                        self.write_indicator(":", false, false, false);
                    } else {
                        self.write_indicator("?", true, false, true);
                        self.emit_node(key, true, false);
                        self.write_indent();
                        self.write_indicator(":", true, false, true);
                    }
                    self.emit_node(value, true, false);
                }
                self.pop_indent();
            }
        }
    }

    fn emit_empty_flow(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.increase_indent(true, false);
        self.pop_indent();
        self.write_indicator(close, false, false, false);
    }

    /// `yaml_emitter_emit_scalar`.
    fn emit_scalar(&mut self, s: &Scalar) {
        let analysis = analyze_scalar(&s.value);
        let mut tag = scalar_tag(s);
        let style = self.select_scalar_style(s, &analysis, &mut tag);
        self.process_tag(tag);
        self.increase_indent(true, false);
        let allow_breaks = !self.simple_key_context;
        match style {
            Style::Any | Style::Plain => self.write_plain(&s.value, allow_breaks),
            Style::SingleQuoted => self.write_single_quoted(&s.value, allow_breaks),
            Style::DoubleQuoted => self.write_double_quoted(&s.value, allow_breaks),
            Style::Literal => self.write_literal(&s.value),
        }
        self.pop_indent();
    }

    /// `yaml_emitter_select_scalar_style`.
    fn select_scalar_style(&self, s: &Scalar, a: &Analysis, tag: &mut TagData) -> Style {
        let no_tag = tag.is_none();
        let mut style = if s.style == Style::Any {
            Style::Plain
        } else {
            s.style
        };
        if self.simple_key_context && a.multiline {
            style = Style::DoubleQuoted;
        }
        if style == Style::Plain {
            if !a.block_plain_allowed {
                style = Style::SingleQuoted;
            }
            if s.value.is_empty() && self.simple_key_context {
                style = Style::SingleQuoted;
            }
            if no_tag && !s.plain_implicit {
                style = Style::SingleQuoted;
            }
        }
        if style == Style::SingleQuoted && !a.single_quoted_allowed {
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal && (!a.block_allowed || self.simple_key_context) {
            style = Style::DoubleQuoted;
        }
        // A quoted scalar that may only be implicit when plain keeps its
        // type through the non-specific tag `!`.
        if no_tag && !s.quoted_implicit && style != Style::Plain {
            tag.handle = Some("!");
        }
        style
    }

    /// `yaml_emitter_process_tag`.
    fn process_tag(&mut self, tag: TagData) {
        match (tag.handle, tag.suffix) {
            (None, None) => {}
            (Some(handle), suffix) => {
                if !self.whitespace {
                    self.put(' ');
                }
                self.write_str(handle);
                self.whitespace = false;
                self.indention = false;
                if let Some(suffix) = suffix {
                    self.write_tag_content(suffix);
                }
            }
            (None, Some(suffix)) => {
                self.write_indicator("!<", true, false, false);
                self.write_tag_content(suffix);
                self.write_indicator(">", false, false, false);
            }
        }
    }

    fn write_tag_content(&mut self, content: &str) {
        for c in content.chars() {
            if c.is_ascii_alphanumeric() || ";/?:@&=+$,_.~*'()[]-".contains(c) {
                self.write(c);
            } else {
                let mut buf = [0u8; 4];
                for byte in c.encode_utf8(&mut buf).bytes() {
                    self.write_str(&format!("%{byte:02X}"));
                }
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().expect("balanced indents");
    }

    // Output primitives: PUT, PUT_BREAK, WRITE, WRITE_BREAK.

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn write_str(&mut self, s: &str) {
        for c in s.chars() {
            self.write(c);
        }
    }

    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        self.write_str(indicator);
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    fn write_plain(&mut self, value: &str, allow_breaks: bool) {
        // No space before an empty value: `key:` rather than `key: `.
        if !self.whitespace && !value.is_empty() {
            self.put(' ');
        }
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent();
                } else {
                    self.write(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let last = chars.len().wrapping_sub(1);
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i != 0
                    && i != last
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent();
                } else {
                    self.write(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.write(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        if breaks {
            self.write_indent();
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let last = chars.len().wrapping_sub(1);
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\x07' => self.put('a'),
                    '\x08' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\x0b' => self.put('v'),
                    '\x0c' => self.put('f'),
                    '\r' => self.put('r'),
                    '\x1b' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{a0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    c => {
                        let code = c as u32;
                        let escaped = if code <= 0xff {
                            format!("x{code:02X}")
                        } else if code <= 0xffff {
                            format!("u{code:04X}")
                        } else {
                            format!("U{code:08X}")
                        };
                        for e in escaped.chars() {
                            self.put(e);
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i != 0 && i != last {
                    self.write_indent();
                    // A space opening the next line would be lost: escape it.
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.write(c);
                }
                spaces = true;
            } else {
                self.write(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        self.write_block_scalar_hints(value);
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in value.chars() {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(c);
                self.indention = false;
                breaks = false;
            }
        }
    }

    /// The indentation indicator (when the text starts with a space or a
    /// break) and the chomping indicator (`-` without a final break, `+`
    /// with more than one).
    fn write_block_scalar_hints(&mut self, value: &str) {
        let mut chars = value.chars();
        if matches!(chars.next(), Some(c) if c == ' ' || is_break(c)) {
            self.write_indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        self.open_ended = 0;
        let mut rev = value.chars().rev();
        let chomp = match (rev.next(), rev.next()) {
            (None, _) => Some("-"),
            (Some(c), _) if !is_break(c) => Some("-"),
            (Some(_), None) => {
                self.open_ended = 2;
                Some("+")
            }
            (Some(_), Some(c)) if is_break(c) => {
                self.open_ended = 2;
                Some("+")
            }
            _ => None,
        };
        if let Some(chomp) = chomp {
            self.write_indicator(chomp, false, false, false);
        }
    }
}

/// The tag libyaml writes for a scalar (`yaml_emitter_analyze_tag`): only
/// when neither implicit flag is set, shortened by a `%TAG` handle.
fn scalar_tag(s: &Scalar) -> TagData {
    let Some(tag) = s.tag else {
        return TagData::default();
    };
    if s.plain_implicit || s.quoted_implicit {
        return TagData::default();
    }
    for (handle, prefix) in TAG_DIRECTIVES {
        if prefix.len() < tag.len() && tag.starts_with(prefix) {
            return TagData {
                handle: Some(handle),
                suffix: Some(&tag[prefix.len()..]),
            };
        }
    }
    TagData {
        handle: None,
        suffix: Some(tag),
    }
}

/// `yaml_emitter_check_simple_key`: whether a key can be written as
/// `key: value` rather than `? key`.
fn check_simple_key(node: &Node) -> bool {
    match node {
        Node::Scalar(s) => {
            !analyze_scalar(&s.value).multiline && scalar_tag(s).len() + s.value.len() <= 128
        }
        Node::Sequence(items) => items.is_empty(),
        Node::Mapping(pairs) => pairs.is_empty(),
    }
}

/// libyaml's IS_PRINTABLE: what it may write unescaped (no C0/C1 controls
/// but `\n`, no surrogates, BOM or non-characters, nothing beyond the BMP).
fn is_printable(c: char) -> bool {
    matches!(c as u32, 0x0a | 0x20..=0x7e | 0xa0..=0xd7ff | 0xe000..=0xfffd) && c != '\u{feff}'
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// IS_BLANKZ: a blank, a break, NUL, or the end of the text.
fn is_blankz(c: Option<&char>) -> bool {
    match c {
        None => true,
        Some(&c) => matches!(c, ' ' | '\t' | '\0') || is_break(c),
    }
}

/// `yaml_emitter_analyze_scalar`: which styles can represent `value`.
fn analyze_scalar(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let chars: Vec<char> = value.chars().collect();
    let last = chars.len() - 1;
    let mut block_indicators = false;
    let mut line_breaks = false;
    let mut special_characters = false;
    let mut leading_space = false;
    let mut leading_break = false;
    let mut trailing_space = false;
    let mut trailing_break = false;
    let mut break_space = false;
    let mut space_break = false;
    let mut previous_space = false;
    let mut previous_break = false;

    // Only block context matters here (flow collections are always empty),
    // so libyaml's separate flow indicators are not tracked.
    if value.starts_with("---") || value.starts_with("...") {
        block_indicators = true;
    }
    let mut preceded_by_whitespace = true;
    let mut followed_by_whitespace = is_blankz(chars.get(1));
    for (i, &c) in chars.iter().enumerate() {
        let indicator = if i == 0 {
            "#,[]{}&*!|>'\"%@`".contains(c)
                || ((c == '?' || c == ':' || c == '-') && followed_by_whitespace)
        } else {
            (c == ':' && followed_by_whitespace) || (c == '#' && preceded_by_whitespace)
        };
        block_indicators |= indicator;
        if !is_printable(c) {
            special_characters = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= i == last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            leading_break |= i == 0;
            trailing_break |= i == last;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = is_blankz(Some(&c));
        if i < last {
            followed_by_whitespace = is_blankz(chars.get(i + 2));
        }
    }

    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks {
        a.block_plain_allowed = false;
    }
    if block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(value: &str) -> Node {
        Node::Scalar(Scalar {
            value: value.to_owned(),
            tag: None,
            plain_implicit: true,
            quoted_implicit: true,
            style: Style::Plain,
        })
    }

    #[test]
    fn emitter_layouts() {
        let cases: Vec<(Node, &str)> = vec![
            (plain("a"), "--- a\n"),
            (plain(""), "---\n"),
            (plain("a: b"), "--- 'a: b'\n"),
            (plain("it's\t"), "--- \"it's\\t\"\n"),
            (plain(" a"), "--- ' a'\n"),
            (plain("😀"), "--- \"\\U0001F600\"\n"),
            (Node::Sequence(vec![]), "--- []\n"),
            (
                Node::Mapping(vec![(plain("k"), Node::Sequence(vec![plain("a")]))]),
                "---\nk:\n- a\n",
            ),
            (
                Node::Sequence(vec![Node::Sequence(vec![plain("a"), plain("b")])]),
                "---\n- - a\n  - b\n",
            ),
            (
                Node::Mapping(vec![(Node::Sequence(vec![plain("a")]), plain("b"))]),
                "---\n? - a\n: b\n",
            ),
            (Node::Mapping(vec![(plain(""), plain(""))]), "---\n'':\n"),
        ];
        for (node, want) in cases {
            assert_eq!(emit_document(&node), want);
        }
    }

    #[test]
    fn analysis_flags() {
        // (text, multiline, block plain, single quoted, block)
        let cases: &[(&str, bool, bool, bool, bool)] = &[
            ("abc", false, true, true, true),
            ("a #b", false, false, true, true),
            ("a#b", false, true, true, true),
            ("- a", false, false, true, true),
            ("-a", false, true, true, true),
            ("a\nb", true, false, true, true),
            ("a \nb", true, false, false, false),
            ("a\n b", true, false, false, true),
            ("a ", false, false, true, false),
            ("a\tb", false, false, false, false),
        ];
        for &(text, multiline, block_plain, single, block) in cases {
            let a = analyze_scalar(text);
            assert_eq!(
                (
                    a.multiline,
                    a.block_plain_allowed,
                    a.single_quoted_allowed,
                    a.block_allowed
                ),
                (multiline, block_plain, single, block),
                "{text:?}"
            );
        }
    }
}
