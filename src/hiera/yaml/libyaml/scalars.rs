//! libyaml's scanner on scalars: quoted, block (literal and folded, with
//! the value libyaml gives them) and plain.

use super::{Block, Scan, Step, Stop, is_blank, is_blankz, is_break, one_of};

impl Scan<'_> {
    /// A single- or double-quoted scalar: every blank is whitespace to
    /// libyaml; the ones its folding drops become spaces.
    pub(super) fn quoted(&mut self, single: bool) -> Step {
        let start = self.here();
        let quote = if single { b'\'' } else { b'"' };
        let quote_col = self.col;
        self.skip();
        let mut trailing: Vec<usize> = Vec::new();
        let mut line_start = None;
        let context = Some("while scanning a quoted scalar");
        loop {
            if self.is_document_indicator() {
                return self.refuse("found unexpected document indicator", context, start);
            }
            if self.at_end() {
                return self.refuse("found unexpected end of stream", context, start);
            }
            if let Some(line) = line_start.take() {
                let want = if self.flow > 0 {
                    quote_col.max(self.flow_col + 1)
                } else {
                    quote_col
                };
                self.pad_line(line, want);
            }
            let mut leading_blanks = false;
            while !is_blankz(self.at(0)) {
                trailing.clear();
                let c = self.at(0);
                if single && c == b'\'' && self.at(1) == b'\'' {
                    self.skip();
                    self.skip();
                } else if c == quote {
                    break;
                } else if !single && c == b'\\' && is_break(self.at(1)) {
                    self.skip();
                    self.skip_line();
                    line_start = Some((self.i, self.ci));
                    leading_blanks = true;
                    break;
                } else if !single && c == b'\\' {
                    self.escape(start)?;
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
                    if self.at(0) == b'\t' {
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
                    line_start = Some((self.i, self.ci));
                    leading_blanks = true;
                }
            }
        }
    }

    /// A double-quoted escape; the escaped character (a tab included) is
    /// content.
    fn escape(&mut self, start: (usize, usize)) -> Step {
        let context = Some("while parsing a quoted scalar");
        let length = match self.at(1) {
            b'0' | b'a' | b'b' | b't' | b'\t' | b'n' | b'v' | b'f' | b'r' | b'e' | b' ' | b'"'
            | b'/' | b'\\' | b'N' | b'_' | b'L' | b'P' => 0,
            b'x' => 2,
            b'u' => 4,
            b'U' => 8,
            _ => return self.refuse("found unknown escape character", context, start),
        };
        self.skip();
        self.skip();
        let mut value: u32 = 0;
        for _ in 0..length {
            let Some(d) = (self.at(0) as char).to_digit(16) else {
                return self.refuse("did not find expected hexdecimal number", context, start);
            };
            value = (value << 4) | d;
            self.skip();
        }
        if length > 0 && ((0xD800..=0xDFFF).contains(&value) || value > 0x10FFFF) {
            return self.refuse(
                "found invalid Unicode character escape code",
                context,
                start,
            );
        }
        Ok(())
    }

    /// A literal or folded scalar: header blanks are separation, tabs in
    /// the indentation are an error, tabs in the content are content.
    pub(super) fn block_scalar(&mut self) -> Step {
        let start = self.here();
        let indicator = self.ci;
        let literal = self.at(0) == b'|';
        let context = Some("while scanning a block scalar");
        self.skip();
        // -1 strip, 0 clip, +1 keep.
        let mut chomping = 0i8;
        let chomp = |c: u8| if c == b'+' { 1 } else { -1 };
        let mut increment = 0i64;
        let digit = |c: u8| (c as char).to_digit(10).map(i64::from);
        if matches!(self.at(0), b'+' | b'-') {
            chomping = chomp(self.at(0));
            self.skip();
            if let Some(d) = digit(self.at(0)) {
                if d == 0 {
                    return self.refuse(
                        "found an indentation indicator equal to 0",
                        context,
                        start,
                    );
                }
                increment = d;
                self.skip();
            }
        } else if let Some(d) = digit(self.at(0)) {
            if d == 0 {
                return self.refuse("found an indentation indicator equal to 0", context, start);
            }
            increment = d;
            self.skip();
            if matches!(self.at(0), b'+' | b'-') {
                chomping = chomp(self.at(0));
                self.skip();
            }
        }
        while is_blank(self.at(0)) {
            if self.at(0) == b'\t' {
                self.replace.push(self.i);
            }
            self.skip();
        }
        if self.at(0) == b'#' {
            self.comment();
        }
        if !is_break(self.at(0)) && !self.at_end() {
            return self.refuse(
                "did not find expected comment or line break",
                context,
                start,
            );
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
        // The content, built as libyaml builds it: saphyr (YAML 1.2) ends
        // a scalar that runs to the end of the text differently.
        let mut value = String::new();
        let mut trailing_breaks = self.block_breaks(&mut indent, start)?;
        let mut leading_break = false;
        let mut leading_blank = false;
        while self.col as i64 == indent && !self.at_end() {
            let trailing_blank = is_blank(self.at(0));
            if !literal && leading_break && !leading_blank && !trailing_blank {
                if trailing_breaks == 0 {
                    value.push(' ');
                }
            } else if leading_break {
                value.push('\n');
            }
            value.extend(std::iter::repeat_n('\n', trailing_breaks));
            leading_blank = is_blank(self.at(0));
            let line_start = self.i;
            while !is_break(self.at(0)) && !self.at_end() {
                self.skip();
            }
            value.push_str(&self.text[line_start..self.i]);
            leading_break = is_break(self.at(0));
            if leading_break {
                self.skip_line();
            }
            trailing_breaks = self.block_breaks(&mut indent, start)?;
        }
        if chomping != -1 && leading_break {
            value.push('\n');
        }
        if chomping == 1 {
            value.extend(std::iter::repeat_n('\n', trailing_breaks));
        }
        self.blocks.push(Block {
            indicator,
            end: self.ci,
            value,
        });
        Ok(())
    }

    /// `scan_block_scalar_breaks`: indentation spaces and empty lines;
    /// how many line breaks it read.
    fn block_breaks(&mut self, indent: &mut i64, start: (usize, usize)) -> Result<usize, Stop> {
        let mut max_indent = 0i64;
        let mut breaks = 0;
        loop {
            while (*indent == 0 || (self.col as i64) < *indent) && self.at(0) == b' ' {
                self.skip();
            }
            max_indent = max_indent.max(self.col as i64);
            if (*indent == 0 || (self.col as i64) < *indent) && self.at(0) == b'\t' {
                self.refuse_tab(
                    "found a tab character where an indentation space is expected",
                    "while scanning a block scalar",
                    start,
                )?;
            }
            if !is_break(self.at(0)) {
                break;
            }
            self.skip_line();
            breaks += 1;
        }
        if *indent == 0 {
            *indent = max_indent.max(self.indent + 1).max(1);
        }
        Ok(breaks)
    }

    /// A plain scalar, with libyaml's check on tabs in the indentation of
    /// its continuation lines.
    pub(super) fn plain(&mut self) -> Step {
        let start = self.here();
        let indent = self.indent + 1;
        let mut leading_blanks = false;
        // Tabs after the content on a line: content if more content follows
        // on that line, dropped otherwise.
        let mut trailing: Vec<usize> = Vec::new();
        let mut line_start = None;
        loop {
            if self.is_document_indicator() || self.at(0) == b'#' {
                break;
            }
            while !is_blankz(self.at(0)) {
                let (c, next) = (self.at(0), self.at(1));
                if self.flow > 0 && c == b':' && one_of(next, ",?[]{}") {
                    return self.refuse(
                        "found unexpected ':'",
                        Some("while scanning a plain scalar"),
                        start,
                    );
                }
                if (c == b':' && is_blankz(next)) || (self.flow > 0 && one_of(c, ",[]{}")) {
                    break;
                }
                if let Some(line) = line_start.take() {
                    if self.flow > 0 {
                        self.pad_line(line, self.flow_col + 1);
                    }
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
                    if self.at(0) == b'\t' {
                        if leading_blanks && (self.col as i64) < indent {
                            return self.refuse_tab(
                                "found a tab character that violates indentation",
                                "while scanning a plain scalar",
                                start,
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
                    line_start = Some((self.i, self.ci));
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
        // A line that ends the scalar inside a flow collection still needs
        // its padding (`]` or `,` at column 0).
        if let Some(line) = line_start {
            if self.flow > 0 && !is_break(self.at(0)) && self.at(0) != b'#' {
                self.pad_line(line, self.flow_col + 1);
            }
        }
        Ok(())
    }
}
