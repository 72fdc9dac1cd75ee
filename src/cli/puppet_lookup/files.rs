//! The files of a Puppet tree on disk, for the Hiera 5 core: reads, and
//! Ruby's `Dir.glob` (`*`, `**`, `?`, `[set]`, `{a,b}`), results sorted.

use crate::hiera5::Files;
use std::path::Path;

/// The local file system.
pub(crate) struct Disk;

impl Files for Disk {
    fn read(&self, path: &str) -> Option<String> {
        let bytes = std::fs::read(path).ok()?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Some(
            text.strip_prefix('\u{feff}')
                .map(str::to_owned)
                .unwrap_or(text),
        )
    }

    fn is_file(&self, path: &str) -> bool {
        Path::new(path).is_file()
    }

    fn is_dir(&self, path: &str) -> bool {
        Path::new(path).is_dir()
    }

    fn glob(&self, pattern: &str) -> Vec<String> {
        // The literal directory before the first wildcard is walked; every
        // file below it is matched against the pattern as a regex.
        let first = pattern.find(['*', '?', '[', '{']).unwrap_or(pattern.len());
        let base = match pattern[..first].rfind('/') {
            Some(at) => &pattern[..at.max(1)],
            None => ".",
        };
        let Some(re) = glob_regex(pattern) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        walk(Path::new(base), 0, &mut |p| {
            let p = p.to_string_lossy();
            if re.is_match(&p) {
                found.push(p.into_owned());
            }
        });
        found.sort();
        found
    }
}

/// Every file below `dir`, depth-bounded against link loops.
fn walk(dir: &Path, depth: usize, each: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if depth < 32 {
                walk(&path, depth + 1, each);
            }
        } else if path.is_file() {
            each(&path);
        }
    }
}

/// A glob as an anchored regex: `*` within a segment, `**/` any
/// directories, `?` one character, `[…]` a set, `{a,b}` alternatives.
fn glob_regex(pattern: &str) -> Option<regex::Regex> {
    let mut re = String::from("^");
    let mut chars = pattern.chars().peekable();
    let mut braces = 0;
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                if chars.peek() == Some(&'/') {
                    chars.next();
                    re.push_str("(?:[^/]*/)*");
                } else {
                    re.push_str("[^/]*");
                }
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '[' => {
                re.push('[');
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                    if c == '\\' || c == '[' {
                        re.push('\\');
                    }
                    re.push(if c == '!' { '^' } else { c });
                }
                re.push(']');
            }
            '{' => {
                braces += 1;
                re.push_str("(?:");
            }
            ',' if braces > 0 => re.push('|'),
            '}' if braces > 0 => {
                braces -= 1;
                re.push(')');
            }
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    regex::Regex::new(&re).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_read_as_ruby_reads_them() {
        let re = glob_regex("/d/**/*.{yaml,json}").unwrap();
        assert!(re.is_match("/d/a.yaml") && re.is_match("/d/x/y/b.json"));
        assert!(!re.is_match("/d/a.yml"));
        let re = glob_regex("/d/nodes/web?.yaml").unwrap();
        assert!(re.is_match("/d/nodes/web1.yaml") && !re.is_match("/d/nodes/web/1.yaml"));
    }
}
