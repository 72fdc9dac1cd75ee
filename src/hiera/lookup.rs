//! The lookup: `Backend.lookup` and the yaml/json backends' walk over the
//! hierarchy (§1–§4, §6), with the data behind a [`DataSource`] so the CLI
//! (files), the server (stored documents) and the bench share it.

use super::budget::{Budget, Meter};
use super::config::{BackendKind, Config};
use super::error::{ErrorClass, HieraError, Result};
use super::hierarchy::{Hierarchy, Walked, datafile_path, is_bad_text, walk};
use super::interpolate::plain::{self, Template};
use super::interpolate::{
    Context, Resolver, has_token, interpolate, interpolate_general, interpolate_str,
};
use super::key::{key_syntax_error, lookup_key, qualified_lookup, split_key};
use super::merge::{Behavior, MergeSpec};
use super::render::ruby::to_s;
use super::value::{Hash, HashedKey, Value};
use fold::Fold;
use std::borrow::Cow;

mod fold;
pub(crate) mod suppliers;

/// What one hierarchy level holds for the key asked.
#[derive(Debug)]
pub(crate) enum Fetched<'s> {
    /// No data for this level (Hiera: `Cannot find datafile …`).
    NoData,
    /// Data, but not this key (or empty data, which Hiera skips).
    NoKey,
    /// The key's raw value, before interpolation.
    Found(Cow<'s, Value>),
    /// The key's value, known to be final (see [`is_final`]): a store
    /// that worked this out when the data was written saves the lookup
    /// from scanning it.
    Final(Cow<'s, Value>),
}

/// Where the data of each hierarchy level comes from. Asked one key at a
/// time, so a store can fold just that key of a layered document. Values
/// may be borrowed for `'d` (a store's snapshot outlives the lookup).
pub(crate) trait DataSource<'d> {
    /// The value of top-level `key` at level `source` of `backend`, whose
    /// interpolated datadir is `datadir` (stores that are not files may
    /// ignore it). The key comes hashed, once for all the levels.
    ///
    /// # Errors
    ///
    /// What reading the data raises in Hiera: Psych/JSON parse errors, and
    /// the `TypeError` of a top level that is not a Hash (see
    /// [`super::datafile::read`]).
    fn fetch(
        &self,
        backend: BackendKind,
        datadir: &str,
        source: &str,
        key: &HashedKey<'_>,
    ) -> Result<Fetched<'d>>;

    /// The merge of `layers` under `behavior` with deep_merge's default
    /// options, if this source kept it (see [`DataSource::keep_merged`]).
    /// `layers` are final Hashes this source handed out, highest priority
    /// first.
    fn merged(&self, behavior: Behavior, layers: &[&'d Value]) -> Option<&'d Value> {
        let _ = (behavior, layers);
        None
    }

    /// Offers `merged`, the merge of `layers` under `behavior`, to be kept
    /// for as long as the values the source hands out live: a source whose
    /// data cannot change under `'d` (a snapshot) may keep it, keyed by the
    /// layers' identity, and answer [`DataSource::merged`] with it. The
    /// merge of final values is a function of those values and the
    /// behaviour alone (no scope, no interpolation), so a kept merge is
    /// always the one the lookup would make. Returns the value to answer
    /// with (borrowed if kept).
    fn keep_merged(
        &self,
        behavior: Behavior,
        layers: &[&'d Value],
        merged: Value,
    ) -> Cow<'d, Value> {
        let _ = (behavior, layers);
        Cow::Owned(merged)
    }
    /// The answer of an array lookup that found `layers` (stored, final
    /// values this source handed out, highest priority first), if this
    /// source kept it (see [`DataSource::keep_resolved`]).
    fn resolved(&self, layers: &[&'d Value]) -> Option<&'d Value> {
        let _ = layers;
        None
    }

    /// Offers `resolved`, an array lookup's answer (`flatten.uniq.compact`)
    /// over `layers`, to be kept as [`DataSource::keep_merged`] keeps
    /// merges: a function of those final values alone. Returns the value
    /// to answer with (borrowed if kept).
    fn keep_resolved(&self, layers: &[&'d Value], resolved: Value) -> Cow<'d, Value> {
        let _ = layers;
        Cow::Owned(resolved)
    }

    /// Whether [`DataSource::fetch`] only reads memory and never fails,
    /// whatever the level: then asking for a level Hiera would skip
    /// unread changes nothing, and a lookup may ask before checking it.
    fn pure(&self) -> bool {
        false
    }
}

/// Receives Hiera's log messages (the console logger's `debug`/`warn`).
pub(crate) trait Log {
    fn debug(&self, message: &str);
    fn warn(&self, message: &str);
    /// Whether debug messages are wanted at all: when not, lookups skip
    /// formatting them (a server's lookups log nothing).
    fn enabled(&self) -> bool {
        true
    }
}

/// A [`Log`] that drops everything (Hiera's noop logger).
pub(crate) struct NoLog;

impl Log for NoLog {
    fn debug(&self, _: &str) {}
    fn warn(&self, _: &str) {}
    fn enabled(&self) -> bool {
        false
    }
}

/// The resolution type of a lookup (§2.1).
#[derive(Clone, Debug)]
pub(crate) enum Resolution {
    /// `:priority` (or nil): the first level with the key wins.
    Priority,
    /// `:array` (`-a`, hiera_array).
    Array,
    /// `:hash` (`-h`, hiera_hash), merging as the configuration says.
    Hash,
    /// A Hash resolution type: a hash lookup with its own merge.
    HashWith(Box<MergeSpec>),
    /// Any other Symbol or String: a priority lookup that still refuses
    /// dotted keys, naming itself (`Resolution type :bogus is illegal …`).
    Other(String),
}

impl Resolution {
    fn strategy_name(&self) -> Option<&str> {
        match self {
            Resolution::Priority => None,
            Resolution::Array => Some("array"),
            Resolution::Hash | Resolution::HashWith(_) => Some("hash"),
            Resolution::Other(name) => Some(name),
        }
    }
}

/// The outcome of a lookup. Ruby folds these into one return value (see
/// [`Answer::into_value`]); a server must keep them apart.
///
/// A found value is borrowed from the data source when Hiera would hand
/// back the stored value unchanged (nothing to interpolate, one level
/// decides), so a large answer is not copied on its way to the client.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Answer<'d> {
    /// Some backend found the key (the value may be nil).
    Found(Cow<'d, Value>),
    /// Nothing found; this is the default (interpolated if a String).
    Default(Value),
    /// Nothing found and no default.
    NotFound,
}

impl Answer<'_> {
    /// What `Hiera#lookup` returns.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Answer::Found(v) => v.into_owned(),
            Answer::Default(v) => v,
            Answer::NotFound => Value::Nil,
        }
    }
}

/// What one hierarchy level contributed, for `--explain`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Outcome {
    /// Skipped: empty, or a leading/trailing/double `/` after interpolation.
    BadDefinition,
    /// No data for this level.
    NoData,
    /// Data, but not the key.
    NoKey,
    /// The key's value here, after interpolation.
    Found(Value),
}

/// One step of a lookup, for `--explain`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Step {
    /// 0 for the lookup asked for; 1+ for `hiera()`/`alias()` lookups
    /// nested inside it.
    pub(crate) depth: usize,
    pub(crate) key: String,
    pub(crate) backend: BackendKind,
    pub(crate) source: String,
    /// The data file for file backends.
    pub(crate) path: String,
    pub(crate) outcome: Outcome,
    /// On the last step of a hash merge's lookup: each top-level key of
    /// the merged Hash and the source that supplied it (`suppliers.rs`).
    pub(crate) keys: Option<Vec<(String, String)>>,
}

/// One Hiera instance's lookup machinery over a configuration and a data
/// source. Cheap to create; create one per lookup (it holds the per-call
/// state Hiera keeps in module variables).
pub(crate) struct Hiera<'a, 'd> {
    config: &'a Config,
    /// The levels walked: the configuration's `:hierarchy:`, or one given
    /// beside it ([`Hiera::hierarchy`]).
    hierarchy: Walked<'a>,
    data: &'a dyn DataSource<'d>,
    log: &'a dyn Log,
    /// `log.enabled()`, asked once: a lookup that logs nothing formats no
    /// message, builds no path and tracks no started backend.
    debugging: bool,
    /// Hiera's `@config_lookup_context`: set while a level or datadir is
    /// interpolated, so lookups nested in it share its recursion guard.
    config_context: Option<Context>,
    /// Backend names already instantiated (each logs "starting" once).
    started: Vec<String>,
    depth: usize,
    trace: Option<Vec<Step>>,
    /// What deep_merge's `merge_debug` option prints (Ruby: to stdout).
    merge_debug: String,
    /// What interpolation may still spend (see [`Hiera::budget`]).
    meter: Meter,
}

impl<'a, 'd> Hiera<'a, 'd> {
    pub(crate) fn new(
        config: &'a Config,
        data: &'a dyn DataSource<'d>,
        log: &'a dyn Log,
    ) -> Hiera<'a, 'd> {
        Hiera {
            config,
            hierarchy: Walked::Written(&config.hierarchy),
            data,
            log,
            debugging: log.enabled(),
            config_context: None,
            started: Vec::new(),
            depth: 0,
            trace: None,
            merge_debug: String::new(),
            meter: Meter::new(Budget::UNLIMITED),
        }
    }

    /// Walks `hierarchy` instead of the configuration's `:hierarchy:`
    /// (nothing else in a configuration depends on it), so that a
    /// configuration loaded once serves requests that each bring their
    /// own levels. Its levels' templates were worked out once: a walk
    /// only reads the variables they name.
    pub(crate) fn hierarchy(mut self, hierarchy: &'a Hierarchy) -> Hiera<'a, 'd> {
        self.hierarchy = Walked::Compiled(hierarchy);
        self
    }

    /// Meters the following lookups against `meter` (unlimited without):
    /// a lookup that would spend more is refused with a
    /// `*BudgetExceeded` error instead of answered.
    pub(crate) fn budget(mut self, meter: Meter) -> Hiera<'a, 'd> {
        self.meter = meter;
        self
    }

    /// The meter, with what the lookups so far have spent.
    pub(crate) fn meter(&self) -> &Meter {
        &self.meter
    }

    /// Records the steps of the following lookups, for [`Hiera::steps`].
    pub(crate) fn explain(mut self) -> Hiera<'a, 'd> {
        self.trace = Some(Vec::new());
        self
    }

    /// The steps recorded since [`Hiera::explain`].
    pub(crate) fn steps(&self) -> &[Step] {
        self.trace.as_deref().unwrap_or_default()
    }

    /// What deep_merge's `merge_debug` option printed during the lookups so
    /// far (Ruby writes it to stdout as it merges).
    pub(crate) fn merge_debug_output(&self) -> &str {
        &self.merge_debug
    }

    /// `Hiera#lookup(key, default, scope, order_override, resolution_type)`.
    ///
    /// # Errors
    ///
    /// Every error Hiera 3.10 raises during a lookup, with its class and
    /// message.
    pub(crate) fn lookup(
        &mut self,
        key: &str,
        default: Option<&Value>,
        scope: &Hash,
        order_override: Option<&Value>,
        resolution: &Resolution,
    ) -> Result<Answer<'d>> {
        let mut context = Context::default();
        self.backend_lookup(
            key,
            default,
            scope,
            order_override,
            resolution,
            &mut context,
        )
    }

    /// `Backend.lookup`.
    fn backend_lookup(
        &mut self,
        key: &str,
        default: Option<&Value>,
        scope: &Hash,
        order_override: Option<&Value>,
        resolution: &Resolution,
        context: &mut Context,
    ) -> Result<Answer<'d>> {
        let order_override = order_override
            .cloned()
            .or_else(|| context.order_override.clone());
        if context.order_override.is_none() {
            context.order_override.clone_from(&order_override);
        }
        let segments = split_key(key).ok_or_else(|| key_syntax_error(key))?;
        if segments.len() > 1 {
            if let Some(strategy) = resolution.strategy_name() {
                return Err(HieraError::new(
                    ErrorClass::ArgumentError,
                    format!(
                        "Resolution type :{strategy} is illegal when accessing values using dotted keys. Offending key was '{key}'"
                    ),
                ));
            }
        }
        let top_key = lookup_key(&segments);
        let first_step = self.trace.as_ref().map(Vec::len);
        let config: &'a Config = self.config;
        let mut fold = Fold::new(resolution, &config.merge);
        for (name, kind) in &config.backends {
            if self.debugging && !self.started.contains(name) {
                self.started.push(name.clone());
                self.debug(|| format!("Hiera {} backend starting", kind.display()));
            }
            let Some(value) = self.file_backend_lookup(
                *kind,
                &top_key,
                scope,
                order_override.as_ref(),
                resolution,
                context,
            )?
            else {
                continue;
            };
            let value = if segments.len() > 1 {
                match qualified_part(value, &segments[1..], key)? {
                    Some(v) => v,
                    None => continue,
                }
            } else {
                value
            };
            if fold.add(key, value, &mut self.merge_debug)? {
                break;
            }
        }
        if let Some(answer) = fold.finish(true, self.data, &mut self.merge_debug)? {
            if let (Some(first), Resolution::Hash | Resolution::HashWith(_)) =
                (first_step, resolution)
            {
                self.name_suppliers(first, &answer);
            }
            return Ok(Answer::Found(answer));
        }
        Ok(match default {
            Some(Value::String(text)) => match interpolate_str(text, scope, context, self)? {
                // An alias() of a missing key: Ruby falls back to the raw default.
                Value::Nil => Answer::Default(Value::String(text.clone())),
                v => Answer::Default(v),
            },
            Some(other) => Answer::Default(other.clone()),
            None => Answer::NotFound,
        })
    }

    /// `Yaml_backend#lookup` / `Json_backend#lookup`: `None` is
    /// `throw :no_such_key`.
    fn file_backend_lookup(
        &mut self,
        kind: BackendKind,
        key: &Value,
        scope: &Hash,
        order_override: Option<&Value>,
        resolution: &Resolution,
        context: &mut Context,
    ) -> Result<Option<Cow<'d, Value>>> {
        let key_text: Cow<'_, str> = match key {
            Value::String(s) => Cow::Borrowed(s),
            other => Cow::Owned(to_s(other)),
        };
        self.debug(|| format!("Looking up {key_text} in {} backend", kind.display()));
        // The yaml backend reads the datadir once, before the levels; the
        // json backend once per level, after naming it (debug order differs).
        let datadir = match kind {
            BackendKind::Yaml => Some(self.datadir(kind, scope)?),
            BackendKind::Json => None,
        };
        let config: &'a Config = self.config;
        let mut fold = Fold::new(resolution, &config.merge);
        // A bad level is skipped before its data is read, as Hiera does;
        // where nothing can tell the difference (data in memory that
        // cannot fail to read, no datadir to interpolate per level, no one
        // told which levels were bad), only the levels that hold the key
        // are checked: most hold nothing.
        let check_late =
            datadir.is_some() && !self.debugging && self.trace.is_none() && self.data.pure();
        let hashed = HashedKey::new(key);
        // The templated levels' names, one after another.
        let mut expanded = String::new();
        for (template, compiled) in walk(self.hierarchy, order_override) {
            // Whether the level is a String (another is named by its
            // `to_s`, and is never a bad level).
            let (source_text, text): (Cow<'_, str>, bool) = match (template, compiled) {
                // Most levels are plain names (`astute`, `globals`):
                // nothing to interpolate, nothing to set up a context for.
                (Value::String(s), Some(Template::Plain)) => (Cow::Borrowed(s), true),
                (Value::String(s), None) if !has_token(s) => (Cow::Borrowed(s), true),
                (Value::String(s), Some(t @ Template::Scope(_)))
                    if self.expand_level(t, s, scope, &mut expanded) =>
                {
                    (Cow::Borrowed(&expanded), true)
                }
                _ => match self.interpolate_config_tokens(
                    template,
                    compiled.is_some(),
                    scope,
                    order_override,
                )? {
                    Value::String(s) => (Cow::Owned(s), true),
                    other => (Cow::Owned(to_s(&other)), false),
                },
            };
            let bad = !check_late && text && is_bad_text(&source_text);
            if bad {
                self.debug(|| format!("Ignoring bad definition in :hierarchy: '{source_text}'"));
                self.record(
                    &key_text,
                    kind,
                    &source_text,
                    String::new(),
                    Outcome::BadDefinition,
                );
                continue;
            }
            self.debug(|| format!("Looking for data source {source_text}"));
            let dir: Cow<'_, str> = match &datadir {
                Some(dir) => Cow::Borrowed(dir),
                None => self.datadir(kind, scope)?,
            };
            // The file's path only shows in debug messages and --explain.
            let path = if self.debugging || self.trace.is_some() {
                datafile_path(&dir, &source_text, kind.name())
            } else {
                String::new()
            };
            let value = match self.data.fetch(kind, &dir, &source_text, &hashed)? {
                Fetched::NoData => {
                    self.debug(|| format!("Cannot find datafile {path}, skipping"));
                    self.record(&key_text, kind, &source_text, path, Outcome::NoData);
                    continue;
                }
                Fetched::NoKey => {
                    self.record(&key_text, kind, &source_text, path, Outcome::NoKey);
                    continue;
                }
                Fetched::Found(_) | Fetched::Final(_)
                    if check_late && text && is_bad_text(&source_text) =>
                {
                    continue;
                }
                Fetched::Found(raw) => parse_answer(raw, scope, context, self)?,
                Fetched::Final(value) => value,
            };
            self.debug(|| format!("Found {key_text} in {source_text}"));
            if self.trace.is_some() {
                self.record(
                    &key_text,
                    kind,
                    &source_text,
                    path,
                    Outcome::Found(value.as_ref().clone()),
                );
            }
            if fold.add(&key_text, value, &mut self.merge_debug)? {
                break;
            }
        }
        fold.finish(false, self.data, &mut self.merge_debug)
    }

    /// A debug message, formatted only when the logger wants it.
    fn debug(&self, message: impl FnOnce() -> String) {
        if self.debugging {
            self.log.debug(&message());
        }
    }

    /// Sets `keys` on the last step at this depth since `first`: which
    /// level supplied each top-level key of a hash merge's `answer`.
    fn name_suppliers(&mut self, first: usize, answer: &Value) {
        let depth = self.depth;
        let Some(trace) = &mut self.trace else {
            return;
        };
        let Some(steps) = trace.get_mut(first..) else {
            return;
        };
        let keys = suppliers::suppliers(steps, depth, answer);
        if let Some(last) = steps.iter_mut().rev().find(|s| s.depth == depth) {
            last.keys = Some(keys);
        }
    }

    /// Records a step when explaining (a lookup that does not pays for
    /// one test per level, not a call).
    #[inline(always)]
    fn record(
        &mut self,
        key: &str,
        backend: BackendKind,
        source: &str,
        path: String,
        outcome: Outcome,
    ) {
        if self.trace.is_some() {
            self.push_step(key, backend, source, path, outcome);
        }
    }

    fn push_step(
        &mut self,
        key: &str,
        backend: BackendKind,
        source: &str,
        path: String,
        outcome: Outcome,
    ) {
        if let Some(trace) = &mut self.trace {
            trace.push(Step {
                depth: self.depth,
                key: key.to_owned(),
                backend,
                source: source.to_owned(),
                path,
                outcome,
                keys: None,
            });
        }
    }

    /// `Backend.datadir`: the configured datadir (or Hiera's default),
    /// interpolated.
    fn datadir(&mut self, kind: BackendKind, scope: &Hash) -> Result<Cow<'a, str>> {
        let config: &'a Config = self.config;
        let dir = match config.datadir(kind)? {
            Some(dir @ Value::String(_)) => Cow::Borrowed(dir),
            Some(_) => {
                return Err(HieraError::new(
                    ErrorClass::InvalidConfigurationError,
                    format!("datadir for {} cannot be an array", kind.name()),
                ));
            }
            None => Cow::Owned(Value::str(
                "/etc/puppet/environments/%{environment}/hieradata",
            )),
        };
        Ok(match dir {
            Cow::Borrowed(Value::String(dir)) if !has_token(dir) => Cow::Borrowed(dir),
            dir => Cow::Owned(match self.interpolate_config(&dir, scope, None)? {
                Cow::Borrowed(Value::String(dir)) => dir.clone(),
                Cow::Owned(Value::String(dir)) => dir,
                other => to_s(&other),
            }),
        })
    }

    /// `Backend.interpolate_config`: levels and datadirs are interpolated
    /// under one shared context while any of them is being interpolated.
    fn interpolate_config<'e>(
        &mut self,
        entry: &'e Value,
        scope: &Hash,
        order_override: Option<&Value>,
    ) -> Result<Cow<'e, Value>> {
        // Most levels are plain names: nothing to set up a context for.
        if matches!(entry, Value::String(s) if !has_token(s)) {
            return Ok(Cow::Borrowed(entry));
        }
        self.interpolate_config_tokens(entry, false, scope, order_override)
            .map(Cow::Owned)
    }

    /// A level compiled to scope variables, expanded into `out` on the
    /// fast path (`interpolate::plain`); false, having done nothing,
    /// where that declines and the general path must.
    fn expand_level(
        &mut self,
        template: &Template,
        data: &str,
        scope: &Hash,
        out: &mut String,
    ) -> bool {
        let guard = self.config_context.as_ref().and_then(|c| c.guard.clone());
        template
            .expand_into(data, scope, guard.as_ref(), true, self, out)
            .is_some()
    }

    /// [`Hiera::interpolate_config`] of an entry its caller found to be no
    /// String without a token (so it is not scanned twice); `compiled`
    /// if its hierarchy was compiled, whose fast path the walk has tried
    /// ([`Hiera::expand_level`]), so it is not tried again.
    fn interpolate_config_tokens(
        &mut self,
        entry: &Value,
        compiled: bool,
        scope: &Hash,
        order_override: Option<&Value>,
    ) -> Result<Value> {
        // Most templated levels read plain scope variables (`%{::fqdn}`):
        // no context to set up either (interpolate::plain).
        if let (Value::String(s), false) = (entry, compiled) {
            let guard = self.config_context.as_ref().and_then(|c| c.guard.clone());
            if let Some(out) = plain::expand(s, scope, guard.as_ref(), true, self) {
                return Ok(Value::String(out));
            }
        }
        match &self.config_context {
            None => {
                let context = Context {
                    order_override: order_override.cloned(),
                    guard: Some(Default::default()),
                    is_interpolate_config: true,
                };
                self.config_context = Some(context.clone());
                // The fast path was tried above with this guard (empty).
                let result = interpolate_general(entry, scope, &context, self);
                self.config_context = None;
                result
            }
            Some(shared) => {
                let mut context = shared.clone();
                context.order_override = order_override.cloned();
                interpolate_general(entry, scope, &context, self)
            }
        }
    }
}

impl Resolver for Hiera<'_, '_> {
    fn nested_lookup(&mut self, key: &str, scope: &Hash, context: &mut Context) -> Result<Value> {
        self.depth += 1;
        let order_override = context.order_override.clone();
        let result = self.backend_lookup(
            key,
            None,
            scope,
            order_override.as_ref(),
            &Resolution::Priority,
            context,
        );
        self.depth -= 1;
        Ok(result?.into_value())
    }

    fn warn(&mut self, message: &str) {
        self.log.warn(message);
    }

    fn meter(&mut self) -> &mut Meter {
        &mut self.meter
    }
}

/// `Backend.parse_answer`: a found value with every String interpolated
/// (nested Hash keys too); Symbols and anything else become nil. Most data
/// has nothing to change: it is handed back as it came, uncopied.
fn parse_answer<'d>(
    data: Cow<'d, Value>,
    scope: &Hash,
    context: &Context,
    resolver: &mut dyn Resolver,
) -> Result<Cow<'d, Value>> {
    if is_final(&data) {
        return Ok(data);
    }
    Ok(Cow::Owned(parse_value(&data, scope, context, resolver)?))
}

/// Whether Hiera hands `data` out as stored (`Backend.parse_answer` would
/// return it unchanged): no String (nor String Hash key) holds a `%{…}`
/// token, and no Symbol is to become nil.
pub(crate) fn is_final(data: &Value) -> bool {
    match data {
        Value::String(s) => !has_token(s),
        Value::Symbol(_) => false,
        Value::Array(items) => items.iter().all(is_final),
        Value::Hash(h) => h
            .iter()
            .all(|(k, v)| !matches!(k, Value::String(s) if has_token(s)) && is_final(v)),
        Value::Nil | Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Bool(_) => true,
    }
}

fn parse_value(
    data: &Value,
    scope: &Hash,
    context: &Context,
    resolver: &mut dyn Resolver,
) -> Result<Value> {
    Ok(match data {
        Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Bool(_) => data.clone(),
        Value::String(s) => interpolate_str(s, scope, context, resolver)?,
        Value::Hash(h) => {
            let mut out = Hash::with_capacity_and_hasher(h.len(), Default::default());
            for (k, v) in h {
                let k = interpolate(k, scope, context, resolver)?;
                let v = parse_value(v, scope, context, resolver)?;
                out.insert(k, v);
            }
            Value::Hash(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| parse_value(v, scope, context, resolver))
                .collect::<Result<_>>()?,
        ),
        Value::Nil | Value::Symbol(_) => Value::Nil,
    })
}

/// The part of a found value a dotted key's later segments address.
fn qualified_part<'d>(
    value: Cow<'d, Value>,
    segments: &[&str],
    key: &str,
) -> Result<Option<Cow<'d, Value>>> {
    Ok(match value {
        Cow::Borrowed(v) => qualified_lookup(segments, v, Some(key))?.map(Cow::Borrowed),
        Cow::Owned(v) => {
            qualified_lookup(segments, &v, Some(key))?.map(|part| Cow::Owned(part.clone()))
        }
    })
}

#[cfg(test)]
mod tests;
