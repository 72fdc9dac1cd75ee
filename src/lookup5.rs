//! The one Hiera 5 lookup path over the ConfigDB: a lookup in a Hiera 5
//! environment (docs/hiera5.md) answered by [`crate::hiera5::Lookup`],
//! unchanged, reading the environment's stored hiera.yaml and documents
//! as the files `puppet lookup` would read. Where each file is kept is
//! [`Layout`]'s rule, the one `hierad import-environment` stores by.

use crate::configdb::{ConfigError, DocKind, LevelPath, LevelValue, Snapshot};
use crate::hiera::budget::Meter;
use crate::hiera::error::ErrorClass;
use crate::hiera::{Hash, HieraError, Value};
use crate::hiera5::{
    self, CONFIG_RESOURCE, Files, KeptRead, Layout, Lookup, MODULES_DIR, Scope, Strategy, Tree,
    config_module, kept_read, module_config_resource,
};
use std::collections::HashMap;

/// The environment's hiera.yaml, as the lookup names it (the layer's
/// directory is the empty path, so data paths are `data/…`).
const CONFIG_PATH: &str = "hiera.yaml";

/// A global hiera.yaml no document stands for: Puppet's built-in global
/// layer, which finds no `data/common.yaml` beside it.
const GLOBAL_CONFIG: &str = "/hierad/global/hiera.yaml";

/// The environment Puppet's `$environment` names when a request's scope
/// does not set `environment` (`puppet lookup`'s default).
const DEFAULT_ENVIRONMENT: &str = "production";

/// One Hiera 5 environment of a snapshot, as files.
pub(crate) struct SnapshotFiles<'s> {
    snapshot: &'s Snapshot,
    env: i64,
    /// The layers' hiera.yaml files by path (`hiera.yaml`,
    /// `modules/NAME/hiera.yaml`), as stored.
    configs: HashMap<String, Value>,
    layout: Layout,
}

impl<'s> SnapshotFiles<'s> {
    /// The files of environment `env`: its hiera.yaml (the root document
    /// of resource `hiera`), each module's (of `modules/NAME/hiera`), and
    /// the documents their hierarchies place.
    ///
    /// # Errors
    /// A stored hiera.yaml that does not read as version 5, or that has
    /// no form in hierad (written by hand, not by import-environment).
    pub(crate) fn new(snapshot: &'s Snapshot, env: i64) -> hiera5::Result<SnapshotFiles<'s>> {
        let stored = |resource: &str| {
            snapshot
                .effective(env, &LevelPath::root(), resource)
                .filter(|doc| !doc.is_empty())
                .map(|doc| Value::Hash((*doc).clone()))
        };
        let mut configs = HashMap::new();
        let mut layout = Layout::default();
        if let Some(value) = stored(CONFIG_RESOURCE) {
            let parsed = hiera5::Config::from_value(CONFIG_PATH, &value)?;
            layout = Layout::of(&parsed).map_err(unexpressible(CONFIG_PATH))?;
            configs.insert(CONFIG_PATH.to_owned(), value);
        }
        let modules: Vec<&str> = snapshot
            .resource_names(env)
            .into_iter()
            .flatten()
            .filter_map(config_module)
            .collect();
        for module in modules {
            let Some(value) = stored(&module_config_resource(module)) else {
                continue;
            };
            let path = format!("{MODULES_DIR}/{module}/{CONFIG_PATH}");
            let parsed = hiera5::Config::from_value(&path, &value)?;
            layout
                .add_module(module, &parsed)
                .map_err(unexpressible(&path))?;
            configs.insert(path, value);
        }
        Ok(SnapshotFiles {
            snapshot,
            env,
            configs,
            layout,
        })
    }

    /// The level paths and resources the layout keeps the file at `path`
    /// at.
    fn places(&self, path: &str) -> impl Iterator<Item = (LevelPath, String)> {
        self.layout.places(path).into_iter().filter_map(|place| {
            let level = match place.level {
                None => LevelPath::root(),
                Some((level, value)) => LevelPath::new(vec![LevelValue::new(level, value).ok()?]),
            };
            Some((level, place.resource))
        })
    }

    /// The effective document kept for the file at `path`, if any.
    fn document(&self, path: &str) -> Option<Hash> {
        self.places(path).find_map(|(level, resource)| {
            let kept = DocKind::ALL.iter().any(|kind| {
                self.snapshot
                    .stored(self.env, &level, &resource, *kind)
                    .is_ok_and(|doc| doc.is_some())
            });
            if !kept {
                return None;
            }
            let doc = self.snapshot.effective(self.env, &level, &resource)?;
            Some((*doc).clone())
        })
    }
}

impl Files for SnapshotFiles<'_> {
    fn read(&self, _: &str) -> Option<String> {
        // Every file is handed over parsed (`parsed`).
        None
    }

    fn is_file(&self, path: &str) -> bool {
        if self.configs.contains_key(path) {
            return true;
        }
        self.document(path).is_some() || self.unparsable(path).is_some()
    }

    fn is_dir(&self, _: &str) -> bool {
        false
    }

    fn glob(&self, pattern: &str) -> Vec<String> {
        // A glob's files are kept at the root, each the resource its path
        // names (`Layout`).
        let root = LevelPath::root();
        let kept = self
            .snapshot
            .resource_names(self.env)
            .into_iter()
            .flatten()
            .filter(|r| {
                DocKind::ALL.iter().any(|kind| {
                    matches!(
                        self.snapshot.stored(self.env, &root, r, *kind),
                        Ok(Some(_)) | Err(ConfigError::Unparsed(_))
                    )
                })
            });
        self.layout.glob_paths(pattern, kept)
    }

    fn parsed(&self, path: &str) -> Option<Value> {
        if let Some(config) = self.configs.get(path) {
            return Some(config.clone());
        }
        self.document(path).map(Value::Hash)
    }

    fn unparsable(&self, path: &str) -> Option<KeptRead> {
        self.places(path).find_map(|(level, resource)| {
            DocKind::ALL.iter().find_map(|kind| {
                match self.snapshot.stored(self.env, &level, &resource, *kind) {
                    // Puppet's reading of the file, naming it by its path
                    // in the environment, as `parse` names files.
                    Err(ConfigError::Unparsed(kept)) => {
                        Some(kept_read(path, kept.error.class, &kept.error.message))
                    }
                    _ => None,
                }
            })
        })
    }
}

/// What a Hiera 5 lookup request asks.
#[derive(Clone, Debug)]
pub(crate) struct Request5<'r> {
    pub(crate) env: i64,
    /// The node's facts (`environment` among them names Puppet's
    /// `$environment`; else `production`).
    pub(crate) facts: &'r Hash,
    /// Puppet's `merge`: a strategy's name or a Hash with its options;
    /// `None`: the keys' `lookup_options`.
    pub(crate) merge: Option<&'r Value>,
}

/// The value of `key` in a Hiera 5 environment, as `puppet lookup`
/// finds it over the same files; `None`: not found. It spends from
/// `meter` (the lookups of one request share it).
///
/// # Errors
/// Puppet's errors for the same lookup, as [`HieraError`]s of Puppet's
/// classes (see [`error`]); a budget refusal as `hiera::budget` words it.
pub(crate) fn lookup(
    snapshot: &Snapshot,
    request: &Request5<'_>,
    key: &str,
    meter: &mut Meter,
) -> Result<Option<Value>, HieraError> {
    let files = SnapshotFiles::new(snapshot, request.env).map_err(error)?;
    let merge = request
        .merge
        .map(Strategy::from_value)
        .transpose()
        .map_err(error)?;
    let environment = request
        .facts
        .get(&Value::str("environment"))
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_ENVIRONMENT)
        .to_owned();
    let tree = Tree {
        global_config: GLOBAL_CONFIG.into(),
        environment_dir: Some(String::new()),
    };
    let scope = Scope::for_node(request.facts.clone(), &environment);
    let lookup = Lookup::new(tree, &files, scope).budget(*meter);
    let answer = lookup.lookup(&[key.to_owned()], merge.as_ref());
    *meter = lookup.meter();
    answer.map_err(error)
}

/// A stored hiera.yaml whose hierarchy has no form in hierad, as Puppet
/// reports a hiera.yaml it refuses.
fn unexpressible(path: &str) -> impl FnOnce(hiera5::Unexpressible) -> hiera5::Error + '_ {
    move |e| hiera5::Error::Config {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

/// A Hiera 5 error as the API carries it: `ArgumentError` for what
/// `puppet lookup` prints (a bad merge), hierad's `RuntimeError` for what
/// it does not read, else Puppet's `LookupError` (which `puppet lookup`
/// answers with exit status 1 and nothing printed).
pub(crate) fn error(e: hiera5::Error) -> HieraError {
    if let hiera5::Error::Budget(refusal) = e {
        return refusal;
    }
    let class = if e.printed_by_puppet() {
        ErrorClass::ArgumentError
    } else if matches!(e, hiera5::Error::Unsupported(_)) {
        ErrorClass::RuntimeError
    } else {
        ErrorClass::LookupError
    };
    HieraError::new(class, e.to_string())
}

#[cfg(test)]
mod tests;
