//! The one lookup path over the ConfigDB: a request (key, environment,
//! level path, hierarchy, resolution, scope…) against an immutable
//! [`Snapshot`], answered by the Hiera core exactly as Hiera 3.10 answers
//! from YAML files. Shared by the server, the remote CLI and the bench.

use crate::configdb::memo::AnswerMemo;
use crate::configdb::unparsed::UnparsedDocument;
use crate::configdb::{LevelPath, PathReader, Snapshot};
use crate::hiera::budget::Meter;
use crate::hiera::config::{BackendKind, Config};
use crate::hiera::hierarchy::Hierarchy;
use crate::hiera::lookup::{Answer, DataSource, Fetched, Hiera, NoLog, Resolution, Step};
use crate::hiera::merge::{Behavior, MergeSpec};
use crate::hiera::value::HashedKey;
use crate::hiera::{Hash, HieraError, Result, Value};
use std::borrow::Cow;
use std::sync::Arc;

/// The resource whose root `values` are an environment's Hiera
/// configuration (what `hierad import` makes of a tree's `hiera.yaml`).
pub(crate) const HIERA_RESOURCE: &str = "hiera";

/// One lookup, as a client states it.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub(crate) env: i64,
    pub(crate) level: LevelPath,
    pub(crate) key: String,
    pub(crate) resolution: Resolution,
    /// The hierarchy as written in hiera.yaml (`override/node/%{::fqdn}`:
    /// the walk interpolates each level, as `Backend.datasources` does;
    /// plain names are taken as they are), an Array of Strings with its
    /// levels' templates compiled (once per request by the request's
    /// parser, or once at registration and shared: `hierarchy_id`);
    /// `None`: the environment's hierarchy.
    pub(crate) hierarchy: Option<Arc<Hierarchy>>,
    /// Overrides the configuration's `:merge_behavior:`.
    pub(crate) merge_behavior: Option<Value>,
    /// Overrides the configuration's `:deep_merge_options:` (Symbol keys).
    pub(crate) deep_merge_options: Option<Value>,
    pub(crate) scope: Hash,
    pub(crate) order_override: Option<Value>,
    pub(crate) default: Option<Value>,
    pub(crate) explain: bool,
}

/// An answer, with the walk that produced it when asked.
#[derive(Clone, Debug)]
pub(crate) struct Outcome<'s> {
    pub(crate) answer: Answer<'s>,
    pub(crate) steps: Vec<Step>,
}

/// The datasources of one environment at one level path: each is the
/// effective document of the resource of that name, folded key by key.
/// An environment or path that cannot be reached has no data.
pub(crate) struct SnapshotSource<'s, 'r> {
    reader: Option<PathReader<'s, 'r>>,
    memo: &'s AnswerMemo,
    /// Documents kept unparsed on the path: a level that reads one fails
    /// with Hiera's error for the file (configdb/unparsed.rs).
    unparsed: Vec<&'s UnparsedDocument>,
}

impl<'s, 'r> SnapshotSource<'s, 'r> {
    pub(crate) fn new(snapshot: &'s Snapshot, env: i64, level: &'r LevelPath) -> Self {
        SnapshotSource {
            reader: snapshot.at(env, level),
            memo: snapshot.memo(),
            unparsed: snapshot.unparsed_on(env, level),
        }
    }
}

impl<'s> DataSource<'s> for SnapshotSource<'s, '_> {
    fn fetch(
        &self,
        _: BackendKind,
        _: &str,
        source: &str,
        key: &HashedKey<'_>,
    ) -> Result<Fetched<'s>> {
        if let Some(broken) = self.unparsed.iter().find(|u| u.at.resource == source) {
            return Err(broken.error.clone());
        }
        let found = self
            .reader
            .as_ref()
            .and_then(|r| r.effective_key(source, key));
        Ok(match found {
            Some((value, true)) => Fetched::Final(value),
            Some((value, false)) => Fetched::Found(value),
            None => Fetched::NoKey,
        })
    }

    fn merged(&self, behavior: Behavior, layers: &[&'s Value]) -> Option<&'s Value> {
        self.memo.merged(behavior, layers)
    }

    fn keep_merged(
        &self,
        behavior: Behavior,
        layers: &[&'s Value],
        merged: Value,
    ) -> Cow<'s, Value> {
        self.memo.keep_merged(behavior, layers, merged)
    }

    fn resolved(&self, layers: &[&'s Value]) -> Option<&'s Value> {
        self.memo.resolved(layers)
    }

    fn keep_resolved(&self, layers: &[&'s Value], resolved: Value) -> Cow<'s, Value> {
        self.memo.keep_resolved(layers, resolved)
    }

    /// A snapshot in memory: reading any level costs a map lookup, and
    /// cannot fail.
    fn pure(&self) -> bool {
        true
    }
}

fn sym(name: &str) -> Value {
    Value::Symbol(name.to_owned())
}

/// The Hiera configuration a request runs under: environment `env`'s own
/// (`hiera` resource), with the request's hierarchy and merge settings
/// over it, and always exactly one backend reading the store.
///
/// # Errors
///
/// What Hiera would raise loading such a configuration.
pub(crate) fn load_config(
    snapshot: &Snapshot,
    env: i64,
    hierarchy: Option<&Value>,
    merge_behavior: Option<&Value>,
    deep_merge_options: Option<&Value>,
) -> Result<Config> {
    // A hiera.yaml kept unparsed fails every lookup, as Hiera fails to
    // load it (`YAML.load_file`, whose errors name the file), rather
    // than leave the defaults in force unsaid.
    let root = LevelPath::root();
    if let Some(kept) = snapshot
        .unparsed_on(env, &root)
        .into_iter()
        .find(|u| u.at.resource == HIERA_RESOURCE)
    {
        let named = format!("({})", kept.path);
        let message = kept.error.message.replacen("(<unknown>)", &named, 1);
        return Err(HieraError::new(kept.error.class, message));
    }
    let mut raw = snapshot
        .effective(env, &root, HIERA_RESOURCE)
        .map(|doc| (*doc).clone())
        .unwrap_or_default();
    if let Some(levels) = hierarchy {
        raw.insert(sym("hierarchy"), levels.clone());
    }
    if let Some(behavior) = merge_behavior {
        raw.insert(sym("merge_behavior"), behavior.clone());
    }
    if let Some(options) = deep_merge_options {
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
pub(crate) fn symbol_keys(v: &Value) -> Value {
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
pub(crate) fn hash_resolution(options: &Value) -> Result<Resolution> {
    let Value::Hash(h) = symbol_keys(options) else {
        return Ok(Resolution::Hash);
    };
    Ok(Resolution::HashWith(Box::new(
        MergeSpec::from_resolution_hash(&h)?,
    )))
}

/// Runs one lookup under `config`, walking `hierarchy` (the
/// configuration's own or the request's, see [`crate::cache::Configs`]),
/// spending from `meter` (lookups that share one share its budget).
///
/// # Errors
///
/// Every error Hiera 3.10 raises for the same lookup over YAML files, and
/// the `*BudgetExceeded` refusal of a lookup that would overspend.
pub(crate) fn lookup<'s>(
    snapshot: &'s Snapshot,
    config: &Config,
    hierarchy: &Hierarchy,
    request: &Request,
    meter: &mut Meter,
) -> Result<Outcome<'s>, HieraError> {
    let source = SnapshotSource::new(snapshot, request.env, &request.level);
    let mut hiera = Hiera::new(config, &source, &NoLog)
        .hierarchy(hierarchy)
        .budget(*meter);
    if request.explain {
        hiera = hiera.explain();
    }
    let answer = hiera.lookup(
        &request.key,
        request.default.as_ref(),
        &request.scope,
        request.order_override.as_ref(),
        &request.resolution,
    );
    *meter = *hiera.meter();
    let answer = answer?;
    Ok(Outcome {
        answer,
        steps: hiera.steps().to_vec(),
    })
}

/// The scope variables an environment's hierarchy and data refer to
/// (`%{name}`, `%{scope('name')}`), sorted: what a client must send.
pub(crate) fn scope_variables(snapshot: &Snapshot, env: i64) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Configs;
    use crate::configdb::{ComponentRef, DocAddress, DocKind, NewComponent, NewEnvironment};
    use crate::rhash;
    use crate::store::{SqliteStore, Store};

    /// The configuration `request` runs under, loaded afresh.
    fn config_for(snapshot: &Snapshot, request: &Request) -> Result<Config> {
        load_config(
            snapshot,
            request.env,
            request.hierarchy.as_deref().map(Hierarchy::written),
            request.merge_behavior.as_ref(),
            request.deep_merge_options.as_ref(),
        )
    }

    /// Environment 1 (no levels) with resources hiera, a, b and c; `n` is a
    /// nested Hash, so merge behaviours answer differently.
    fn store() -> SqliteStore {
        let store = SqliteStore::open_in_memory().unwrap();
        store
            .create_component(&NewComponent {
                id: None,
                name: "app".into(),
                resource_definitions: ["hiera", "a", "b", "c"].map(String::from).to_vec(),
            })
            .unwrap();
        store
            .create_environment(&NewEnvironment {
                hiera: Default::default(),
                id: Some(1),
                components: vec![ComponentRef::Name("app".into())],
                hierarchy_levels: vec![],
            })
            .unwrap();
        let nested = |k: &str, v: i64| Value::Hash(rhash! {"x" => Value::Hash(rhash! {k => v})});
        for (resource, data) in [
            ("a", rhash! {"k" => "a", "n" => nested("p", 1)}),
            ("b", rhash! {"k" => "b", "n" => nested("q", 2)}),
            (
                "c",
                rhash! {"n" => Value::Hash(rhash! {"--x" => Value::Nil})},
            ),
        ] {
            put(&store, resource, &data);
        }
        store
    }

    fn put(store: &SqliteStore, resource: &str, data: &Hash) {
        let at = DocAddress::new(1, LevelPath::root(), resource, DocKind::Values);
        store.put(&at, data).unwrap();
    }

    fn put_hierarchy(store: &SqliteStore, levels: &[&str]) {
        let mut hiera = Hash::default();
        let levels = levels.iter().map(|l| Value::str(*l)).collect();
        hiera.insert(sym("hierarchy"), Value::Array(levels));
        hiera.insert(sym("merge_behavior"), sym("deeper"));
        put(store, HIERA_RESOURCE, &hiera);
    }

    fn snapshot(store: &SqliteStore) -> Snapshot {
        Snapshot::build(store.load_all().unwrap())
    }

    fn request(hierarchy: Option<&[&str]>, behavior: Option<&str>, knockout: bool) -> Request {
        Request {
            env: 1,
            level: LevelPath::root(),
            key: String::new(),
            resolution: Resolution::Priority,
            hierarchy: hierarchy.map(|h| {
                let levels = h.iter().map(|l| Value::str(*l)).collect();
                Arc::new(Hierarchy::new(Value::Array(levels)))
            }),
            merge_behavior: behavior.map(Value::str),
            deep_merge_options: knockout.then(|| Value::Hash(rhash! {"knockout_prefix" => "--"})),
            scope: Hash::default(),
            order_override: None,
            default: None,
            explain: false,
        }
    }

    /// What a configuration decides, walking `hierarchy`, comparably.
    fn decides(config: &Config, hierarchy: &Value) -> String {
        format!(
            "{:?}",
            (
                &config.backends,
                hierarchy,
                &config.merge,
                config.logger,
                config.datadir(BackendKind::Yaml),
            )
        )
    }

    fn answers(
        snapshot: &Snapshot,
        config: &Config,
        hierarchy: &Hierarchy,
        request: &Request,
    ) -> String {
        let mut out = String::new();
        for key in ["k", "n"] {
            for resolution in [Resolution::Priority, Resolution::Hash] {
                let request = Request {
                    key: key.to_owned(),
                    resolution,
                    ..request.clone()
                };
                let mut meter = Meter::new(crate::hiera::budget::Budget::UNLIMITED);
                let answer =
                    lookup(snapshot, config, hierarchy, &request, &mut meter).map(|o| o.answer);
                out.push_str(&format!("{key}: {answer:?}\n"));
            }
        }
        out
    }

    #[test]
    fn kept_configurations_answer_as_loaded_ones() {
        let store = store();
        put_hierarchy(&store, &["b", "a"]);
        let snapshot = snapshot(&store);
        let configs = Configs::new();
        let hierarchies: [Option<&[&str]>; 5] = [
            None,
            Some(&[]),
            Some(&["a"]),
            Some(&["b", "a", "c"]),
            Some(&["c", "a", "b"]),
        ];
        for _round in 0..2 {
            for hierarchy in hierarchies {
                for behavior in [None, Some("native"), Some("deeper")] {
                    for knockout in [false, true] {
                        let request = request(hierarchy, behavior, knockout);
                        let kept = configs.get(1, &snapshot, &request).unwrap();
                        let loaded = config_for(&snapshot, &request).unwrap();
                        let case = format!("{hierarchy:?} {behavior:?} {knockout}");
                        let hierarchy = Hierarchy::new(loaded.hierarchy.clone());
                        assert_eq!(
                            decides(kept.config(), kept.hierarchy(&request).written()),
                            decides(&loaded, &loaded.hierarchy),
                            "{case}"
                        );
                        assert_eq!(
                            answers(&snapshot, kept.config(), kept.hierarchy(&request), &request),
                            answers(&snapshot, &loaded, &hierarchy, &request),
                            "{case}"
                        );
                    }
                }
            }
        }
        // One configuration serves every hierarchy a request brings; the
        // environment's own is another.
        let kept = |configs: &Configs, a: &Request, b: &Request| {
            let first = configs.get(1, &snapshot, a).unwrap();
            Arc::ptr_eq(
                first.loaded(),
                configs.get(1, &snapshot, b).unwrap().loaded(),
            )
        };
        let fresh = Configs::new();
        let own = request(None, None, false);
        let (a, b) = (
            request(Some(&["a"]), None, false),
            request(Some(&["b"]), None, false),
        );
        assert!(kept(&fresh, &own, &own));
        assert!(kept(&fresh, &a, &b));
        assert!(kept(&fresh, &b, &request(Some(&[]), None, false)));
        assert!(!kept(&fresh, &own, &a));
        assert!(!kept(
            &fresh,
            &a,
            &request(Some(&["a"]), Some("deeper"), false)
        ));
    }

    /// A hash lookup of final values is merged once per snapshot: the
    /// second lookup answers the kept merge; a snapshot without a memo, or
    /// one made by a write, merges afresh and answers the same (or the
    /// written) data.
    #[test]
    fn merges_of_final_values_are_kept_per_snapshot() {
        use crate::configdb::StoredDoc;
        use crate::configdb::model::Version;
        let store = store();
        put_hierarchy(&store, &["b", "a"]);
        let snapshot = snapshot(&store);
        let config = config_for(&snapshot, &request(None, None, false)).unwrap();
        let hash_n = Request {
            key: "n".into(),
            resolution: Resolution::Hash,
            ..request(None, None, false)
        };
        let answer = |snapshot: &Snapshot| {
            let mut meter = Meter::new(crate::hiera::budget::Budget::UNLIMITED);
            let hierarchy = Hierarchy::new(config.hierarchy.clone());
            let outcome = lookup(snapshot, &config, &hierarchy, &hash_n, &mut meter).unwrap();
            match outcome.answer {
                Answer::Found(v) => (crate::wire::to_string(&v), matches!(v, Cow::Borrowed(_))),
                other => panic!("{other:?}"),
            }
        };
        let merged = r#"{"x":{"p":1,"q":2}}"#.to_owned();
        assert_eq!(answer(&snapshot), (merged.clone(), true));
        assert_eq!(answer(&snapshot), (merged.clone(), true));
        assert!(snapshot.memo().used() > 0);
        let unkept = snapshot.clone().with_memo_budget(0);
        assert_eq!(answer(&unkept), (merged, false));
        let version = Version {
            number: 2,
            created_at: 0,
            size: 0,
            deleted: false,
            author: None,
        };
        let nested = Value::Hash(rhash! {"x" => Value::Hash(rhash! {"p" => 3})});
        let written = StoredDoc::new(version, Arc::new(rhash! {"n" => nested}));
        let after = snapshot
            .with_document(1, &LevelPath::root(), "a", DocKind::Values, Some(written))
            .unwrap();
        assert_eq!(after.memo().used(), 0, "a write starts an empty memo");
        assert_eq!(answer(&after), (r#"{"x":{"p":3,"q":2}}"#.to_owned(), true));
    }

    #[test]
    fn a_new_generation_loads_again() {
        let store = store();
        put_hierarchy(&store, &["b", "a"]);
        let configs = Configs::new();
        let request = request(None, None, false);
        let first = configs.get(1, &snapshot(&store), &request).unwrap();
        assert_eq!(
            *first.hierarchy(&request).written(),
            Value::Array(vec!["b".into(), "a".into()])
        );
        put_hierarchy(&store, &["a"]);
        let second = configs.get(2, &snapshot(&store), &request).unwrap();
        assert_eq!(
            *second.hierarchy(&request).written(),
            Value::Array(vec!["a".into()])
        );
    }
}
