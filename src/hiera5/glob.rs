//! Ruby's `Dir.glob` patterns (`*`, `**`, `?`, `[set]`, `{a,b}`) as
//! regexes: one matcher for the files on disk (`hierad puppet-lookup`)
//! and the files kept in a server (crate::lookup5).

/// A glob as an anchored regex: `*` within a segment, `**/` any
/// directories, `?` one character, `[…]` a set, `{a,b}` alternatives.
pub fn glob_regex(pattern: &str) -> Option<regex::Regex> {
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
