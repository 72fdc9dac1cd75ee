//! The lookup itself: the global, environment and module layers in
//! Puppet's order, each layer's hierarchy and each entry's locations,
//! merged by one strategy at every level, then dug into and converted.
//! Ported from puppet/pops/lookup.rb, lookup/lookup_adapter.rb,
//! configured_data_provider.rb, data_hash_function_provider.rb,
//! location_resolver.rb and functions/yaml_data.rb, json_data.rb.

use super::config::{Config, DataFormat, Entry, Locations};
use super::error::{Error, Result};
use super::key::LookupKey;
use super::merge::Strategy;
use super::options::{self, Compiled};
use super::scope::Scope;
use crate::hiera::{Hash, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The files a lookup reads: the one door to I/O, so the semantics stay
/// pure and testable over a map of texts.
pub trait Files {
    /// The text of the file at `path`; `None` when there is no readable
    /// file there.
    fn read(&self, path: &str) -> Option<String>;
    /// Whether a file (not a directory) is at `path`.
    fn is_file(&self, path: &str) -> bool;
    /// The files (not directories) matching a Ruby `Dir.glob` pattern,
    /// sorted as Ruby sorts them.
    fn glob(&self, pattern: &str) -> Vec<String>;
}

/// Where the three layers are.
#[derive(Clone, Debug)]
pub struct Tree {
    /// The global layer's hiera.yaml (Puppet's `hiera_config` setting);
    /// when absent, Puppet's default: `data/common.yaml` beside it.
    pub global_config: String,
    /// The environment's directory (`environmentpath/environment`).
    pub environment_dir: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Layer {
    Global,
    Environment,
    Module(String),
}

/// A configured layer: its hiera.yaml and the directory it is in.
struct Layered {
    config: Config,
    root: String,
    module: Option<String>,
}

/// One resolved location of a hierarchy entry.
struct Location {
    path: String,
    exists: bool,
}

const LOOKUP_OPTIONS: &str = "lookup_options";

/// One `puppet lookup` run: the tree, the node's scope, and what was
/// read and decided so far (files parse once, as Puppet caches them).
pub struct Lookup<'f, F: Files> {
    tree: Tree,
    files: &'f F,
    scope: Scope,
    layers: RefCell<HashMap<Layer, Option<Rc<Layered>>>>,
    data: RefCell<HashMap<String, Result<Rc<Hash>>>>,
    options: RefCell<HashMap<Option<String>, Rc<Compiled>>>,
    /// The keys being looked up, for Puppet's recursion check.
    stack: RefCell<Vec<String>>,
    warnings: RefCell<Vec<String>>,
}

impl<F: Files> std::fmt::Debug for Lookup<'_, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lookup")
            .field("tree", &self.tree)
            .finish_non_exhaustive()
    }
}

impl<'f, F: Files> Lookup<'f, F> {
    pub fn new(tree: Tree, files: &'f F, scope: Scope) -> Lookup<'f, F> {
        Lookup {
            tree,
            files,
            scope,
            layers: RefCell::default(),
            data: RefCell::default(),
            options: RefCell::default(),
            stack: RefCell::default(),
            warnings: RefCell::default(),
        }
    }

    /// `Lookup.lookup(names, …)`: the value of the first of `keys` found,
    /// merged by `merge` or else by the key's `lookup_options`.
    ///
    /// # Errors
    /// The first error met (Puppet stops there too).
    pub fn lookup(&self, keys: &[String], merge: Option<&Strategy>) -> Result<Option<Value>> {
        for key in keys {
            if let Some(v) = self.search(key, merge)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    /// Puppet's warnings so far (undefined variables, data files without
    /// a Hash), as `Warning: …` lines carry them.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.borrow().clone()
    }

    pub(crate) fn warn(&self, message: String) {
        let mut warnings = self.warnings.borrow_mut();
        if !warnings.contains(&message) {
            warnings.push(message);
        }
    }

    /// A lookup from an interpolation: `''` when nothing is found.
    pub(crate) fn lookup_nested(&self, key: &str) -> Result<Value> {
        Ok(self.search(key, None)?.unwrap_or_else(|| Value::str("")))
    }

    /// `Invocation#check`: runs `f` with `name` on the stack, refusing a
    /// name already there.
    pub(crate) fn checked<T>(&self, name: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        {
            let mut stack = self.stack.borrow_mut();
            if stack.iter().any(|n| n == name) {
                return Err(Error::Recursive(stack.join(", ")));
            }
            stack.push(name.to_owned());
        }
        let result = f();
        self.stack.borrow_mut().pop();
        result
    }

    /// `LookupAdapter#lookup` for one key.
    fn search(&self, key: &str, merge: Option<&Strategy>) -> Result<Option<Value>> {
        if key == LOOKUP_OPTIONS || key.starts_with("lookup_options.") {
            return Ok(None);
        }
        let key = LookupKey::new(key)?;
        let compiled = self.lookup_options(key.module.as_deref())?;
        let options = compiled.for_key(&key.root).and_then(Value::as_hash);
        let strategy = match (merge, options.and_then(|o| o.get(&Value::str("merge")))) {
            (Some(m), _) => m.clone(),
            (None, Some(m)) => Strategy::from_value(m)?,
            (None, None) => Strategy::First,
        };
        let found = self.do_lookup(&key, &strategy)?;
        let convert_to = options.and_then(|o| o.get(&Value::str("convert_to")));
        match (found, convert_to) {
            (Some(v), Some(to)) => options::convert(&key.text, to, v).map(Some),
            (found, _) => Ok(found),
        }
    }

    fn do_lookup(&self, key: &LookupKey, strategy: &Strategy) -> Result<Option<Value>> {
        let stack = [
            Some(Layer::Global),
            Some(Layer::Environment),
            key.module.clone().map(Layer::Module),
        ];
        let merged = strategy.lookup(stack.len(), |i| match &stack[i] {
            Some(layer) => self.layer_lookup(layer, key, strategy),
            None => Ok(None),
        })?;
        match merged {
            Some(v) => key.dig(v),
            None => Ok(None),
        }
    }

    /// `ConfiguredDataProvider#key_lookup` for one layer.
    fn layer_lookup(
        &self,
        layer: &Layer,
        key: &LookupKey,
        strategy: &Strategy,
    ) -> Result<Option<Value>> {
        let Some(layered) = self.layer(layer)? else {
            return Ok(None);
        };
        self.checked(&key.text, || {
            let entries = &layered.config.entries;
            strategy.lookup(entries.len(), |i| {
                let Some(locations) = self.locations(&layered, &entries[i])? else {
                    return Err(missing_path());
                };
                strategy.lookup(locations.len(), |j| match &locations[j] {
                    loc if !loc.exists => Ok(None),
                    loc => {
                        let data =
                            self.data(&loc.path, entries[i].format, layered.module.as_deref())?;
                        match data.get(&Value::str(key.root.as_str())) {
                            None => Ok(None),
                            Some(v) if !is_rich_data(v) => Err(Error::Data(format!(
                                "Value for key '{}', in hash returned from data_hash function '{}', when using location '{}', has wrong type, expects Puppet::LookupValue",
                                key.root,
                                entries[i].format.function(),
                                loc.path
                            ))),
                            Some(v) => self.interpolate(v.clone(), &self.scope, true).map(Some),
                        }
                    }
                })
            })
        })
    }

    /// The merged `lookup_options` of the global and environment layers,
    /// and of `module`'s when the key is in one.
    fn lookup_options(&self, module: Option<&str>) -> Result<Rc<Compiled>> {
        let cached = self
            .options
            .borrow()
            .get(&module.map(str::to_owned))
            .cloned();
        if let Some(c) = cached {
            return Ok(c);
        }
        let key = LookupKey::new(LOOKUP_OPTIONS)?;
        let hash = Strategy::Hash;
        let of = |layer: Layer, module: Option<&str>| -> Result<Option<Value>> {
            match self.layer_lookup(&layer, &key, &hash)? {
                Some(v) => Ok(Some(Value::Hash(options::validate(v, module)?))),
                None => Ok(None),
            }
        };
        let global = of(Layer::Global, None)?;
        let env = of(Layer::Environment, None)?;
        let mut opts = match (global, env) {
            (Some(g), Some(e)) => Some(hash.merge(g, e)?),
            (g, e) => g.or(e),
        };
        if let Some(m) = module {
            if let Some(mo) = of(Layer::Module(m.to_owned()), Some(m))? {
                opts = Some(match opts {
                    Some(o) => hash.merge(o, mo)?,
                    None => mo,
                });
            }
        }
        let compiled = Rc::new(match opts {
            Some(Value::Hash(h)) => Compiled::new(&h)?,
            _ => Compiled::default(),
        });
        self.options
            .borrow_mut()
            .insert(module.map(str::to_owned), compiled.clone());
        Ok(compiled)
    }

    /// A layer's configuration, read once.
    fn layer(&self, layer: &Layer) -> Result<Option<Rc<Layered>>> {
        if let Some(known) = self.layers.borrow().get(layer) {
            return Ok(known.clone());
        }
        let layered = self.read_layer(layer)?.map(Rc::new);
        self.layers
            .borrow_mut()
            .insert(layer.clone(), layered.clone());
        Ok(layered)
    }

    fn read_layer(&self, layer: &Layer) -> Result<Option<Layered>> {
        let (root, module) = match layer {
            Layer::Global => {
                let path = &self.tree.global_config;
                let root = parent(path);
                if !self.files.is_file(path) {
                    return Ok(Some(Layered {
                        config: Config::default_config(),
                        root,
                        module: None,
                    }));
                }
                let config = self.config(path)?;
                return Ok(config.map(|config| Layered {
                    config,
                    root,
                    module: None,
                }));
            }
            Layer::Environment => match &self.tree.environment_dir {
                Some(dir) => (dir.clone(), None),
                None => return Ok(None),
            },
            Layer::Module(name) => match &self.tree.environment_dir {
                Some(dir) => (join(&join(dir, "modules"), name), Some(name.clone())),
                None => return Ok(None),
            },
        };
        let path = join(&root, "hiera.yaml");
        if !self.files.is_file(&path) {
            return Ok(None);
        }
        let config = self.config(&path)?;
        Ok(config.map(|config| Layered {
            config,
            root,
            module,
        }))
    }

    /// A hiera.yaml; `None` for version 3 outside the global layer, which
    /// Puppet ignores with a warning.
    fn config(&self, path: &str) -> Result<Option<Config>> {
        let text = self.files.read(path).unwrap_or_default();
        let loaded = crate::hiera::yaml::load(&text).map_err(|e| Error::Config {
            path: path.to_owned(),
            message: format!("Unable to parse {}", e.message),
        })?;
        let version = loaded.as_hash().and_then(|h| {
            h.get(&Value::str("version"))
                .or_else(|| h.get(&Value::Symbol("version".into())))
        });
        let is_v3 = matches!(version, None | Some(Value::Int(3)));
        if is_v3 && path != self.tree.global_config {
            self.warn(format!("hiera.yaml version 3 found at {path} was ignored"));
            return Ok(None);
        }
        Config::from_value(path, &loaded).map(Some)
    }

    /// `create_configured_data_providers`' locations for one entry.
    fn locations(&self, layered: &Layered, entry: &Entry) -> Result<Option<Vec<Location>>> {
        let datadir = self.interpolate_str(&join(&layered.root, &entry.datadir), &self.scope)?;
        let found = |path: String| {
            let exists = self.files.is_file(&path);
            Location { path, exists }
        };
        let mut out = Vec::new();
        match &entry.locations {
            Locations::None | Locations::Uris(_) => {}
            Locations::Paths(paths) => {
                for p in paths {
                    let loc = found(join(&datadir, &self.interpolate_str(p, &self.scope)?));
                    if loc.exists || !layered.config.is_default {
                        out.push(loc);
                    }
                }
            }
            Locations::Globs(globs) => {
                for g in globs {
                    let pattern = join(&datadir, &self.interpolate_str(g, &self.scope)?);
                    out.extend(self.files.glob(&pattern).into_iter().map(found));
                }
            }
            Locations::Mapped([var, name, template]) => {
                let vars = match self.scope_value(var, &self.scope, "mapped_path[0]")? {
                    Value::Array(items) => items,
                    Value::String(s) if !s.is_empty() => vec![Value::String(s)],
                    _ => Vec::new(),
                };
                for v in vars {
                    let scope = self.scope.with(name, v);
                    out.push(found(join(
                        &datadir,
                        &self.interpolate_str(template, &scope)?,
                    )));
                }
            }
        }
        if matches!(entry.locations, Locations::None | Locations::Uris(_)) {
            // Puppet calls the function without a `path`, which
            // yaml_data and json_data refuse when the entry is read.
            return Ok(None);
        }
        Ok(Some(out))
    }

    /// A data file's Hash, parsed once.
    fn data(&self, path: &str, format: DataFormat, module: Option<&str>) -> Result<Rc<Hash>> {
        if let Some(known) = self.data.borrow().get(path) {
            return known.clone();
        }
        let parsed = self.parse(path, format, module);
        self.data
            .borrow_mut()
            .insert(path.to_owned(), parsed.clone());
        parsed
    }

    fn parse(&self, path: &str, format: DataFormat, module: Option<&str>) -> Result<Rc<Hash>> {
        let text = self.files.read(path).unwrap_or_default();
        let mut hash = match format {
            DataFormat::Yaml => match crate::hiera::yaml::load(&text) {
                Ok(Value::Hash(h)) => symkeys_to_string(h),
                Ok(_) => {
                    self.warn(format!("{path}: file does not contain a valid yaml hash"));
                    Hash::default()
                }
                Err(e) => return Err(Error::Data(format!("Unable to parse {}", e.message))),
            },
            DataFormat::Json => match crate::hiera::json::load(&text) {
                Ok(Value::Hash(h)) => h,
                Ok(other) => {
                    return Err(Error::Data(format!(
                        "Value returned from data_hash function 'json_data', when using location '{path}', has wrong type, expects a Hash value, got {}",
                        other.class_name()
                    )));
                }
                Err(e) => {
                    return Err(Error::Data(format!(
                        "Unable to parse ({path}): {}",
                        e.message
                    )));
                }
            },
        };
        if let Some(m) = module {
            let prefix = format!("{m}::");
            let before = hash.len();
            hash.retain(|k, _| {
                k.as_str()
                    .is_some_and(|k| k == LOOKUP_OPTIONS || k.starts_with(&prefix))
            });
            if hash.len() != before {
                self.warn(format!(
                    "Module '{m}': Value returned from data_hash function '{}', when using location '{path}', must use keys qualified with the name of the module",
                    format.function()
                ));
            }
        }
        Ok(Rc::new(hash))
    }
}

/// Puppet's `RichData` (`validate_data_value`): no Symbols, and Hash keys
/// that are Strings or numbers.
fn is_rich_data(v: &Value) -> bool {
    match v {
        Value::Symbol(_) => false,
        Value::Array(items) => items.iter().all(is_rich_data),
        Value::Hash(h) => h.iter().all(|(k, v)| {
            matches!(
                k,
                Value::String(_) | Value::Int(_) | Value::BigInt(_) | Value::Float(_)
            ) && is_rich_data(v)
        }),
        _ => true,
    }
}

fn missing_path() -> Error {
    Error::Data(
        "one of 'path', 'paths' 'glob', 'globs' or 'mapped_paths' must be declared in hiera.yaml when using this data_hash function".into(),
    )
}

/// `HieraConfig.symkeys_to_string`: Symbol keys become Strings, at every depth.
fn symkeys_to_string(h: Hash) -> Hash {
    fn value(v: Value) -> Value {
        match v {
            Value::Hash(h) => Value::Hash(symkeys_to_string(h)),
            Value::Array(items) => Value::Array(items.into_iter().map(value).collect()),
            other => other,
        }
    }
    h.into_iter()
        .map(|(k, v)| {
            let k = match k {
                Value::Symbol(s) => Value::String(s),
                other => other,
            };
            (k, value(v))
        })
        .collect()
}

/// `Pathname#+`: an absolute `path` replaces `dir`.
fn join(dir: &str, path: &str) -> String {
    if path.starts_with('/') || dir.is_empty() {
        path.to_owned()
    } else {
        format!("{}/{path}", dir.trim_end_matches('/'))
    }
}

fn parent(path: &str) -> String {
    match path.rfind('/') {
        Some(0) => "/".into(),
        Some(at) => path[..at].to_owned(),
        None => ".".into(),
    }
}

#[cfg(test)]
mod tests;
