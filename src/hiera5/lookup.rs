//! The lookup itself: the global, environment and module layers in
//! Puppet's order, each layer's hierarchy and each entry's locations,
//! merged by one strategy at every level, then dug into and converted.
//! Ported from puppet/pops/lookup.rb, lookup/lookup_adapter.rb,
//! configured_data_provider.rb, data_hash_function_provider.rb,
//! location_resolver.rb and functions/yaml_data.rb, json_data.rb.

use super::config::{Config, DataFormat, Entry, Locations};
use super::error::{Error, Result};
use super::explain::{Explainer, Kind};
use super::key::LookupKey;
use super::merge::Strategy;
use super::options::{self, Compiled};
use super::scope::Scope;
use crate::hiera::budget::{Budget, Meter};
use crate::hiera::{Hash, Value};
use eyaml::KeyPair;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

pub use eyaml::EyamlKeys;

/// The files a lookup reads: the one door to I/O, so the semantics stay
/// pure and testable over a map of texts.
pub trait Files {
    /// The text of the file at `path`; `None` when there is no readable
    /// file there.
    fn read(&self, path: &str) -> Option<String>;
    /// Whether a file (not a directory) is at `path`.
    fn is_file(&self, path: &str) -> bool;
    /// Whether a directory is at `path` (a module's, for `--explain`).
    fn is_dir(&self, path: &str) -> bool;
    /// The files (not directories) matching a Ruby `Dir.glob` pattern,
    /// sorted as Ruby sorts them.
    fn glob(&self, pattern: &str) -> Vec<String>;
    /// The file at `path` already read (a store keeps documents, not
    /// texts): what YAML or JSON would load from its text; `None`: read
    /// and parse [`Files::read`]'s text.
    fn parsed(&self, _path: &str) -> Option<Value> {
        None
    }
    /// How Puppet reads the file at `path` when it is kept but does not
    /// parse (a store keeps such a file as Hiera keeps it: only the
    /// lookups that read it fail; [`super::kept_read`]); `None`: read it
    /// as usual.
    fn unparsable(&self, _path: &str) -> Option<super::KeptRead> {
        None
    }
    /// The version 5 hiera.yaml at `path` already parsed (a store parses
    /// it once, not per lookup); `None`: load and parse it as usual.
    fn config(&self, _path: &str) -> Option<Arc<Config>> {
        None
    }
    /// The eyaml key pair at these paths (an eyaml entry's
    /// `pkcs7_private_key` and `pkcs7_public_key`), read when a value it
    /// finds holds a block; `None`: blocks are answered as stored (a
    /// server keeps no key files of the master's, and decrypts answers
    /// afterwards for the principals allowed to see them). A key pair
    /// that cannot be read fails the lookup as Puppet's does
    /// ([`Error::Data`]); one hierad will not read, as its own refusal.
    fn eyaml_keys(&self, _private: &str, _public: &str) -> Option<Result<EyamlKeys, Error>> {
        None
    }
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
    config: Arc<Config>,
    /// Its hiera.yaml (for the global layer, whether or not it exists).
    config_path: String,
    /// `Global` or `Environment` (a module's layer has `module`).
    place: &'static str,
    root: String,
    module: Option<String>,
}

impl Layered {
    /// `ConfiguredDataProvider#name`.
    fn name(&self) -> String {
        match &self.module {
            Some(m) => format!("Module \"{m}\" Data Provider (hiera configuration version 5)"),
            None => format!(
                "{} Data Provider (hiera configuration version 5)",
                self.place
            ),
        }
    }
}

/// One resolved location of a hierarchy entry: where it is, and the
/// path as the hierarchy wrote it (what `--explain` shows).
struct Location {
    path: String,
    original: String,
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
    /// The global and environment layers' `lookup_options`, merged once.
    env_options: RefCell<Option<Option<Value>>>,
    /// The keys being looked up, for Puppet's recursion check.
    stack: RefCell<Vec<String>>,
    warnings: RefCell<Vec<String>>,
    /// The explanation being grown, with `--explain`.
    explainer: RefCell<Option<Explainer>>,
    /// What interpolation may spend (`hiera::budget`); unlimited, as in
    /// Puppet, unless [`Lookup::budget`] sets one.
    meter: RefCell<Meter>,
    /// Eyaml key pairs read, by their paths (`None`: blocks kept).
    eyaml: RefCell<HashMap<(String, String), KeyPair>>,
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
            env_options: RefCell::default(),
            stack: RefCell::default(),
            warnings: RefCell::default(),
            explainer: RefCell::default(),
            meter: RefCell::new(Meter::new(Budget::UNLIMITED)),
            eyaml: RefCell::default(),
        }
    }

    /// The same lookup, spending from `meter`: an interpolation that
    /// would take more steps or build more bytes than it has left is
    /// refused ([`Error::Budget`]) instead of holding a server's thread.
    pub(crate) fn budget(self, meter: Meter) -> Self {
        *self.meter.borrow_mut() = meter;
        self
    }

    /// What the lookups have left of their budget, for the next lookup
    /// that shares it.
    pub(crate) fn meter(&self) -> Meter {
        *self.meter.borrow()
    }

    /// Charges the meter (`f` spends from it).
    pub(crate) fn spend(
        &self,
        f: impl FnOnce(&mut Meter) -> Result<(), crate::hiera::HieraError>,
    ) -> Result<()> {
        f(&mut self.meter.borrow_mut()).map_err(Error::Budget)
    }

    /// The same lookup, explained as `puppet lookup --explain` explains.
    pub fn explaining(self) -> Self {
        *self.explainer.borrow_mut() = Some(Explainer::default());
        self
    }

    /// The explanation so far, with `text` added at its end (Puppet's
    /// `report_text`: the failure, or the key not found); `None` when
    /// not explaining.
    pub fn explanation(&self, text: Option<String>) -> Option<String> {
        let mut explainer = self.explainer.borrow_mut();
        let e = explainer.as_mut()?;
        if let Some(t) = text {
            e.text(t);
        }
        Some(e.render())
    }

    /// `Invocation#with`: `f` under a new node of the explanation, popped
    /// whatever `f` returns.
    pub(crate) fn with<T>(
        &self,
        kind: impl FnOnce() -> Kind,
        f: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        if self.explainer.borrow().is_none() {
            return f();
        }
        self.explain(|e| e.push(kind()));
        let result = f();
        self.explain(Explainer::pop);
        result
    }

    /// Reports to the explanation, if there is one.
    pub(crate) fn explain(&self, f: impl FnOnce(&mut Explainer)) {
        if let Some(e) = self.explainer.borrow_mut().as_mut() {
            f(e);
        }
    }

    /// `Invocation#without_explain`: `f` with nothing explained.
    fn without_explain<T>(&self, f: impl FnOnce() -> T) -> T {
        let saved = self.explainer.borrow_mut().take();
        let result = f();
        *self.explainer.borrow_mut() = saved;
        result
    }

    /// The explanation as data (`--explain --render-as json`); `None`
    /// when not explaining.
    pub fn explanation_value(&self) -> Option<Value> {
        self.explainer.borrow().as_ref().map(Explainer::to_value)
    }

    /// Whether an explanation is being grown.
    pub(crate) fn is_explaining(&self) -> bool {
        self.explainer.borrow().is_some()
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
            self.with(|| Kind::InvalidKey(LOOKUP_OPTIONS.into()), || Ok(()))?;
            return Ok(None);
        }
        let key = LookupKey::new(key)?;
        let compiled = self.lookup_options(key.module.as_deref())?;
        let options = compiled.for_key(&key.root).and_then(Value::as_hash);
        let strategy = match (merge, options.and_then(|o| o.get(&Value::str("merge")))) {
            (Some(m), _) => m.clone(),
            (None, Some(m)) => {
                self.explain(|e| {
                    e.add(Kind::MergeSource(LOOKUP_OPTIONS.into()));
                });
                Strategy::from_value(m)?
            }
            (None, None) => Strategy::First,
        };
        let found = self.with(
            || Kind::Top(key.text.clone()),
            || self.do_lookup(&key, &strategy),
        )?;
        let convert_to = options.and_then(|o| o.get(&Value::str("convert_to")));
        match (found, convert_to) {
            (Some(v), Some(to)) => {
                let converted = options::convert(&key.text, to, v)?;
                self.explain(|e| {
                    e.text(format!(
                        "Applying convert_to lookup_option with arguments {}",
                        options::convert_args(to)
                    ));
                });
                Ok(Some(converted))
            }
            (found, _) => Ok(found),
        }
    }

    fn do_lookup(&self, key: &LookupKey, strategy: &Strategy) -> Result<Option<Value>> {
        let stack = [
            Some(Layer::Global),
            Some(Layer::Environment),
            key.module.clone().map(Layer::Module),
        ];
        let merged = self.merged(strategy, stack.len(), |i| match &stack[i] {
            Some(layer) => self.layer_lookup(layer, key, strategy),
            None => Ok(None),
        })?;
        match merged {
            Some(v) => self.dig(&key.text, &key.segments, v),
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
            if let (Layer::Module(name), Some(dir)) = (layer, &self.tree.environment_dir) {
                // `lookup_in_module`: a module without data says why.
                let exists = self.files.is_dir(&join(&join(dir, "modules"), name));
                self.explain(|e| {
                    e.add(if exists {
                        Kind::ModuleProviderNotFound(name.clone())
                    } else {
                        Kind::ModuleNotFound(name.clone())
                    });
                });
            }
            return Ok(None);
        };
        let provider = || Kind::Provider {
            name: layered.name(),
            // Puppet's built-in configuration has no file to name.
            config: (!layered.config.is_default).then(|| layered.config_path.clone()),
            module: layered.module.clone(),
        };
        let found = self.checked(&key.text, || {
            self.with(provider, || {
                if let Some(e) = &layered.config.refused {
                    return Err(e.clone());
                }
                let mut entries: Vec<&Entry> = layered.config.entries.iter().collect();
                if layered.config.is_default {
                    // Its entries are only those with a file to read.
                    entries.retain(|entry| {
                        self.without_explain(|| self.locations(&layered, entry))
                            .is_ok_and(|l| l.is_some_and(|l| !l.is_empty()))
                    });
                }
                if entries.is_empty() {
                    self.explain(|e| e.not_found(&key.text));
                    return Ok(None);
                }
                self.merged(strategy, entries.len(), |i| {
                    let entry = entries[i];
                    let kind = || Kind::Provider {
                        name: format!("Hierarchy entry \"{}\"", entry.name),
                        config: None,
                        module: None,
                    };
                    self.with(kind, || self.entry_lookup(&layered, entry, key, strategy))
                })
            })
        });
        match (layer, found) {
            // `lookup_global` rewraps the lookup errors it meets.
            (Layer::Global, Err(e @ Error::Recursive(_))) => Err(Error::Global {
                key: key.text.clone(),
                detail: Box::new(e),
            }),
            (_, found) => found,
        }
    }

    /// `DataHashFunctionProvider#unchecked_key_lookup`: one hierarchy
    /// entry's locations.
    fn entry_lookup(
        &self,
        layered: &Layered,
        entry: &Entry,
        key: &LookupKey,
        strategy: &Strategy,
    ) -> Result<Option<Value>> {
        // Puppet resolves the locations with nothing explained.
        let Some(locations) = self.without_explain(|| self.locations(layered, entry))? else {
            return Err(missing_path(entry.format));
        };
        self.merged(strategy, locations.len(), |j| {
            let loc = &locations[j];
            let kind = || Kind::Location {
                path: loc.path.clone(),
                original: loc.original.clone(),
            };
            self.with(kind, || {
                if !loc.exists {
                    self.explain(Explainer::location_not_found);
                    return Ok(None);
                }
                let data = self.data(&loc.path, entry.format, layered.module.as_deref())?;
                match data.get(&Value::str(key.root.as_str())) {
                    None => {
                        self.explain(|e| e.not_found(&key.root));
                        Ok(None)
                    }
                    Some(v) if !is_rich_data(v) => Err(Error::Data(format!(
                        "Value for key '{}', {} function '{}', when using location '{}', has wrong type, expects Puppet::LookupValue{}",
                        key.root,
                        match entry.format {
                            DataFormat::Yaml | DataFormat::Json => "in hash returned from data_hash",
                            DataFormat::Eyaml => "returned from lookup_key",
                        },
                        entry.format.function(),
                        loc.path,
                        match v {
                            Value::Symbol(_) => ", got Runtime[ruby, 'Symbol']",
                            _ => "",
                        }
                    ))),
                    Some(v) => {
                        let v = match entry.format {
                            DataFormat::Eyaml => self.decrypted(v, entry, &key.root, &loc.path)?,
                            DataFormat::Yaml | DataFormat::Json => Cow::Borrowed(v),
                        };
                        let v = self.interpolate(v.into_owned(), &self.scope, true)?;
                        self.explain(|e| e.found(&key.root, &v));
                        Ok(Some(v))
                    }
                }
            })
        })
    }

    /// The merged `lookup_options` of the global and environment layers,
    /// and of `module`'s when the key is in one (`retrieve_lookup_options`,
    /// explained as a search of its own the first time).
    fn lookup_options(&self, module: Option<&str>) -> Result<Rc<Compiled>> {
        let cached = self
            .options
            .borrow()
            .get(&module.map(str::to_owned))
            .cloned();
        if let Some(c) = cached {
            return Ok(c);
        }
        let compiled = self.with(
            || Kind::Top(LOOKUP_OPTIONS.into()),
            || {
                let mut opts = self.env_options()?;
                if let Some(m) = module {
                    self.compiled(None, opts.clone())?;
                    opts = self.module_options(m, opts)?;
                }
                self.compiled(module, opts)
            },
        )?;
        Ok(compiled)
    }

    /// Compiles and caches the options of `module`'s keys (unless known).
    fn compiled(&self, module: Option<&str>, opts: Option<Value>) -> Result<Rc<Compiled>> {
        let name = module.map(str::to_owned);
        if let Some(known) = self.options.borrow().get(&name) {
            return Ok(known.clone());
        }
        let compiled = Rc::new(match opts {
            Some(Value::Hash(h)) => Compiled::new(&h)?,
            _ => Compiled::default(),
        });
        self.options.borrow_mut().insert(name, compiled.clone());
        Ok(compiled)
    }

    /// `env_lookup_options`: the global layer's merged with the
    /// environment's, read once.
    fn env_options(&self) -> Result<Option<Value>> {
        if let Some(known) = self.env_options.borrow().clone() {
            return Ok(known);
        }
        let hash = Strategy::Hash;
        let global = self.layer_options(Layer::Global, None)?;
        let env = self.layer_options(Layer::Environment, None)?;
        let opts = match (global, env) {
            (Some(g), Some(e)) => Some(hash.merge(g, e)?),
            (g, e) => g.or(e),
        };
        *self.env_options.borrow_mut() = Some(opts.clone());
        Ok(opts)
    }

    /// `module`'s `lookup_options` merged under `opts` (the global and
    /// environment ones), each side explained as a scope of its own.
    fn module_options(&self, module: &str, opts: Option<Value>) -> Result<Option<Value>> {
        let theirs = self.layer_options(Layer::Module(module.to_owned()), Some(module))?;
        let (Some(ours), Some(theirs)) = (&opts, &theirs) else {
            return Ok(opts.or(theirs));
        };
        let sides = [
            ("Global and Environment".to_owned(), ours),
            (format!("Module {module}"), theirs),
        ];
        self.merged(&Strategy::Hash, sides.len(), |i| {
            let (name, value) = &sides[i];
            self.with(
                || Kind::Scope(name.clone()),
                || {
                    self.explain(|e| e.found(LOOKUP_OPTIONS, value));
                    Ok(Some((*value).clone()))
                },
            )
        })
    }

    /// One layer's `lookup_options`, checked.
    fn layer_options(&self, layer: Layer, module: Option<&str>) -> Result<Option<Value>> {
        let key = LookupKey::new(LOOKUP_OPTIONS)?;
        match self.layer_lookup(&layer, &key, &Strategy::Hash)? {
            Some(v) => Ok(Some(Value::Hash(options::validate(v, module)?))),
            None => Ok(None),
        }
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
                let config = if self.files.is_file(path) {
                    self.config(path)?
                } else {
                    Some(Arc::new(Config::default_config()))
                };
                return Ok(config.map(|config| Layered {
                    config,
                    config_path: path.clone(),
                    place: "Global",
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
            config_path: path,
            place: "Environment",
            root,
            module,
        }))
    }

    /// A hiera.yaml; `None` for version 3 outside the global layer, which
    /// Puppet ignores with a warning.
    fn config(&self, path: &str) -> Result<Option<Arc<Config>>> {
        if let Some(parsed) = self.files.config(path) {
            return Ok(Some(parsed));
        }
        let loaded = match self.files.parsed(path) {
            Some(loaded) => loaded,
            None => {
                let text = self.files.read(path).unwrap_or_default();
                crate::hiera::yaml::load(&text).map_err(|e| Error::Config {
                    path: path.to_owned(),
                    message: format!("Unable to parse {}", e.message),
                })?
            }
        };
        let version = loaded.as_hash().and_then(|h| {
            h.get(&Value::str("version"))
                .or_else(|| h.get(&Value::Symbol("version".into())))
        });
        let is_v3 = matches!(version, None | Some(Value::Int(3)));
        if is_v3 && path != self.tree.global_config {
            self.warn(format!("hiera.yaml version 3 found at {path} was ignored"));
            return Ok(None);
        }
        Config::from_value(path, &loaded).map(|c| Some(Arc::new(c)))
    }

    /// `create_configured_data_providers`' locations for one entry.
    fn locations(&self, layered: &Layered, entry: &Entry) -> Result<Option<Vec<Location>>> {
        let datadir = self.interpolate_str(&join(&layered.root, &entry.datadir), &self.scope)?;
        let found = |path: String, original: &str| {
            let exists = self.files.is_file(&path);
            Location {
                path,
                original: original.to_owned(),
                exists,
            }
        };
        let mut out = Vec::new();
        match &entry.locations {
            Locations::None | Locations::Uris(_) => {}
            Locations::Paths(paths) => {
                for p in paths {
                    let loc = found(join(&datadir, &self.interpolate_str(p, &self.scope)?), p);
                    if loc.exists || !layered.config.is_default {
                        out.push(loc);
                    }
                }
            }
            Locations::Globs(globs) => {
                for g in globs {
                    let pattern = join(&datadir, &self.interpolate_str(g, &self.scope)?);
                    out.extend(
                        self.files
                            .glob(&pattern)
                            .into_iter()
                            .map(|p| found(p, &pattern)),
                    );
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
                    out.push(found(
                        join(&datadir, &self.interpolate_str(template, &scope)?),
                        template,
                    ));
                }
            }
        }
        if matches!(entry.locations, Locations::None | Locations::Uris(_)) {
            // Puppet calls the function without a `path`, which
            // the data functions refuse when the entry is read.
            return Ok(None);
        }
        Ok(Some(out))
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

/// yaml_data and json_data refuse a call without `path` as a lookup
/// error; eyaml_lookup_key raises an `ArgumentError`, which Puppet prints.
fn missing_path(format: DataFormat) -> Error {
    let text = |prefix: &str, kind: &str| {
        format!(
            "{prefix}one of 'path', 'paths' 'glob', 'globs' or 'mapped_paths' must be declared in hiera.yaml when using this {kind} function"
        )
    };
    match format {
        DataFormat::Eyaml => Error::Function(text("'eyaml_lookup_key': ", "lookup_key")),
        DataFormat::Yaml | DataFormat::Json => Error::Data(text("", "data_hash")),
    }
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

mod data;
mod eyaml;
#[cfg(test)]
mod tests;
