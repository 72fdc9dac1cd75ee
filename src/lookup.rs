//! The one lookup path over the ConfigDB: a request (key, environment,
//! level path, hierarchy, resolution, scope…) against an immutable
//! [`Snapshot`], answered by the Hiera core exactly as Hiera 3.10 answers
//! from YAML files. Shared by the server, the remote CLI and the bench.

use crate::configdb::{LevelPath, Snapshot};
use crate::hiera::config::{BackendKind, Config};
use crate::hiera::lookup::{Answer, DataSource, Fetched, Hiera, NoLog, Resolution, Step};
use crate::hiera::merge::MergeSpec;
use crate::hiera::{Hash, HieraError, Result, Value};

/// The resource whose root `values` are an environment's Hiera
/// configuration (what `hierad import` makes of a tree's `hiera.yaml`).
pub const HIERA_RESOURCE: &str = "hiera";

/// One lookup, as a client states it.
#[derive(Clone, Debug)]
pub struct Request {
    pub env: i64,
    pub level: LevelPath,
    pub key: String,
    pub resolution: Resolution,
    /// Datasource names, already interpolated (what a Hiera 3 backend gets
    /// from `Backend.datasources`); `None`: the environment's hierarchy.
    pub hierarchy: Option<Vec<String>>,
    /// Overrides the configuration's `:merge_behavior:`.
    pub merge_behavior: Option<Value>,
    /// Overrides the configuration's `:deep_merge_options:` (Symbol keys).
    pub deep_merge_options: Option<Value>,
    pub scope: Hash,
    pub order_override: Option<Value>,
    pub default: Option<Value>,
    pub explain: bool,
}

/// An answer, with the walk that produced it when asked.
#[derive(Clone, Debug)]
pub struct Outcome<'s> {
    pub answer: Answer<'s>,
    pub steps: Vec<Step>,
}

/// The datasources of one environment at one level path: each is the
/// effective document of the resource of that name, folded key by key.
pub struct SnapshotSource<'s, 'r> {
    pub snapshot: &'s Snapshot,
    pub env: i64,
    pub level: &'r LevelPath,
}

impl<'s> DataSource<'s> for SnapshotSource<'s, '_> {
    fn fetch(&self, _: BackendKind, _: &str, source: &str, key: &Value) -> Result<Fetched<'s>> {
        Ok(
            match self
                .snapshot
                .effective_key(self.env, self.level, source, key)
            {
                Some((value, true)) => Fetched::Final(value),
                Some((value, false)) => Fetched::Found(value),
                None => Fetched::NoKey,
            },
        )
    }
}

fn sym(name: &str) -> Value {
    Value::Symbol(name.to_owned())
}

/// The Hiera configuration a request runs under: the environment's own
/// (`hiera` resource), with the request's hierarchy and merge settings
/// over it, and always exactly one backend reading the store.
///
/// # Errors
///
/// What Hiera would raise loading such a configuration.
pub fn config_for(snapshot: &Snapshot, request: &Request) -> Result<Config> {
    let mut raw = snapshot
        .effective(request.env, &LevelPath::root(), HIERA_RESOURCE)
        .map(|doc| (*doc).clone())
        .unwrap_or_default();
    if let Some(levels) = &request.hierarchy {
        raw.insert(
            sym("hierarchy"),
            Value::Array(levels.iter().map(|l| Value::str(l.as_str())).collect()),
        );
    }
    if let Some(behavior) = &request.merge_behavior {
        raw.insert(sym("merge_behavior"), behavior.clone());
    }
    if let Some(options) = &request.deep_merge_options {
        raw.insert(sym("deep_merge_options"), symbol_keys(options));
    }
    raw.insert(sym("backends"), Value::Array(vec![Value::str("yaml")]));
    // A datadir without `%{` costs nothing to interpolate on every lookup.
    let mut yaml = Hash::default();
    yaml.insert(sym("datadir"), Value::str("hierad"));
    raw.insert(sym("yaml"), Value::Hash(yaml));
    raw.shift_remove(&sym("logger"));
    Ok(Config::load(Value::Hash(raw))?.0)
}

/// JSON objects only have String keys; Hiera's option Hashes want Symbols.
pub fn symbol_keys(v: &Value) -> Value {
    match v {
        Value::Hash(h) => Value::Hash(
            h.iter()
                .map(|(k, v)| match k {
                    Value::String(s) => (sym(s), v.clone()),
                    other => (other.clone(), v.clone()),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A Hash resolution type from its JSON form (`{"behavior": "deeper", …}`).
///
/// # Errors
///
/// As [`MergeSpec::from_resolution_hash`].
pub fn hash_resolution(options: &Value) -> Result<Resolution> {
    let Value::Hash(h) = symbol_keys(options) else {
        return Ok(Resolution::Hash);
    };
    Ok(Resolution::HashWith(Box::new(
        MergeSpec::from_resolution_hash(&h)?,
    )))
}

/// Runs one lookup.
///
/// # Errors
///
/// Every error Hiera 3.10 raises for the same lookup over YAML files.
pub fn lookup<'s>(
    snapshot: &'s Snapshot,
    config: &Config,
    request: &Request,
) -> Result<Outcome<'s>, HieraError> {
    let source = SnapshotSource {
        snapshot,
        env: request.env,
        level: &request.level,
    };
    let mut hiera = Hiera::new(config, &source, &NoLog);
    if request.explain {
        hiera = hiera.explain();
    }
    let answer = hiera.lookup(
        &request.key,
        request.default.as_ref(),
        &request.scope,
        request.order_override.as_ref(),
        &request.resolution,
    )?;
    Ok(Outcome {
        answer,
        steps: hiera.steps().to_vec(),
    })
}

/// The scope variables an environment's hierarchy and data refer to
/// (`%{name}`, `%{scope('name')}`), sorted: what a client must send.
pub fn scope_variables(snapshot: &Snapshot, env: i64) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut visit = |v: &Value| collect_variables(v, &mut names);
    if let Some(resources) = snapshot.resource_names(env) {
        let resources: Vec<String> = resources.map(str::to_owned).collect();
        for resource in resources {
            snapshot.for_each_document(env, &resource, &mut visit);
        }
    }
    names.into_iter().collect()
}

fn collect_variables(v: &Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(start) = rest.find("%{") {
                let Some(len) = rest[start + 2..].find('}') else {
                    break;
                };
                let token = &rest[start + 2..start + 2 + len];
                if let Some(name) = scope_name(token) {
                    out.insert(name.to_owned());
                }
                rest = &rest[start + 2 + len + 1..];
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_variables(i, out)),
        Value::Hash(h) => h.iter().for_each(|(k, v)| {
            collect_variables(k, out);
            collect_variables(v, out);
        }),
        _ => {}
    }
}

/// The variable a token reads from the scope, if it reads one: `name`,
/// `scope('name')` (the first segment of a dotted name).
fn scope_name(token: &str) -> Option<&str> {
    let token = token.trim();
    let name = if let Some(arg) = token
        .strip_prefix("scope(")
        .and_then(|t| t.strip_suffix(')'))
    {
        arg.trim_matches(['\'', '"'])
    } else if token.contains('(') || token.is_empty() || token == "::" {
        return None;
    } else {
        token
    };
    let first = name.split('.').next().unwrap_or(name);
    (!first.is_empty()).then_some(first.trim_matches(['\'', '"']))
}
