//! Where a Hiera 5 environment's data files live in the ConfigDB: each
//! location of a hierarchy names one resource, and the one variable it
//! interpolates, if any, one level whose values are the files' names
//! there. So `nodes/%{trusted.certname}.yaml` keeps `data/nodes/web1.yaml`
//! as resource `nodes` at `trusted.certname=web1`, and `common.yaml` keeps
//! `data/common.yaml` as resource `common` at the root.
//!
//! - `mapped_paths: [facts.services, tmp, "service/%{tmp}.yaml"]` is one
//!   level named for the mapped variable (`facts.services=db`), read once
//!   per element of its array.
//! - A glob without interpolation (`"common/*.yaml"`) names a fixed set
//!   of files, each kept at the root as the resource its path names
//!   (`common/a`); the glob's literal extension makes the path again.
//! - A module's layer (`modules/NAME/hiera.yaml` and its data) is placed
//!   by the same rules, its resources under `modules/NAME/`.
//!
//! One rule, used both ways: `hierad import-environment` stores each file
//! where [`Layout::places`] says, and a lookup in a Hiera 5 environment
//! reads the path Puppet's hierarchy interpolates from the same place
//! (`crate::lookup5`). What has no such form (URIs, two variables in one
//! path, functions in a path, an interpolated glob) is refused, naming
//! the entry.

use super::config::{Config, DataFormat, Locations};
use super::glob::glob_regex;

/// What an eyaml entry's resources end in (`common.eyaml`, `nodes.eyaml`):
/// a site keeps `common.yaml` and `common.eyaml` side by side, read by
/// two entries, and they stay two resources.
const EYAML_TAG: &str = ".eyaml";

/// The resource whose root document is the environment's hiera.yaml.
pub const CONFIG_RESOURCE: &str = "hiera";

/// The environment's module directory (Puppet's default modulepath
/// inside an environment); a module's resources are kept under it.
pub const MODULES_DIR: &str = "modules";

/// The resource whose root document is module `module`'s hiera.yaml.
pub fn module_config_resource(module: &str) -> String {
    format!("{MODULES_DIR}/{module}/{CONFIG_RESOURCE}")
}

/// The module whose hiera.yaml `resource` keeps, if it keeps one.
pub fn config_module(resource: &str) -> Option<&str> {
    let name = resource
        .strip_prefix(MODULES_DIR)?
        .strip_prefix('/')?
        .strip_suffix(CONFIG_RESOURCE)?
        .strip_suffix('/')?;
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

/// The resource whose root document names the directory the environment
/// was imported from (`{"directory": "/…/production"}`): the paths an
/// explanation prints, as `puppet lookup --explain` printed them there.
pub const ORIGIN_RESOURCE: &str = "hiera-origin";

/// Why a hierarchy has no form in hierad: the layer, the entry and the
/// reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}hierarchy entry \"{entry}\": {reason}", in_module(module.as_deref()))]
pub struct Unexpressible {
    /// The module whose hiera.yaml it is; `None`: the environment's.
    pub module: Option<String>,
    pub entry: String,
    pub reason: String,
}

fn in_module(module: Option<&str>) -> String {
    module.map_or_else(String::new, |m| format!("module \"{m}\": "))
}

/// How a hierarchy entry names its files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `path`/`paths`: a file per location (at a level value, or fixed).
    Path,
    /// `mapped_paths`: a file per element of the mapped variable.
    Mapped,
    /// `glob`/`globs` without interpolation: a fixed set of files.
    Glob,
}

/// One location template of one entry, and where its files are kept.
#[derive(Clone, Debug)]
struct Placement {
    entry: String,
    module: Option<String>,
    form: Form,
    /// The template's text before its variable (or all of it), under the
    /// layer's directory: `data/nodes/`. A glob's whole pattern.
    prefix: String,
    /// The level, when the template interpolates a variable.
    level: Option<String>,
    /// Its `%{…}` as written: `%{trusted.certname}`.
    token: String,
    /// The text after the variable: `.yaml`. A glob's literal extension.
    suffix: String,
    /// The resource; for a glob, the prefix of its files' resources (the
    /// module's `modules/NAME/`, else empty).
    resource: String,
    /// A glob's matcher, and the directory its files' resources are
    /// named under (the layer's datadir).
    glob: Option<(regex::Regex, String)>,
    /// [`EYAML_TAG`] for an eyaml entry's location, after its resources'
    /// names; else empty.
    tag: &'static str,
}

impl Placement {
    /// Whether `other` keeps different files in the same resource.
    fn clashes(&self, other: &Placement) -> bool {
        self.form != Form::Glob
            && other.form != Form::Glob
            && self.resource == other.resource
            && !(self.prefix == other.prefix
                && self.level == other.level
                && self.suffix == other.suffix)
    }
}

/// Where one data file is kept: a resource, at the root or at one level
/// value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The hierarchy entry whose location names the file.
    pub entry: String,
    /// The module whose layer reads it; `None`: the environment's.
    pub module: Option<String>,
    /// `(level, value)`; `None`: the root.
    pub level: Option<(String, String)>,
    pub resource: String,
    /// The glob that names it (as the layer's hiera.yaml joins it to the
    /// datadir), when a glob does.
    pub glob: Option<String>,
}

/// One location of the environment's hierarchy as a hierad datasource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub entry: String,
    pub form: Form,
    /// The resource; for a glob, its pattern joined to the datadir (the
    /// files it named are [`Place::glob`]'s).
    pub resource: String,
    /// The level and the interpolation that gives its value.
    pub level: Option<(String, String)>,
}

/// Every location of an environment's hierarchy and of its modules',
/// placed.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    placements: Vec<Placement>,
}

/// One layer's hiera.yaml being placed.
struct Layer<'a> {
    module: Option<&'a str>,
    /// The layer's directory under the environment's (`modules/ntp`, or
    /// empty).
    root: String,
    config: &'a Config,
}

impl Layout {
    /// Places every location of `config` (the environment layer's
    /// hiera.yaml, its directory the root of relative paths).
    ///
    /// # Errors
    /// The first entry whose locations have no form in hierad.
    pub fn of(config: &Config) -> Result<Layout, Unexpressible> {
        let mut layout = Layout::default();
        layout.add(&Layer {
            module: None,
            root: String::new(),
            config,
        })?;
        Ok(layout)
    }

    /// Adds module `name`'s layer (`config`, its `modules/NAME/hiera.yaml`).
    ///
    /// # Errors
    /// The first entry whose locations have no form in hierad.
    pub fn add_module(&mut self, name: &str, config: &Config) -> Result<(), Unexpressible> {
        self.add(&Layer {
            module: Some(name),
            root: format!("{MODULES_DIR}/{name}"),
            config,
        })
    }

    fn add(&mut self, layer: &Layer<'_>) -> Result<(), Unexpressible> {
        for entry in &layer.config.entries {
            let refuse = |reason: String| Unexpressible {
                module: layer.module.map(str::to_owned),
                entry: entry.name.clone(),
                reason,
            };
            if entry.datadir.contains("%{") || entry.datadir.starts_with('/') {
                return Err(refuse(format!(
                    "datadir \"{}\" is not a fixed directory inside the environment",
                    entry.datadir
                )));
            }
            let placing = Placing {
                entry: &entry.name,
                module: layer.module,
                base: join(&layer.root, &entry.datadir),
                tag: match entry.format {
                    DataFormat::Eyaml => EYAML_TAG,
                    DataFormat::Yaml | DataFormat::Json => "",
                },
            };
            let placed: Vec<Placement> = match &entry.locations {
                Locations::Paths(paths) => paths
                    .iter()
                    .map(|t| placing.path(t, None))
                    .collect::<Result<_, _>>(),
                Locations::Mapped([var, key, template]) => {
                    placing.path(template, Some((var, key))).map(|p| vec![p])
                }
                Locations::Globs(globs) => globs.iter().map(|g| placing.glob(g)).collect(),
                Locations::Uris(_) | Locations::None => {
                    Err("it names no path, glob or mapped path to read".into())
                }
            }
            .map_err(refuse)?;
            for p in placed {
                if let Some(other) = self.placements.iter().find(|o| o.clashes(&p)) {
                    return Err(refuse(format!(
                        "its files and an entry \"{}\"'s would be kept in one resource \"{}\"",
                        other.entry, p.resource
                    )));
                }
                self.placements.push(p);
            }
        }
        Ok(())
    }

    /// The levels, least specific first (the hierarchy lists the most
    /// specific first), each once: the environment's, then the modules'
    /// it lacks.
    pub fn levels(&self) -> Vec<String> {
        let mut levels: Vec<String> = Vec::new();
        let (env, modules): (Vec<&Placement>, Vec<&Placement>) =
            self.placements.iter().partition(|p| p.module.is_none());
        for p in env.iter().rev().chain(modules.iter().rev()) {
            if let Some(level) = &p.level {
                if !levels.contains(level) {
                    levels.push(level.clone());
                }
            }
        }
        levels
    }

    /// The leveled resources (a glob's files, kept at the root, must not
    /// be named as one of them).
    pub fn leveled_resources(&self) -> Vec<&str> {
        self.placements
            .iter()
            .filter(|p| p.level.is_some())
            .map(|p| p.resource.as_str())
            .collect()
    }

    /// Each location of the environment's hierarchy in its order, once:
    /// its entry, its form, its resource, and its level with the `%{…}`
    /// that gives its value. The modules' are Puppet's own to read.
    pub fn sources(&self) -> Vec<Source> {
        let mut out: Vec<Source> = Vec::new();
        for p in self.placements.iter().filter(|p| p.module.is_none()) {
            let source = Source {
                entry: p.entry.clone(),
                form: p.form,
                resource: match p.form {
                    Form::Glob => p.prefix.clone(),
                    _ => p.resource.clone(),
                },
                level: p.level.clone().map(|l| (l, p.token.clone())),
            };
            if !out.contains(&source) {
                out.push(source);
            }
        }
        out
    }

    /// Where the file at `path` (relative to the environment's directory:
    /// `data/nodes/web1.yaml`, `modules/ntp/data/common.yaml`) is kept:
    /// one place for each distinct location that names it (none: no
    /// hierarchy reads it).
    pub fn places(&self, path: &str) -> Vec<Place> {
        let path = join("", path);
        let mut out: Vec<Place> = Vec::new();
        for p in &self.placements {
            let Some((level, resource)) = p.place(&path) else {
                continue;
            };
            let place = Place {
                entry: p.entry.clone(),
                module: p.module.clone(),
                level,
                resource,
                glob: p.glob.as_ref().map(|_| p.prefix.clone()),
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

    /// The files the glob `pattern` (as a lookup joins it to its layer's
    /// datadir) names among `resources` (those kept at the root), sorted
    /// as Ruby's `Dir.glob` sorts them.
    pub fn glob_paths<'r>(
        &self,
        pattern: &str,
        resources: impl Iterator<Item = &'r str>,
    ) -> Vec<String> {
        let pattern = join("", pattern);
        let globs: Vec<&Placement> = self
            .placements
            .iter()
            .filter(|p| p.glob.is_some() && p.prefix == pattern)
            .collect();
        let mut out = Vec::new();
        for resource in resources {
            for p in &globs {
                let Some((_, base)) = &p.glob else { continue };
                let Some(rel) = resource
                    .strip_prefix(p.resource.as_str())
                    .and_then(|r| r.strip_suffix(p.tag))
                else {
                    continue;
                };
                let path = join(base, &format!("{rel}{}", p.suffix));
                if p.place(&path).is_some_and(|(_, r)| r == resource) && !out.contains(&path) {
                    out.push(path);
                }
            }
        }
        out.sort();
        out
    }
}

impl Placement {
    /// Where this location keeps the file at `path` (normalized), if it
    /// names it.
    fn place(&self, path: &str) -> Option<(Option<(String, String)>, String)> {
        if let Some((re, base)) = &self.glob {
            let stem = path.strip_suffix(&self.suffix)?;
            let rel = under(base, stem)?;
            let resource = format!("{}{rel}{}", self.resource, self.tag);
            // Never a layer's hiera.yaml (`data/hiera.yaml` under a
            // datadir of `.`, or a module's under `**`).
            let ok = re.is_match(path)
                && !rel.split('/').any(str::is_empty)
                && resource != CONFIG_RESOURCE
                && config_module(&resource).is_none();
            return ok.then_some((None, resource));
        }
        let rest = path.strip_prefix(&self.prefix)?;
        let level = match &self.level {
            None if rest.is_empty() && self.suffix.is_empty() => None,
            None => return None,
            Some(level) => match rest.strip_suffix(&self.suffix) {
                Some(value) if !value.is_empty() && !value.contains('/') => {
                    Some((level.clone(), value.to_owned()))
                }
                _ => return None,
            },
        };
        Some((level, self.resource.clone()))
    }
}

/// One entry of one layer being placed.
struct Placing<'a> {
    entry: &'a str,
    module: Option<&'a str>,
    /// The layer's datadir under the environment's directory.
    base: String,
    /// [`Placement::tag`].
    tag: &'static str,
}

impl Placing<'_> {
    fn placement(&self, form: Form) -> Placement {
        Placement {
            entry: self.entry.to_owned(),
            module: self.module.map(str::to_owned),
            form,
            prefix: String::new(),
            level: None,
            token: String::new(),
            suffix: String::new(),
            resource: self
                .module
                .map_or_else(String::new, |m| format!("{MODULES_DIR}/{m}/")),
            glob: None,
            tag: self.tag,
        }
    }

    /// A path template placed (`mapped`: the mapped variable and the key
    /// the template interpolates); `Err`: why it cannot be.
    fn path(&self, template: &str, mapped: Option<(&str, &str)>) -> Result<Placement, String> {
        let full = self.full(template)?;
        let form = if mapped.is_some() {
            Form::Mapped
        } else {
            Form::Path
        };
        let mut p = self.placement(form);
        let Some(start) = full.find("%{") else {
            if mapped.is_some() {
                return Err(format!(
                    "mapped path \"{template}\" does not interpolate its key"
                ));
            }
            p.resource += &resource_name(under(&self.base, &full).unwrap_or(&full), None);
            p.resource += self.tag;
            p.prefix = full;
            return checked(p);
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
        let variable = token.trim().trim_start_matches("::");
        let level = match mapped {
            Some((var, key)) if variable == key.trim_start_matches("::") => {
                var.trim_start_matches("::")
            }
            Some((_, key)) => {
                return Err(format!(
                    "mapped path \"{template}\" interpolates %{{{token}}}, not its key {key}: hierad keeps its files at the values of one variable"
                ));
            }
            None => variable,
        };
        if !is_variable(level) {
            return Err(format!(
                "path \"{template}\" interpolates %{{{token}}}, not a variable: hierad keeps files at the values of one variable"
            ));
        }
        let relative = under(&self.base, &full).unwrap_or(&full);
        p.resource += &resource_name(
            &relative.replacen(&format!("%{{{token}}}"), "", 1),
            Some(level),
        );
        p.resource += self.tag;
        p.prefix = prefix.to_owned();
        p.level = Some(level.to_owned());
        p.token = format!("%{{{token}}}");
        p.suffix = suffix.to_owned();
        checked(p)
    }

    /// A glob placed: a fixed pattern ending in its files' extension.
    fn glob(&self, pattern: &str) -> Result<Placement, String> {
        let full = self.full(pattern)?;
        if full.contains("%{") {
            return Err(format!(
                "glob \"{pattern}\" interpolates: the files it names change with the node, and hierad keeps a fixed set"
            ));
        }
        let ext = full
            .rsplit_once('.')
            .map(|(_, ext)| ext)
            .filter(|ext| !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric()));
        let (Some(ext), Some(re)) = (ext, glob_regex(&full)) else {
            return Err(format!(
                "glob \"{pattern}\" does not end in its files' extension (\"*.yaml\"): hierad names a file's resource without it"
            ));
        };
        let mut p = self.placement(Form::Glob);
        p.suffix = format!(".{ext}");
        p.prefix = full;
        p.glob = Some((re, self.base.clone()));
        Ok(p)
    }

    /// The template under the layer's datadir, refused outside it.
    fn full(&self, template: &str) -> Result<String, String> {
        let full = join(&self.base, template);
        if template.starts_with('/') || full.split('/').any(|s| s == "..") {
            return Err(format!(
                "path \"{template}\" is outside the environment's directory"
            ));
        }
        Ok(full)
    }
}

fn is_variable(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn checked(p: Placement) -> Result<Placement, String> {
    let config = match &p.module {
        Some(m) => module_config_resource(m),
        None => CONFIG_RESOURCE.to_owned(),
    };
    let kept = if p.resource == config {
        "its hiera.yaml"
    } else if p.module.is_none() && p.resource == ORIGIN_RESOURCE {
        "the directory it was imported from"
    } else {
        return Ok(p);
    };
    Err(format!(
        "its files would be kept in resource \"{}\", where the layer keeps {kept}",
        p.resource
    ))
}

/// `path` under the directory `base` (all of it when `base` is empty).
fn under<'p>(base: &str, path: &'p str) -> Option<&'p str> {
    if base.is_empty() {
        return Some(path);
    }
    path.strip_prefix(base)?.strip_prefix('/')
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
        .filter(|s| *s != "." && !s.is_empty())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests;
