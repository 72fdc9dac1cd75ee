//! The differential suite's case files (`tests/fixtures/hiera/<group>/
//! cases.txt`, format in tests/oracle/differential.rs), read for the shim: the
//! arguments of each `hiera` invocation, and where they name a config.

use crate::shell::shell_split;
use std::path::{Path, PathBuf};

pub(crate) const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hiera");

/// One `hiera` invocation of a case file.
#[derive(Clone, Debug)]
pub(crate) struct Case {
    /// `group/cases.txt:LINE`.
    pub(crate) id: String,
    pub(crate) group: String,
    pub(crate) dir: PathBuf,
    pub(crate) args: Vec<String>,
    /// The first width the case asks for (`None`: COLUMNS unset).
    pub(crate) columns: Option<String>,
    /// Runs with its own `-f` or `@asis` are run once, as written.
    pub(crate) fixed_format: bool,
}

/// Every case of every group, in group order.
pub(crate) fn load() -> Vec<Case> {
    let mut groups: Vec<String> = std::fs::read_dir(FIXTURES)
        .expect("fixtures dir")
        .map(|e| e.unwrap())
        .filter(|e| e.path().join("cases.txt").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    groups.sort();
    let mut cases = Vec::new();
    for group in groups {
        let dir = Path::new(FIXTURES).join(&group);
        let text = std::fs::read_to_string(dir.join("cases.txt")).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let id = format!("{group}/cases.txt:{}", n + 1);
            let words = shell_split(line).unwrap_or_else(|e| panic!("{id}: {e}"));
            let mut columns = Some("80".to_owned());
            let mut asis = false;
            let mut rest = words.as_slice();
            while let Some(w) = rest.first().filter(|w| w.starts_with('@')) {
                if let Some(list) = w.strip_prefix("@columns=") {
                    let first = list.split(',').next().unwrap_or("");
                    columns = (first != "unset").then(|| first.to_owned());
                }
                asis |= w == "@asis";
                rest = &rest[1..];
            }
            let fixed_format = asis || sets_format(rest);
            cases.push(Case {
                id,
                group: group.clone(),
                dir: dir.clone(),
                args: rest.to_vec(),
                columns,
                fixed_format,
            });
        }
    }
    cases
}

fn sets_format(args: &[String]) -> bool {
    args.iter()
        .take_while(|a| *a != "--")
        .any(|a| (a.starts_with("-f") && !a.starts_with("--")) || a.starts_with("--fo"))
}

/// Where `hiera`'s option parser would take a config file name from:
/// `-c X`, `-cX`, `--config X`, `--config=X` and abbreviations of
/// `--config`. Returns (index of the word, byte offset of the name in it).
pub(crate) fn config_args(args: &[String]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            break;
        }
        let long = a.len() > 3 && "--config".starts_with(a.split('=').next().unwrap());
        if a == "-c" || (long && !a.contains('=')) {
            if i + 1 < args.len() {
                found.push((i + 1, 0));
            }
            i += 2;
            continue;
        }
        if long {
            found.push((i, a.find('=').unwrap() + 1));
        } else if a.starts_with("-c") {
            found.push((i, 2));
        }
        i += 1;
    }
    found
}

/// The config names a case passes.
pub(crate) fn configs(args: &[String]) -> Vec<String> {
    config_args(args)
        .into_iter()
        .map(|(i, at)| args[i][at..].to_owned())
        .collect()
}

/// The arguments with each config name mapped through `map` (names it
/// returns `None` for stay).
pub(crate) fn rewrite_configs(
    args: &[String],
    map: impl Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut out = args.to_vec();
    for (i, at) in config_args(args) {
        if let Some(new) = map(&args[i][at..]) {
            out[i] = format!("{}{new}", &args[i][..at]);
        }
    }
    out
}

#[test]
fn config_arguments() {
    let w = |s: &str| shell_split(s).unwrap();
    let table: &[(&str, &str)] = &[
        ("-c a.yaml k", "-c X k"),
        ("-ca.yaml k", "-cX k"),
        ("--config a.yaml k", "--config X k"),
        ("--config=a.yaml k", "--config=X k"),
        ("--conf a.yaml k", "--conf X k"),
        ("-j s.json k -c a.yaml", "-j s.json k -c X"),
        ("-- -c a.yaml", "-- -c a.yaml"),
        ("k -c", "k -c"),
    ];
    for (args, want) in table {
        let got = rewrite_configs(&w(args), |_| Some("X".into()));
        assert_eq!(got, w(want), "{args}");
    }
    assert_eq!(configs(&w("-c a -j s --config=b k")), ["a", "b"]);
}
