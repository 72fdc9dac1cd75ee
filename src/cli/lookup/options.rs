//! The `hiera` command's options, parsed the way its Ruby OptionParser
//! does: options anywhere among the arguments, clustered short flags,
//! attached or separate values, unambiguous long-option prefixes, `--`,
//! and side effects (version, missing config, bad format) in the order the
//! options appear. hierad adds long options of its own: `--explain`, and
//! `--server`, `--env`, `--level` for a lookup answered by a server.

use std::path::Path;

/// Where a scope comes from (`-j`, `-y`, `-m`, `-i`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ScopeSource {
    Json(String),
    Yaml(String),
    Mcollective(String),
    InventoryService(String),
}

/// The output format (`-f`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Format {
    #[default]
    Ruby,
    Json,
    Yaml,
}

/// The resolution type chosen by `-a`/`-h` (the last one wins).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Kind {
    #[default]
    Priority,
    Array,
    Hash,
}

/// Parsed options, before the positional arguments are interpreted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Options {
    pub(crate) debug: bool,
    pub(crate) kind: Kind,
    pub(crate) config: Option<String>,
    pub(crate) scopes: Vec<ScopeSource>,
    pub(crate) format: Format,
    /// hierad's own: print which levels were consulted.
    pub(crate) explain: bool,
    /// hierad's own: ask this server instead of reading data files.
    pub(crate) server: Option<String>,
    /// hierad's own: the environment a server lookup is about.
    pub(crate) env: Option<String>,
    /// hierad's own: the level path of a server lookup (`nodes=node-1`).
    pub(crate) level: Option<String>,
    /// hierad's own: a node whose stored scope a server lookup uses.
    pub(crate) node: Option<String>,
    /// hierad's own: the interpolation steps a local lookup may take.
    pub(crate) budget_steps: Option<u64>,
    /// hierad's own: the bytes interpolation may build in a local lookup.
    pub(crate) budget_bytes: Option<u64>,
    pub(crate) positional: Vec<String>,
}

/// What parsing decided: go on, or stop at once with this output.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    Run(Options),
    Exit {
        stdout: String,
        stderr: String,
        code: u8,
    },
}

pub(crate) const USAGE: &str = "Usage: hiera [options] key [default value] [variable='text'...]

The default value will be used if no value is found for the key. Scope variables
will be interpolated into %{variable} placeholders in the hierarchy and in
returned values.

    -V, --version                    Version information
    -d, --debug                      Show debugging information
    -a, --array                      Return all values as an array
    -h, --hash                       Return all values as a hash
    -c, --config CONFIG              Configuration file
    -j, --json SCOPE                 JSON format file to load scope from
    -y, --yaml SCOPE                 YAML format file to load scope from
    -m, --mcollective IDENTITY       Use facts from a node (via mcollective) as scope
    -i, --inventory_service IDENTITY Use facts from a node (via Puppet's inventory service) as scope
    -f, --format TYPE                Output the result in a specific format (ruby, yaml or json); default is 'ruby'
        --explain                    Show which hierarchy levels were consulted and what each supplied (hierad)
        --server URL                 Ask a hierad server (default with --env: $HIERAD_SERVER) (hierad)
        --env ID                     The server environment to look up in (hierad)
        --level LEVEL=VALUE          The level path on the server, e.g. nodes=node-1.domain.tld (hierad)
        --node NAME                  Use the scope the server stores for this node (hierad)
        --budget-steps N             Interpolation steps a local lookup may take (default 10000) (hierad)
        --budget-bytes N             Bytes of values interpolation may build in a local lookup (default 33554432) (hierad)
";

/// The Hiera version whose behaviour `hierad lookup` reproduces.
pub(crate) const HIERA_VERSION: &str = "3.10.0";

const LONG: [(&str, char); 18] = [
    ("version", 'V'),
    ("debug", 'd'),
    ("array", 'a'),
    ("hash", 'h'),
    ("config", 'c'),
    ("json", 'j'),
    ("yaml", 'y'),
    ("mcollective", 'm'),
    ("inventory_service", 'i'),
    ("format", 'f'),
    ("help", '?'),
    ("explain", 'E'),
    ("server", 'S'),
    ("env", 'N'),
    ("level", 'L'),
    ("node", 'O'),
    ("budget-steps", 'B'),
    ("budget-bytes", 'Z'),
];

fn takes_value(option: char) -> bool {
    matches!(
        option,
        'c' | 'j' | 'y' | 'm' | 'i' | 'f' | 'S' | 'N' | 'L' | 'O' | 'B' | 'Z'
    )
}

fn exit(stdout: impl Into<String>, stderr: impl Into<String>, code: u8) -> Parsed {
    Parsed::Exit {
        stdout: stdout.into(),
        stderr: stderr.into(),
        code,
    }
}

/// An uncaught OptionParser exception, as `hierad` reports exceptions.
fn parse_error(message: String, class: &str) -> Parsed {
    exit(
        "",
        format!("hierad: {message} (OptionParser::{class})\n"),
        1,
    )
}

/// Parses the arguments of `hiera` (without the program name).
pub(crate) fn parse(args: &[String]) -> Parsed {
    let mut options = Options::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            options.positional.extend(rest.by_ref().cloned());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            let matches: Vec<_> = LONG.iter().filter(|(l, _)| l.starts_with(name)).collect();
            let option = match matches.as_slice() {
                [(_, c)] => *c,
                _ => match LONG.iter().find(|(l, _)| *l == name) {
                    Some((_, c)) => *c,
                    None if matches.is_empty() => {
                        return parse_error(format!("invalid option: {arg}"), "InvalidOption");
                    }
                    None => {
                        return parse_error(
                            format!("ambiguous option: --{name}"),
                            "AmbiguousOption",
                        );
                    }
                },
            };
            let value = if takes_value(option) {
                match attached.or_else(|| rest.next().cloned()) {
                    Some(v) => Some(v),
                    None => {
                        return parse_error(format!("missing argument: {arg}"), "MissingArgument");
                    }
                }
            } else if attached.is_some() {
                return parse_error(format!("needless argument: {arg}"), "NeedlessArgument");
            } else {
                None
            };
            if let Some(stop) = apply(&mut options, option, value) {
                return stop;
            }
        } else if arg.len() > 1 && arg.starts_with('-') {
            let cluster = &arg[1..];
            for (i, option) in cluster.char_indices() {
                if !"Vdahcjymif".contains(option) {
                    return parse_error(format!("invalid option: -{option}"), "InvalidOption");
                }
                if takes_value(option) {
                    let attached = &cluster[i + option.len_utf8()..];
                    let value = if attached.is_empty() {
                        match rest.next() {
                            Some(v) => v.clone(),
                            None => {
                                return parse_error(
                                    format!("missing argument: -{option}"),
                                    "MissingArgument",
                                );
                            }
                        }
                    } else {
                        attached.to_owned()
                    };
                    if let Some(stop) = apply(&mut options, option, Some(value)) {
                        return stop;
                    }
                    break;
                }
                if let Some(stop) = apply(&mut options, option, None) {
                    return stop;
                }
            }
        } else {
            options.positional.push(arg.clone());
        }
    }
    Parsed::Run(options)
}

/// One option's effect; `Some` stops the command right there.
fn apply(options: &mut Options, option: char, value: Option<String>) -> Option<Parsed> {
    let value = value.unwrap_or_default();
    match option {
        'V' => return Some(exit(format!("{HIERA_VERSION}\n"), "", 0)),
        '?' => return Some(exit(USAGE, "", 0)),
        'd' => options.debug = true,
        'a' => options.kind = Kind::Array,
        'h' => options.kind = Kind::Hash,
        'E' => options.explain = true,
        'S' => options.server = Some(value),
        'N' => options.env = Some(value),
        'L' => options.level = Some(value),
        'O' => options.node = Some(value),
        'B' | 'Z' => {
            let name = if option == 'B' { "steps" } else { "bytes" };
            let Ok(n) = value.parse::<u64>() else {
                return Some(parse_error(
                    format!("invalid argument: --budget-{name} {value} (a whole number of {name})"),
                    "InvalidArgument",
                ));
            };
            if option == 'B' {
                options.budget_steps = Some(n);
            } else {
                options.budget_bytes = Some(n);
            }
        }
        'c' => {
            if !Path::new(&value).exists() {
                return Some(exit("", format!("Cannot find config file: {value}\n"), 1));
            }
            options.config = Some(value);
        }
        'j' => options.scopes.push(ScopeSource::Json(value)),
        'y' => options.scopes.push(ScopeSource::Yaml(value)),
        'm' => options.scopes.push(ScopeSource::Mcollective(value)),
        'i' => options.scopes.push(ScopeSource::InventoryService(value)),
        'f' => {
            options.format = match value.as_str() {
                "ruby" => Format::Ruby,
                "json" => Format::Json,
                "yaml" => Format::Yaml,
                _ => return Some(exit("", format!("Unknown output format: {value}\n"), 1)),
            }
        }
        _ => unreachable!("option table and apply() disagree on -{option}"),
    }
    None
}

/// The positional arguments: `key [default] [name=value ...]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Positional {
    pub(crate) key: String,
    pub(crate) default: Option<String>,
    /// `name=value` assignments, in order.
    pub(crate) assignments: Vec<(String, String)>,
    /// Arguments after the default that are not assignments (ignored, with
    /// a complaint on stderr).
    pub(crate) unparsed: Vec<String>,
}

/// Splits positional arguments as `hiera` does; `None` when there is no key.
pub(crate) fn positional(args: &[String]) -> Option<Positional> {
    let (key, rest) = args.split_first()?;
    let mut out = Positional {
        key: key.clone(),
        ..Positional::default()
    };
    for arg in rest {
        if let Some((name, value)) = assignment(arg) {
            out.assignments.push((name.to_owned(), value.to_owned()));
        } else if out.default.is_none() {
            out.default = Some(arg.clone());
        } else {
            out.unparsed.push(arg.clone());
        }
    }
    Some(out)
}

/// `arg =~ /^(.+?)=(.+?)$/`: the first line holding a `=` that is neither
/// its first nor its last character; split at the first such `=`.
fn assignment(arg: &str) -> Option<(&str, &str)> {
    arg.split('\n').find_map(|line| {
        let at = line
            .char_indices()
            .skip(1)
            .find(|&(i, c)| c == '=' && i + 1 < line.len())?
            .0;
        Some((&line[..at], &line[at + 1..]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn run(s: &str) -> Options {
        match parse(&args(s)) {
            Parsed::Run(o) => o,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn options_anywhere_and_last_kind_wins() {
        let o = run("key -a def -h x=1 -fjson --deb");
        assert_eq!(o.kind, Kind::Hash);
        assert_eq!(o.format, Format::Json);
        assert!(o.debug);
        assert_eq!(o.positional, args("key def x=1"));
        let o = run("-ha -j s.json -- -a");
        assert_eq!(o.kind, Kind::Array);
        assert_eq!(o.scopes, [ScopeSource::Json("s.json".into())]);
        assert_eq!(o.positional, ["-a"]);
    }

    #[test]
    fn server_options() {
        type Case = (
            &'static str,
            Option<&'static str>,
            Option<&'static str>,
            Option<&'static str>,
            &'static [&'static str],
        );
        let cases: &[Case] = &[
            ("key", None, None, None, &["key"]),
            (
                "--server http://h:1 --env 1 --level nodes=n1 key",
                Some("http://h:1"),
                Some("1"),
                Some("nodes=n1"),
                &["key"],
            ),
            (
                "key --server=http://h:1 -a --env=2 x=1",
                Some("http://h:1"),
                Some("2"),
                None,
                &["key", "x=1"],
            ),
            (
                "--serv h --lev nodes=a k",
                Some("h"),
                None,
                Some("nodes=a"),
                &["k"],
            ),
        ];
        for (line, server, env, level, positional) in cases {
            let o = run(line);
            assert_eq!(o.server.as_deref(), *server, "{line}");
            assert_eq!(o.env.as_deref(), *env, "{line}");
            assert_eq!(o.level.as_deref(), *level, "{line}");
            assert_eq!(o.positional, *positional, "{line}");
        }
        let stops: &[(&str, &str)] = &[
            (
                "--server",
                "hierad: missing argument: --server (OptionParser::MissingArgument)\n",
            ),
            (
                "--e 1 k",
                "hierad: ambiguous option: --e (OptionParser::AmbiguousOption)\n",
            ),
        ];
        for (line, stderr) in stops {
            let want = Parsed::Exit {
                stdout: String::new(),
                stderr: (*stderr).into(),
                code: 1,
            };
            assert_eq!(parse(&args(line)), want, "{line}");
        }
    }

    #[test]
    fn stops() {
        let cases: &[(&str, &str, &str, u8)] = &[
            ("-V", "3.10.0\n", "", 0),
            ("k --version", "3.10.0\n", "", 0),
            ("-f xml k", "", "Unknown output format: xml\n", 1),
            (
                "-c /no/such/file k",
                "",
                "Cannot find config file: /no/such/file\n",
                1,
            ),
            (
                "-x",
                "",
                "hierad: invalid option: -x (OptionParser::InvalidOption)\n",
                1,
            ),
            (
                "-ax",
                "",
                "hierad: invalid option: -x (OptionParser::InvalidOption)\n",
                1,
            ),
            (
                "-c",
                "",
                "hierad: missing argument: -c (OptionParser::MissingArgument)\n",
                1,
            ),
            (
                "--bogus",
                "",
                "hierad: invalid option: --bogus (OptionParser::InvalidOption)\n",
                1,
            ),
        ];
        for (line, stdout, stderr, code) in cases {
            let want = Parsed::Exit {
                stdout: (*stdout).into(),
                stderr: (*stderr).into(),
                code: *code,
            };
            assert_eq!(parse(&args(line)), want, "{line}");
        }
    }

    #[test]
    fn positional_table() {
        let p = positional(&args("key def a=b c==d e= =f extra")).unwrap();
        assert_eq!(p.key, "key");
        assert_eq!(p.default.as_deref(), Some("def"));
        assert_eq!(
            p.assignments,
            [("a".into(), "b".into()), ("c".into(), "=d".into())]
        );
        assert_eq!(p.unparsed, ["e=", "=f", "extra"]);
        assert_eq!(positional(&[]), None);
        let p = positional(&args("k =x=y")).unwrap();
        assert_eq!(p.assignments, [("=x".into(), "y".into())]);
    }
}
