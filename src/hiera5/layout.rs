//! Where a Hiera 5 environment's data files live in the ConfigDB: each
//! location of the environment's hierarchy (`path`/`paths`) names one
//! resource, and the one variable it interpolates, if any, one level
//! whose values are the files' names there. So `nodes/%{trusted.certname}.yaml`
//! keeps `data/nodes/web1.yaml` as resource `nodes` at
//! `trusted.certname=web1`, and `common.yaml` keeps `data/common.yaml` as
//! resource `common` at the root.
//!
//! One rule, used both ways: `hierad import-environment` stores each file
//! where [`Layout::places`] says, and a lookup in a Hiera 5 environment
//! reads the path Puppet's hierarchy interpolates from the same place
//! (`crate::lookup5`). What has no such form (globs, mapped paths, URIs,
//! two variables in one path, functions in a path) is refused, naming the
//! entry.

use super::config::{Config, Locations};

/// The resource whose root document is the environment's hiera.yaml.
pub const CONFIG_RESOURCE: &str = "hiera";

/// The resource whose root document names the directory the environment
/// was imported from (`{"directory": "/…/production"}`): the paths an
/// explanation prints, as `puppet lookup --explain` printed them there.
pub const ORIGIN_RESOURCE: &str = "hiera-origin";

/// Why a hierarchy has no form in hierad: the entry and the reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("hierarchy entry \"{entry}\": {reason}")]
pub struct Unexpressible {
    pub entry: String,
    pub reason: String,
}

/// One location template of one entry, and where its files are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Placement {
    entry: String,
    /// The template's text before its variable (or all of it), under the
    /// datadir: `data/nodes/`.
    prefix: String,
    /// The level, when the template interpolates a variable.
    level: Option<String>,
    /// Its `%{…}` as written: `%{trusted.certname}`.
    token: String,
    /// The text after the variable: `.yaml`.
    suffix: String,
    resource: String,
}

/// Where one data file is kept: a resource, at the root or at one level
/// value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The hierarchy entry whose location names the file.
    pub entry: String,
    /// `(level, value)`; `None`: the root.
    pub level: Option<(String, String)>,
    pub resource: String,
}

/// One location of the hierarchy as a hierad datasource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub entry: String,
    pub resource: String,
    /// The level and the interpolation that gives its value.
    pub level: Option<(String, String)>,
}

/// Every location of an environment's hierarchy, placed.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    placements: Vec<Placement>,
}

impl Layout {
    /// Places every location of `config` (the environment layer's
    /// hiera.yaml, its directory the root of relative paths).
    ///
    /// # Errors
    /// The first entry whose locations have no form in hierad.
    pub fn of(config: &Config) -> Result<Layout, Unexpressible> {
        let mut placements: Vec<Placement> = Vec::new();
        for entry in &config.entries {
            let refuse = |reason: String| Unexpressible {
                entry: entry.name.clone(),
                reason,
            };
            let paths = match &entry.locations {
                Locations::Paths(paths) => paths,
                Locations::Globs(_) => {
                    return Err(refuse(
                        "glob and globs have no form in hierad: list the paths".into(),
                    ));
                }
                Locations::Mapped(_) => {
                    return Err(refuse(
                        "mapped_paths has no form in hierad: one path per variable".into(),
                    ));
                }
                Locations::Uris(_) | Locations::None => {
                    return Err(refuse("it names no path or paths to read".into()));
                }
            };
            if entry.datadir.contains("%{") || entry.datadir.starts_with('/') {
                return Err(refuse(format!(
                    "datadir \"{}\" is not a fixed directory inside the environment",
                    entry.datadir
                )));
            }
            for template in paths {
                let placed = place(&entry.name, &entry.datadir, template).map_err(refuse)?;
                if let Some(other) = placements.iter().find(|p| {
                    p.resource == placed.resource
                        && !(p.prefix == placed.prefix
                            && p.level == placed.level
                            && p.suffix == placed.suffix)
                }) {
                    return Err(refuse(format!(
                        "its path \"{template}\" and an entry \"{}\" path would keep their files in one resource \"{}\"",
                        other.entry, placed.resource
                    )));
                }
                placements.push(placed);
            }
        }
        Ok(Layout { placements })
    }

    /// The levels, least specific first (the hierarchy lists the most
    /// specific first), each once.
    pub fn levels(&self) -> Vec<String> {
        let mut levels: Vec<String> = Vec::new();
        for p in self.placements.iter().rev() {
            if let Some(level) = &p.level {
                if !levels.contains(level) {
                    levels.push(level.clone());
                }
            }
        }
        levels
    }

    /// Each location in the hierarchy's order, once: its entry, its
    /// resource, and its level with the `%{…}` that gives its value.
    pub fn sources(&self) -> Vec<Source> {
        let mut out: Vec<Source> = Vec::new();
        for p in &self.placements {
            let source = Source {
                entry: p.entry.clone(),
                resource: p.resource.clone(),
                level: p.level.clone().map(|l| (l, p.token.clone())),
            };
            if !out.contains(&source) {
                out.push(source);
            }
        }
        out
    }

    /// Where the file at `path` (relative to the environment's directory:
    /// `data/nodes/web1.yaml`) is kept: one place for each distinct
    /// location that names it (none: the hierarchy never reads it).
    pub fn places(&self, path: &str) -> Vec<Place> {
        let mut out: Vec<Place> = Vec::new();
        for p in &self.placements {
            let Some(rest) = path.strip_prefix(&p.prefix) else {
                continue;
            };
            let place = match &p.level {
                None if rest.is_empty() && p.suffix.is_empty() => None,
                None => continue,
                Some(level) => match rest.strip_suffix(&p.suffix) {
                    Some(value) if !value.is_empty() && !value.contains('/') => {
                        Some((level.clone(), value.to_owned()))
                    }
                    _ => continue,
                },
            };
            let place = Place {
                entry: p.entry.clone(),
                level: place,
                resource: p.resource.clone(),
            };
            if !out
                .iter()
                .any(|o| o.level == place.level && o.resource == place.resource)
            {
                out.push(place);
            }
        }
        out
    }
}

/// One location template placed (`Err`: why it cannot be).
fn place(entry: &str, datadir: &str, template: &str) -> Result<Placement, String> {
    let full = join(datadir, template);
    if full.starts_with('/') || full.split('/').any(|s| s == "..") {
        return Err(format!(
            "path \"{template}\" is outside the environment's directory"
        ));
    }
    let Some(start) = full.find("%{") else {
        let resource = resource_name(&full[datadir_len(datadir, &full)..], None);
        return checked(Placement {
            entry: entry.to_owned(),
            prefix: full,
            level: None,
            token: String::new(),
            suffix: String::new(),
            resource,
        });
    };
    let Some(len) = full[start..].find('}') else {
        return Err(format!("path \"{template}\" has an unclosed %{{"));
    };
    let (prefix, token, suffix) = (
        &full[..start],
        &full[start + 2..start + len],
        &full[start + len + 1..],
    );
    if suffix.contains("%{") {
        return Err(format!(
            "path \"{template}\" interpolates more than one variable: hierad keeps a file at one level value"
        ));
    }
    let variable = token.trim();
    let plain = !variable.is_empty()
        && variable
            .trim_start_matches("::")
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if !plain {
        return Err(format!(
            "path \"{template}\" interpolates %{{{token}}}, not a variable: hierad keeps files at the values of one variable"
        ));
    }
    let level = variable.trim_start_matches("::").to_owned();
    let relative = &full[datadir_len(datadir, &full)..];
    let resource = resource_name(
        &relative.replacen(&format!("%{{{token}}}"), "", 1),
        Some(&level),
    );
    checked(Placement {
        entry: entry.to_owned(),
        prefix: prefix.to_owned(),
        level: Some(level),
        token: format!("%{{{token}}}"),
        suffix: suffix.to_owned(),
        resource,
    })
}

fn checked(p: Placement) -> Result<Placement, String> {
    let kept = match p.resource.as_str() {
        CONFIG_RESOURCE => "its hiera.yaml",
        ORIGIN_RESOURCE => "the directory it was imported from",
        _ => return Ok(p),
    };
    Err(format!(
        "its files would be kept in resource \"{}\", where the environment keeps {kept}",
        p.resource
    ))
}

/// The length of `datadir/` at the start of `full` (0 for no datadir).
fn datadir_len(datadir: &str, full: &str) -> usize {
    let dir = datadir.trim_end_matches('/');
    if dir.is_empty() || dir == "." {
        return 0;
    }
    if full.starts_with(&format!("{dir}/")) {
        dir.len() + 1
    } else {
        0
    }
}

/// A location's resource: its path under the datadir without the
/// variable, the file's extension and empty segments (`nodes/%{x}.yaml`:
/// `nodes`); the level's name when nothing is left (`%{x}.yaml`).
fn resource_name(relative: &str, level: Option<&str>) -> String {
    let stem = match relative.rsplit_once('.') {
        Some((stem, ext)) if !ext.contains('/') => stem,
        _ => relative,
    };
    let name = stem
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect::<Vec<_>>()
        .join("/");
    match (name.is_empty(), level) {
        (true, Some(level)) => level.to_owned(),
        _ => name,
    }
}

/// `Pathname#+` for relative paths: `./` segments dropped.
fn join(dir: &str, path: &str) -> String {
    let dir = dir.trim_end_matches('/');
    let joined = if dir.is_empty() || dir == "." {
        path.to_owned()
    } else {
        format!("{dir}/{path}")
    };
    joined
        .split('/')
        .filter(|s| *s != ".")
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hiera::yaml;

    fn layout(text: &str) -> Result<Layout, Unexpressible> {
        let text = text.replacen(
            "hierarchy:",
            "defaults: {data_hash: yaml_data}\nhierarchy:",
            1,
        );
        let config = Config::from_value("hiera.yaml", &yaml::load(&text).unwrap()).unwrap();
        Layout::of(&config)
    }

    const CONTROL: &str = "version: 5\nhierarchy:\n  - name: Nodes\n    path: nodes/%{trusted.certname}.yaml\n  - name: OS\n    path: os/%{facts.os.family}.yaml\n  - name: Common\n    paths: [common.yaml, \"%{::role}.yaml\"]\n";

    #[test]
    fn files_are_placed_at_the_level_their_path_interpolates() {
        let l = layout(CONTROL).unwrap();
        assert_eq!(l.levels(), ["role", "facts.os.family", "trusted.certname"]);
        let at = |path: &str| {
            l.places(path)
                .into_iter()
                .map(|p| (p.level, p.resource))
                .collect::<Vec<_>>()
        };
        let lv = |l: &str, v: &str| Some((l.to_owned(), v.to_owned()));
        assert_eq!(
            at("data/nodes/web1.yaml"),
            [(lv("trusted.certname", "web1"), "nodes".into())]
        );
        assert_eq!(
            at("data/os/Debian.yaml"),
            [(lv("facts.os.family", "Debian"), "os".into())]
        );
        // Both locations name it: a node whose role is `common` reads it too.
        assert_eq!(
            at("data/common.yaml"),
            [
                (None, "common".to_owned()),
                (lv("role", "common"), "role".into())
            ]
        );
        assert_eq!(at("data/db.yaml"), [(lv("role", "db"), "role".into())]);
        assert_eq!(at("data/nodes/a/b.yaml"), []);
        assert_eq!(at("data/nodes/.yaml"), []);
        assert_eq!(at("other/common.yaml"), []);
    }

    #[test]
    fn what_has_no_form_is_refused_naming_the_entry() {
        for (entry, reason) in [
            ("- name: G\n    glob: \"nodes/*.yaml\"", "glob and globs"),
            (
                "- name: M\n    mapped_paths: [facts.x, y, \"%{y}.yaml\"]",
                "mapped_paths",
            ),
            (
                "- name: Two\n    path: \"%{facts.a}/%{facts.b}.yaml\"",
                "more than one variable",
            ),
            (
                "- name: F\n    path: \"%{lookup('x')}.yaml\"",
                "not a variable",
            ),
            (
                "- name: H\n    path: hiera.yaml",
                "where the environment keeps its hiera.yaml",
            ),
            (
                "- name: O\n    path: hiera-origin.yaml",
                "where the environment keeps the directory it was imported from",
            ),
            ("- name: Up\n    path: ../x.yaml", "outside"),
        ] {
            let e = layout(&format!("version: 5\nhierarchy:\n  {entry}\n")).unwrap_err();
            assert!(e.to_string().contains(reason), "{e}");
            assert_eq!(e.entry, entry[8..].split('\n').next().unwrap());
        }
        let e = layout("version: 5\nhierarchy:\n  - name: A\n    path: x/%{facts.a}.yaml\n  - name: B\n    path: x.yaml\n").unwrap_err();
        assert_eq!(e.entry, "B");
        assert!(e.to_string().contains("one resource \"x\""), "{e}");
    }
}
