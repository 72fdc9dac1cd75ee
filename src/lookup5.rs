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
    self, CONFIG_RESOURCE, Explanation, Files, KeptRead, Layout, Lookup, MODULES_DIR,
    ORIGIN_RESOURCE, Scope, Strategy, Tree, config_module, kept_read, module_config_resource,
};
use std::collections::HashMap;
use std::sync::Arc;

/// A layer's hiera.yaml, under its directory.
const CONFIG_FILE: &str = "hiera.yaml";

/// A global hiera.yaml no document stands for: Puppet's built-in global
/// layer, which finds no `data/common.yaml` beside it.
const GLOBAL_CONFIG: &str = "/hierad/global/hiera.yaml";

/// The environment Puppet's `$environment` names when a request's scope
/// does not set `environment` (`puppet lookup`'s default).
const DEFAULT_ENVIRONMENT: &str = "production";

/// What a Hiera 5 environment's lookups read of its hiera.yaml, made
/// once per snapshot (kept in its memo: `configdb/memo/derived.rs`), not
/// per lookup.
#[derive(Debug)]
struct Prepared {
    /// The directory the environment was imported from, which the paths
    /// of its files are under (as an explanation prints them); empty
    /// when none is recorded, so paths are `hiera.yaml`, `data/…`.
    directory: String,
    /// Its hiera.yaml's path under `directory`.
    config_path: String,
    /// The layers' hiera.yaml files by their path in the environment
    /// (`hiera.yaml`, `modules/NAME/hiera.yaml`), as stored.
    configs: HashMap<String, Value>,
    /// The environment's hiera.yaml parsed, when it is version 5.
    parsed: Option<Arc<hiera5::Config>>,
    layout: Layout,
}

impl Prepared {
    /// Environment `env`'s hiera.yaml (the root document of resource
    /// `hiera`), each module's (of `modules/NAME/hiera`), and where it
    /// came from (resource `hiera-origin`).
    ///
    /// # Errors
    /// A stored hiera.yaml that does not read as version 5, or that has
    /// no form in hierad (written by hand, not by import-environment).
    fn of(snapshot: &Snapshot, env: i64) -> hiera5::Result<Prepared> {
        let stored = |resource: &str| {
            snapshot
                .effective(env, &LevelPath::root(), resource)
                .filter(|doc| !doc.is_empty())
                .map(|doc| Value::Hash((*doc).clone()))
        };
        let directory = stored(ORIGIN_RESOURCE)
            .and_then(|doc| doc.as_hash()?.get(&Value::str("directory")).cloned())
            .and_then(|dir| dir.as_str().map(|d| d.trim_end_matches('/').to_owned()))
            .unwrap_or_default();
        let under = |rel: &str| {
            if directory.is_empty() {
                rel.to_owned()
            } else {
                format!("{directory}/{rel}")
            }
        };
        let config_path = under(CONFIG_FILE);
        let mut configs = HashMap::new();
        let mut layout = Layout::default();
        let mut parsed = None;
        if let Some(value) = stored(CONFIG_RESOURCE) {
            let config = hiera5::Config::from_value(&config_path, &value)?;
            layout = Layout::of(&config).map_err(unexpressible(CONFIG_FILE))?;
            let v5 = value
                .as_hash()
                .and_then(|h| h.get(&Value::str("version")))
                .is_some_and(|v| *v == Value::Int(5));
            parsed = v5.then(|| Arc::new(config));
            configs.insert(CONFIG_FILE.to_owned(), value);
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
            let rel = format!("{MODULES_DIR}/{module}/{CONFIG_FILE}");
            let config = hiera5::Config::from_value(&under(&rel), &value)?;
            layout
                .add_module(module, &config)
                .map_err(unexpressible(&rel))?;
            configs.insert(rel, value);
        }
        Ok(Prepared {
            directory,
            config_path,
            configs,
            parsed,
            layout,
        })
    }
}

/// A stored hiera.yaml whose hierarchy has no form in hierad, as Puppet
/// reports a hiera.yaml it refuses.
fn unexpressible(path: &str) -> impl FnOnce(hiera5::Unexpressible) -> hiera5::Error + '_ {
    move |e| hiera5::Error::Config {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

/// One Hiera 5 environment of a snapshot, as files.
pub(crate) struct SnapshotFiles<'s> {
    snapshot: &'s Snapshot,
    env: i64,
    /// Always `Ok` (checked by [`SnapshotFiles::new`]).
    prepared: Arc<hiera5::Result<Prepared>>,
}

impl<'s> SnapshotFiles<'s> {
    /// The files of environment `env`: its hiera.yaml and the documents
    /// its hierarchy places.
    ///
    /// # Errors
    /// As [`Prepared::of`].
    pub(crate) fn new(snapshot: &'s Snapshot, env: i64) -> hiera5::Result<SnapshotFiles<'s>> {
        let prepared = snapshot.memo().derived(env, || Prepared::of(snapshot, env));
        if let Err(e) = &*prepared {
            return Err(e.clone());
        }
        Ok(SnapshotFiles {
            snapshot,
            env,
            prepared,
        })
    }

    fn prepared(&self) -> &Prepared {
        match &*self.prepared {
            Ok(prepared) => prepared,
            Err(_) => unreachable!("SnapshotFiles::new checks it"),
        }
    }

    /// `path` under the environment's directory (`None`: outside it).
    fn relative<'p>(&self, path: &'p str) -> Option<&'p str> {
        let directory = &self.prepared().directory;
        if directory.is_empty() {
            return Some(path);
        }
        path.strip_prefix(directory.as_str())?.strip_prefix('/')
    }

    /// `rel` under the environment's directory.
    fn absolute(&self, rel: &str) -> String {
        let directory = &self.prepared().directory;
        if directory.is_empty() {
            rel.to_owned()
        } else {
            format!("{directory}/{rel}")
        }
    }

    /// The level paths and resources the layout keeps the file at `path`
    /// at.
    fn places(&self, path: &str) -> impl Iterator<Item = (LevelPath, String)> {
        let places = self
            .relative(path)
            .map(|rel| self.prepared().layout.places(rel))
            .unwrap_or_default();
        places.into_iter().filter_map(|place| {
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
        if self
            .relative(path)
            .is_some_and(|rel| self.prepared().configs.contains_key(rel))
        {
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
        let Some(pattern) = self.relative(pattern) else {
            return Vec::new();
        };
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
        let paths = self.prepared().layout.glob_paths(pattern, kept);
        paths.iter().map(|rel| self.absolute(rel)).collect()
    }

    fn parsed(&self, path: &str) -> Option<Value> {
        if let Some(config) = self
            .relative(path)
            .and_then(|rel| self.prepared().configs.get(rel))
        {
            return Some(config.clone());
        }
        self.document(path).map(Value::Hash)
    }

    fn config(&self, path: &str) -> Option<Arc<hiera5::Config>> {
        let prepared = self.prepared();
        (path == prepared.config_path)
            .then(|| prepared.parsed.clone())
            .flatten()
    }

    fn unparsable(&self, path: &str) -> Option<KeptRead> {
        self.places(path).find_map(|(level, resource)| {
            DocKind::ALL.iter().find_map(|kind| {
                match self.snapshot.stored(self.env, &level, &resource, *kind) {
                    // Puppet's reading of the file, naming it by its path,
                    // as `parse` names files.
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
    let (lookup, merge) = prepared(&files, request)?;
    let lookup = lookup.budget(*meter);
    let answer = lookup.lookup(&[key.to_owned()], merge.as_ref());
    *meter = lookup.meter();
    answer.map_err(error)
}

/// One `puppet lookup --explain` of `keys` (the first found answers).
#[derive(Debug)]
pub(crate) struct Explained {
    pub(crate) found: Option<Value>,
    /// The lookup's failure, the explanation's last line.
    pub(crate) failure: Option<HieraError>,
    pub(crate) explanation: Explanation,
}

/// [`lookup`] of `keys`, explained as `puppet lookup --explain` explains
/// it over the files the environment was imported from.
///
/// # Errors
/// What `puppet lookup --explain` does not explain but refuses (a bad
/// `merge`), what hierad does not read, and a lookup over `meter`'s
/// budget; a failed lookup is [`Explained::failure`].
pub(crate) fn explain(
    snapshot: &Snapshot,
    request: &Request5<'_>,
    keys: &[String],
    has_default: bool,
    meter: Meter,
) -> Result<Explained, HieraError> {
    let files = SnapshotFiles::new(snapshot, request.env).map_err(error)?;
    let (lookup, merge) = prepared(&files, request)?;
    let lookup = lookup.explaining().budget(meter);
    let result = lookup.lookup(keys, merge.as_ref());
    if let Err(e) = &result
        && (e.printed_by_puppet()
            || matches!(e, hiera5::Error::Unsupported(_) | hiera5::Error::Budget(_)))
    {
        return Err(error(e.clone()));
    }
    let explanation = lookup
        .explained(keys, &result, has_default)
        .expect("the lookup explains");
    let (found, failure) = match result {
        Ok(found) => (found, None),
        Err(e) => (None, Some(error(e))),
    };
    Ok(Explained {
        found,
        failure,
        explanation,
    })
}

/// A lookup over `files` for `request`'s node, and its merge.
fn prepared<'f>(
    files: &'f SnapshotFiles<'_>,
    request: &Request5<'_>,
) -> Result<(Lookup<'f, SnapshotFiles<'f>>, Option<Strategy>), HieraError> {
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
        environment_dir: Some(files.prepared().directory.clone()),
    };
    let scope = Scope::for_node(request.facts.clone(), &environment);
    Ok((Lookup::new(tree, files, scope), merge))
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
