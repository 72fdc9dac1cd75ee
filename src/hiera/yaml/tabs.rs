//! libyaml's tab rules, which YAML 1.2 (saphyr) does not share.
//!
//! libyaml skips a tab wherever it only separates tokens, except in the
//! block context at the start of a line or after `-`, `?` and a complex
//! `:`, where a tab "cannot start any token"; a plain scalar refuses tabs
//! in its continuation indentation and a block scalar in its indentation.
//! saphyr refuses other tabs (`key:\tvalue`) and accepts some of those.
//!
//! So, for texts with tabs only, this module replays libyaml's scanner
//! over the first document without building tokens: tabs libyaml treats as
//! mere separation become spaces (same length, so every position stays
//! put), and the first tab libyaml would stop at is reported as a pending
//! error, raised unless saphyr finds an earlier one.
//!
//! The same replay fixes the other whitespace rule saphyr adds: the lines
//! of a multi-line quoted scalar must be indented past their parent, where
//! libyaml takes any indentation. On request, such lines get the spaces
//! saphyr wants (folding drops them); only error columns on those lines
//! move.

use std::borrow::Cow;

/// A tab error libyaml would raise, and where.
pub(super) struct TabError {
    /// Character index of the offending tab.
    pub index: usize,
    pub problem: &'static str,
    pub context: &'static str,
    /// libyaml's context mark: 0-based line and column.
    pub line: usize,
    pub col: usize,
}

/// The text saphyr should read, and libyaml's first tab error, if any,
/// with its index in that text. `pad_quoted` also indents the lines of
/// multi-line quoted scalars for saphyr.
pub(super) fn prepare(text: &str, pad_quoted: bool) -> (Cow<'_, str>, Option<TabError>) {
    if !pad_quoted && !text.contains('\t') {
        return (Cow::Borrowed(text), None);
    }
    let mut scan = Scan::new(text, pad_quoted);
    scan.run();
    let Scan {
        mut chars,
        replace,
        mut error,
        pads,
        ..
    } = scan;
    if replace.is_empty() && pads.is_empty() {
        return (Cow::Borrowed(text), error);
    }
    for i in replace {
        chars[i] = ' ';
    }
    let mut out = String::with_capacity(text.len() + pads.iter().map(|p| p.1).sum::<usize>());
    let mut pads = pads.into_iter().peekable();
    let mut shift = 0;
    let tab_at = error.as_ref().map(|e| e.index);
    let mut moved_tab_at = 0;
    for (i, c) in chars.into_iter().enumerate() {
        while let Some(&(at, count)) = pads.peek() {
            if at != i {
                break;
            }
            out.extend(std::iter::repeat_n(' ', count));
            shift += count;
            pads.next();
        }
        if tab_at == Some(i) {
            moved_tab_at = i + shift;
        }
        out.push(c);
    }
    if let Some(e) = error.as_mut() {
        e.index = moved_tab_at;
    }
    (Cow::Owned(out), error)
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

/// Why the replay ended early: libyaml stops there (an error, the end of
/// the first document, or the end of the text).
struct Stop;

type Step = Result<(), Stop>;

struct Scan {
    chars: Vec<char>,
    i: usize,
    line: usize,
    col: usize,
    flow: usize,
    indent: i64,
    indents: Vec<i64>,
    simple_key_allowed: bool,
    keys: Vec<Key>,
    seen_content: bool,
    replace: Vec<usize>,
    error: Option<TabError>,
    pad_quoted: bool,
    /// Spaces to insert: (character index of a line start, how many).
    pads: Vec<(usize, usize)>,
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn is_break(c: char) -> bool {
    c == '\n' || c == '\r'
}

/// Blank, break or end of text (`'\0'` stands for the end).
fn is_blankz(c: char) -> bool {
    is_blank(c) || is_break(c) || c == '\0'
}

impl Scan {
    fn new(text: &str, pad_quoted: bool) -> Scan {
        Scan {
            chars: text.chars().collect(),
            i: 0,
            line: 0,
            col: 0,
            flow: 0,
            indent: -1,
            indents: Vec::new(),
            simple_key_allowed: true,
            keys: vec![Key::default()],
            seen_content: false,
            replace: Vec::new(),
            error: None,
            pad_quoted,
            pads: Vec::new(),
        }
    }

    fn at(&self, k: usize) -> char {
        self.chars.get(self.i + k).copied().unwrap_or('\0')
    }

    fn skip(&mut self) {
        self.i += 1;
        self.col += 1;
    }

    fn skip_line(&mut self) {
        if self.at(0) == '\r' && self.at(1) == '\n' {
            self.i += 1;
        }
        self.i += 1;
        self.line += 1;
        self.col = 0;
    }

    /// Records libyaml's error for the tab at the current position.
    fn fail(
        &mut self,
        problem: &'static str,
        context: &'static str,
        line: usize,
        col: usize,
    ) -> Step {
        self.error = Some(TabError {
            index: self.i,
            problem,
            context,
            line,
            col,
        });
        Err(Stop)
    }

    fn run(&mut self) {
        while self.next_token().is_ok() {}
    }

    fn is_document_indicator(&self) -> bool {
        self.col == 0
            && ((self.at(0) == '-' && self.at(1) == '-' && self.at(2) == '-')
                || (self.at(0) == '.' && self.at(1) == '.' && self.at(2) == '.'))
            && is_blankz(self.at(3))
    }

    /// One round of libyaml's `fetch_next_token`.
    fn next_token(&mut self) -> Step {
        self.scan_to_next_token();
        self.stale_keys()?;
        self.unroll(self.col as i64);
        let c = self.at(0);
        if c == '\0' {
            return Err(Stop);
        }
        if self.col == 0 && c == '%' {
            if self.seen_content {
                return Err(Stop);
            }
            return self.directive();
        }
        if self.is_document_indicator() {
            if self.seen_content || c == '.' {
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
        match c {
            '[' | '{' => {
                self.save_key()?;
                self.flow += 1;
                self.keys.push(Key::default());
                self.simple_key_allowed = true;
                self.skip();
            }
            ']' | '}' => {
                self.remove_key()?;
                if self.flow > 0 {
                    self.flow -= 1;
                    self.keys.pop();
                }
                self.simple_key_allowed = false;
                self.skip();
            }
            ',' => {
                self.remove_key()?;
                self.simple_key_allowed = true;
                self.skip();
            }
            '-' if is_blankz(next) => {
                if self.flow == 0 {
                    if !self.simple_key_allowed {
                        return Err(Stop);
                    }
                    self.roll(self.col as i64);
                }
                self.remove_key()?;
                self.simple_key_allowed = true;
                self.skip();
            }
            '?' if self.flow > 0 || is_blankz(next) => {
                if self.flow == 0 {
                    if !self.simple_key_allowed {
                        return Err(Stop);
                    }
                    self.roll(self.col as i64);
                }
                self.remove_key()?;
                self.simple_key_allowed = self.flow == 0;
                self.skip();
            }
            ':' if self.flow > 0 || is_blankz(next) => self.value()?,
            '*' | '&' => {
                self.save_key()?;
                self.simple_key_allowed = false;
                self.skip();
                while self.at(0).is_ascii_alphanumeric() || matches!(self.at(0), '_' | '-') {
                    self.skip();
                }
            }
            '!' => {
                self.save_key()?;
                self.simple_key_allowed = false;
                self.tag();
            }
            '|' | '>' if self.flow == 0 => {
                self.remove_key()?;
                self.simple_key_allowed = true;
                self.block_scalar()?;
            }
            '\'' | '"' => {
                self.save_key()?;
                self.simple_key_allowed = false;
                self.quoted(c == '\'')?;
            }
            '\t' => {
                let (line, col) = (self.line, self.col);
                return self.fail(
                    "found character that cannot start any token",
                    "while scanning for the next token",
                    line,
                    col,
                );
            }
            _ if self.plain_start(c, next) => {
                self.save_key()?;
                self.simple_key_allowed = false;
                self.plain()?;
            }
            _ => return Err(Stop),
        }
        Ok(())
    }

    fn plain_start(&self, c: char, next: char) -> bool {
        !(is_blankz(c) || "-?:,[]{}#&*!|>'\"%@`".contains(c))
            || (c == '-' && !is_blank(next))
            || (self.flow == 0 && (c == '?' || c == ':') && !is_blankz(next))
    }

    /// `scan_to_next_token`: tabs are skipped only in the flow context or
    /// where no simple key may start.
    fn scan_to_next_token(&mut self) {
        loop {
            if self.col == 0 && self.at(0) == '\u{feff}' {
                self.skip();
            }
            while self.at(0) == ' '
                || ((self.flow > 0 || !self.simple_key_allowed) && self.at(0) == '\t')
            {
                if self.at(0) == '\t' {
                    self.replace.push(self.i);
                }
                self.skip();
            }
            if self.at(0) == '#' {
                while !is_break(self.at(0)) && self.at(0) != '\0' {
                    self.skip();
                }
            }
            if is_break(self.at(0)) {
                self.skip_line();
                if self.flow == 0 {
                    self.simple_key_allowed = true;
                }
            } else {
                break;
            }
        }
    }

    fn stale_keys(&mut self) -> Step {
        let (line, i) = (self.line, self.i);
        for key in &mut self.keys {
            if key.possible && (key.line < line || key.index + 1024 < i) {
                if key.required {
                    return Err(Stop);
                }
                key.possible = false;
            }
        }
        Ok(())
    }

    fn save_key(&mut self) -> Step {
        let required = self.flow == 0 && self.indent == self.col as i64;
        if self.simple_key_allowed {
            self.remove_key()?;
            let key = Key {
                possible: true,
                required,
                line: self.line,
                index: self.i,
                col: self.col,
            };
            *self.keys.last_mut().expect("one key slot per level") = key;
        }
        Ok(())
    }

    fn remove_key(&mut self) -> Step {
        let key = self.keys.last_mut().expect("one key slot per level");
        if key.possible && key.required {
            return Err(Stop);
        }
        key.possible = false;
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

    fn value(&mut self) -> Step {
        let flow = self.flow;
        let key = *self.keys.last().expect("one key slot per level");
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
                    return Err(Stop);
                }
                self.roll(self.col as i64);
            }
            self.simple_key_allowed = flow == 0;
        }
        self.skip();
        Ok(())
    }

    /// A `%` directive line: its blanks are separation.
    fn directive(&mut self) -> Step {
        self.unroll(-1);
        self.remove_key()?;
        self.simple_key_allowed = false;
        while !is_break(self.at(0)) && self.at(0) != '\0' {
            if self.at(0) == '#'
                && is_blank(
                    self.chars
                        .get(self.i.wrapping_sub(1))
                        .copied()
                        .unwrap_or(' '),
                )
            {
                break;
            }
            if self.at(0) == '\t' {
                self.replace.push(self.i);
            }
            self.skip();
        }
        Ok(())
    }

    /// A tag: `!<verbatim>` or `!handle!suffix`, up to a blank.
    fn tag(&mut self) {
        self.skip();
        if self.at(0) == '<' {
            while !is_blankz(self.at(0)) && self.at(0) != '>' {
                self.skip();
            }
            if self.at(0) == '>' {
                self.skip();
            }
            return;
        }
        while self.at(0).is_ascii_alphanumeric() || ";/?:@&=+$,.!~*'()[]%-_#".contains(self.at(0)) {
            if self.at(0) == '\0' {
                break;
            }
            self.skip();
        }
    }

    /// A single- or double-quoted scalar: every blank is whitespace to
    /// libyaml; those its folding drops become spaces.
    fn quoted(&mut self, single: bool) -> Step {
        let quote = if single { '\'' } else { '"' };
        let quote_col = self.col;
        self.skip();
        let mut trailing: Vec<usize> = Vec::new();
        let mut line_start = None;
        loop {
            if self.is_document_indicator() || self.at(0) == '\0' {
                return Err(Stop);
            }
            if let Some(start) = line_start.take() {
                if self.pad_quoted && self.col < quote_col {
                    self.pads.push((start, quote_col - self.col));
                }
            }
            let mut leading_blanks = false;
            while !is_blankz(self.at(0)) {
                trailing.clear();
                let c = self.at(0);
                if single && c == '\'' && self.at(1) == '\'' {
                    self.skip();
                    self.skip();
                } else if c == quote {
                    break;
                } else if !single && c == '\\' && is_break(self.at(1)) {
                    self.skip();
                    self.skip_line();
                    line_start = Some(self.i);
                    leading_blanks = true;
                    break;
                } else if !single && c == '\\' {
                    // The escaped character, a tab included, is content.
                    self.skip();
                    self.skip();
                } else {
                    self.skip();
                }
            }
            if self.at(0) == quote {
                self.skip();
                return Ok(());
            }
            while is_blank(self.at(0)) || is_break(self.at(0)) {
                if is_blank(self.at(0)) {
                    if self.at(0) == '\t' {
                        if leading_blanks {
                            self.replace.push(self.i);
                        } else {
                            trailing.push(self.i);
                        }
                    }
                    self.skip();
                } else {
                    // Blanks before a line break are dropped.
                    self.replace.append(&mut trailing);
                    self.skip_line();
                    line_start = Some(self.i);
                    leading_blanks = true;
                }
            }
        }
    }

    /// A literal or folded scalar: header blanks are separation, tabs in
    /// the indentation are an error, tabs in the content are content.
    fn block_scalar(&mut self) -> Step {
        let (start_line, start_col) = (self.line, self.col);
        self.skip();
        let mut increment = 0i64;
        for _ in 0..2 {
            match self.at(0) {
                '+' | '-' => self.skip(),
                d @ '1'..='9' => {
                    increment = i64::from(d as u8 - b'0');
                    self.skip();
                }
                '0' => return Err(Stop),
                _ => {}
            }
        }
        while is_blank(self.at(0)) {
            if self.at(0) == '\t' {
                self.replace.push(self.i);
            }
            self.skip();
        }
        if self.at(0) == '#' {
            while !is_break(self.at(0)) && self.at(0) != '\0' {
                self.skip();
            }
        }
        if !is_break(self.at(0)) && self.at(0) != '\0' {
            return Err(Stop);
        }
        if is_break(self.at(0)) {
            self.skip_line();
        }
        let mut indent = if increment > 0 {
            if self.indent >= 0 {
                self.indent + increment
            } else {
                increment
            }
        } else {
            0
        };
        self.block_breaks(&mut indent, start_line, start_col)?;
        while self.col as i64 == indent && self.at(0) != '\0' {
            while !is_break(self.at(0)) && self.at(0) != '\0' {
                self.skip();
            }
            if self.at(0) == '\0' {
                break;
            }
            self.skip_line();
            self.block_breaks(&mut indent, start_line, start_col)?;
        }
        Ok(())
    }

    /// `scan_block_scalar_breaks`: indentation spaces and empty lines.
    fn block_breaks(&mut self, indent: &mut i64, start_line: usize, start_col: usize) -> Step {
        let mut max_indent = 0i64;
        loop {
            while (*indent == 0 || (self.col as i64) < *indent) && self.at(0) == ' ' {
                self.skip();
            }
            max_indent = max_indent.max(self.col as i64);
            if (*indent == 0 || (self.col as i64) < *indent) && self.at(0) == '\t' {
                return self.fail(
                    "found a tab character where an indentation space is expected",
                    "while scanning a block scalar",
                    start_line,
                    start_col,
                );
            }
            if !is_break(self.at(0)) {
                break;
            }
            self.skip_line();
        }
        if *indent == 0 {
            *indent = max_indent.max(self.indent + 1).max(1);
        }
        Ok(())
    }

    /// A plain scalar, with libyaml's check on tabs in the indentation of
    /// its continuation lines.
    fn plain(&mut self) -> Step {
        let (start_line, start_col) = (self.line, self.col);
        let indent = self.indent + 1;
        let mut leading_blanks = false;
        // Tabs after the content on the same line: content if more content
        // follows on that line, dropped otherwise.
        let mut trailing: Vec<usize> = Vec::new();
        loop {
            if self.is_document_indicator() || self.at(0) == '#' {
                break;
            }
            while !is_blankz(self.at(0)) {
                let (c, next) = (self.at(0), self.at(1));
                if self.flow > 0 && c == ':' && ",?[]{}".contains(next) && next != '\0' {
                    return Err(Stop);
                }
                if (c == ':' && is_blankz(next)) || (self.flow > 0 && ",[]{}".contains(c)) {
                    break;
                }
                trailing.clear();
                leading_blanks = false;
                self.skip();
            }
            if !(is_blank(self.at(0)) || is_break(self.at(0))) {
                break;
            }
            while is_blank(self.at(0)) || is_break(self.at(0)) {
                if is_blank(self.at(0)) {
                    if self.at(0) == '\t' {
                        if leading_blanks && (self.col as i64) < indent {
                            return self.fail(
                                "found a tab character that violates indentation",
                                "while scanning a plain scalar",
                                start_line,
                                start_col,
                            );
                        }
                        if leading_blanks {
                            self.replace.push(self.i);
                        } else {
                            trailing.push(self.i);
                        }
                    }
                    self.skip();
                } else {
                    self.replace.append(&mut trailing);
                    self.skip_line();
                    leading_blanks = true;
                }
            }
            if self.flow == 0 && (self.col as i64) < indent {
                break;
            }
        }
        self.replace.append(&mut trailing);
        if leading_blanks {
            self.simple_key_allowed = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_lines_padded_on_request() {
        let cases = [
            ("a: 'x\ny'\n", "a: 'x\n   y'\n"),
            (
                "a:\n  b: \"x\n y\\\nz\"\n",
                "a:\n  b: \"x\n     y\\\n     z\"\n",
            ),
            ("- 'x\n\n  y'\n", "- 'x\n\n  y'\n"),
        ];
        for (text, want) in cases {
            let (out, err) = prepare(text, true);
            assert!(err.is_none(), "{text:?}");
            assert_eq!(out, want, "{text:?}");
        }
    }

    #[test]
    fn separation_tabs_become_spaces() {
        let cases = [
            ("key:\tvalue\n", "key: value\n"),
            ("a: b\tc\n", "a: b\tc\n"),
            ("a: 1\t# c\n", "a: 1 # c\n"),
            ("key\t: v\n", "key : v\n"),
            ("[1,\t2]\n", "[1, 2]\n"),
            ("a: \"x\n\ty\"\n", "a: \"x\n y\"\n"),
            ("a: \"x\ty\"\n", "a: \"x\ty\"\n"),
            ("a: |\n  x\n  \ty\n", "a: |\n  x\n  \ty\n"),
            ("a: x\n    \ty\n", "a: x\n     y\n"),
        ];
        for (text, want) in cases {
            let (out, err) = prepare(text, false);
            assert!(err.is_none(), "{text:?}");
            assert_eq!(out, want, "{text:?}");
        }
    }

    #[test]
    fn libyaml_tab_errors() {
        let cases: &[(&str, &str, (usize, usize))] = &[
            (
                "a:\n\tb: 1\n",
                "found character that cannot start any token",
                (1, 0),
            ),
            (
                "\tb: 1\n",
                "found character that cannot start any token",
                (0, 0),
            ),
            (
                "- \tx\n",
                "found character that cannot start any token",
                (0, 2),
            ),
            (
                "? a\n:\tb\n",
                "found character that cannot start any token",
                (1, 1),
            ),
            (
                "a: 1\n\t\nb: 2\n",
                "found a tab character that violates indentation",
                (0, 3),
            ),
            (
                "a: |\n  x\n\ty\n",
                "found a tab character where an indentation space is expected",
                (0, 3),
            ),
        ];
        for (text, problem, (line, col)) in cases {
            let (_, err) = prepare(text, false);
            let err = err.unwrap_or_else(|| panic!("no error for {text:?}"));
            assert_eq!(
                (err.problem, err.line, err.col),
                (*problem, *line, *col),
                "{text:?}"
            );
        }
    }
}
