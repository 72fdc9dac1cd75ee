//! libyaml's scanner on directives (`%YAML`, `%TAG`), anchors, aliases and
//! tags: where it refuses them and with which words.

use super::{Scan, Step, Stop, is_alpha, is_blank, is_blankz, is_break, one_of};

impl Scan<'_> {
    /// A `%` directive line (only `%YAML` and `%TAG` exist for libyaml).
    pub(super) fn directive(&mut self) -> Step {
        self.seen_directive = true;
        self.unroll(-1);
        self.remove_key()?;
        self.simple_key_allowed = false;
        let start = self.here();
        self.skip();
        let name_start = self.i;
        while is_alpha(self.at(0)) {
            self.skip();
        }
        let name = &self.bytes[name_start..self.i];
        if name.is_empty() {
            return self.refuse(
                "could not find expected directive name",
                Some("while scanning a directive"),
                start,
            );
        }
        if !is_blankz(self.at(0)) {
            return self.refuse(
                "found unexpected non-alphabetical character",
                Some("while scanning a directive"),
                start,
            );
        }
        let yaml = name == b"YAML";
        if !yaml && name != b"TAG" {
            return self.refuse(
                "found unknown directive name",
                Some("while scanning a directive"),
                start,
            );
        }
        self.skip_blanks();
        // What libyaml's parser then checks has no mark of its own.
        if yaml {
            let context = Some("while scanning a %YAML directive");
            let major = self.version_number(start)?;
            if self.at(0) != b'.' {
                return self.refuse(
                    "did not find expected digit or '.' character",
                    context,
                    start,
                );
            }
            self.skip();
            let minor = self.version_number(start)?;
            if self.versions > 0 {
                return self.refuse("found duplicate %YAML directive", None, (0, 0));
            }
            self.versions += 1;
            if major != 1 || (minor != 1 && minor != 2) {
                return self.refuse("found incompatible YAML document", None, (0, 0));
            }
        } else {
            let handle_start = self.i;
            while !is_blankz(self.at(0)) {
                self.skip();
            }
            let handle = String::from_utf8_lossy(&self.bytes[handle_start..self.i]).into_owned();
            if self.tag_handles.contains(&handle) {
                return self.refuse("found duplicate %TAG directive", None, (0, 0));
            }
            self.tag_handles.push(handle);
        }
        while !is_break(self.at(0)) && !self.at_end() {
            if self.at(0) == b'\t' {
                self.replace.push(self.i);
            }
            self.skip();
        }
        Ok(())
    }

    /// A number of a `%YAML` version: up to nine digits.
    fn version_number(&mut self, start: (usize, usize)) -> Result<u32, Stop> {
        let context = Some("while scanning a %YAML directive");
        let mut value = 0u32;
        let mut length = 0;
        while self.at(0).is_ascii_digit() {
            length += 1;
            if length > 9 {
                self.refuse("found extremely long version number", context, start)?;
            }
            value = value * 10 + u32::from(self.at(0) - b'0');
            self.skip();
        }
        if length == 0 {
            self.refuse("did not find expected version number", context, start)?;
        }
        Ok(value)
    }

    fn skip_blanks(&mut self) {
        while is_blank(self.at(0)) {
            if self.at(0) == b'\t' {
                self.replace.push(self.i);
            }
            self.skip();
        }
    }

    /// `&anchor` or `*alias`: `[0-9A-Za-z_-]+`, then a blank or one of
    /// `?:,]}%@\``.
    pub(super) fn anchor(&mut self, anchor: bool) -> Step {
        let start = self.here();
        self.skip();
        let mut length = 0;
        while is_alpha(self.at(0)) {
            self.skip();
            length += 1;
        }
        if length == 0 || !(is_blankz(self.at(0)) || one_of(self.at(0), "?:,]}%@`")) {
            return self.refuse(
                "did not find expected alphabetic or numeric character",
                Some(if anchor {
                    "while scanning an anchor"
                } else {
                    "while scanning an alias"
                }),
                start,
            );
        }
        Ok(())
    }

    fn uri_char(c: u8, verbatim: bool) -> bool {
        is_alpha(c) || one_of(c, ";/?:@&=+$.%!~*'()") || (verbatim && one_of(c, ",[]"))
    }

    /// A tag: `!<verbatim>`, `!handle!suffix` or `!suffix`.
    pub(super) fn tag(&mut self) -> Step {
        let start = self.here();
        if self.at(1) == b'<' {
            self.skip();
            self.skip();
            let mut length = 0;
            while Self::uri_char(self.at(0), true) {
                self.skip();
                length += 1;
            }
            if length == 0 {
                return self.refuse(
                    "did not find expected tag URI",
                    Some("while parsing a tag"),
                    start,
                );
            }
            if self.at(0) != b'>' {
                return self.refuse(
                    "did not find the expected '>'",
                    Some("while scanning a tag"),
                    start,
                );
            }
            self.skip();
        } else {
            // The handle: '!' and alphanumerics, maybe closed by '!'.
            self.skip();
            let mut handle_len = 1;
            while is_alpha(self.at(0)) {
                self.skip();
                handle_len += 1;
            }
            let is_handle = self.at(0) == b'!';
            if is_handle {
                self.skip();
            }
            let mut length = if is_handle { 0 } else { handle_len };
            while Self::uri_char(self.at(0), false) {
                self.skip();
                length += 1;
            }
            if length == 0 {
                return self.refuse(
                    "did not find expected tag URI",
                    Some("while parsing a tag"),
                    start,
                );
            }
        }
        if !(is_blankz(self.at(0)) || (self.flow > 0 && self.at(0) == b',')) {
            return self.refuse(
                "did not find expected whitespace or line break",
                Some("while scanning a tag"),
                start,
            );
        }
        Ok(())
    }
}
