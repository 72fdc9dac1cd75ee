//! What a bench run asks for: the environment's nodes and hierarchy, and
//! its real keys sorted into classes (priority, interpolated, hash, array,
//! large-array, large, missing), drawn from by a weighted mix. A plan comes from
//! `hierad bench generate` (`bench-plan.json`) or from the server's own
//! data ([`classify`] over the root datasources).

use super::rng::Rng;
use crate::hiera::{Hash, Value};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Answers at least this large (as wire JSON) form the `large` and
/// `large-array` classes (answers of 10 KB and more are large).
pub(crate) const LARGE_BYTES: usize = 10_000;

/// The file `hierad bench generate` writes its plan to.
pub(crate) const PLAN_FILE: &str = "bench-plan.json";

/// Everything the load generator needs to build realistic requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Plan {
    pub(crate) environment: i64,
    /// The hierarchy level node data lives at (`nodes`): requests carry
    /// `level: "nodes=<fqdn>"`. Empty: requests stay at the root.
    pub(crate) level: String,
    /// The nodes' fqdns; the scope's `::fqdn` of each request.
    pub(crate) nodes: Vec<String>,
    /// The Hiera hierarchy, uninterpolated (`override/node/%{::fqdn}`).
    /// Requests name it as the shim does: by the id the server gave it
    /// at the start (`hierarchy_id`), or inline, with the scope its
    /// templates read; the server interpolates it.
    pub(crate) hierarchy: Vec<String>,
    /// The Puppet classes doing lookups (`calling_class`; the module is
    /// its first segment).
    pub(crate) calling_classes: Vec<String>,
    pub(crate) classes: Vec<KeyClass>,
    /// A small root resource that `--write-every` publishes new versions
    /// of while the bench runs.
    pub(crate) write_resource: String,
}

/// Keys looked up the same way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct KeyClass {
    pub(crate) name: String,
    /// `priority`, `array` or `hash`.
    pub(crate) resolution: String,
    pub(crate) keys: Vec<String>,
}

/// The classes, in the order the default mix names them.
pub(crate) const CLASSES: [&str; 7] = [
    "priority",
    "interpolated",
    "hash",
    "array",
    "large-array",
    "large",
    "missing",
];

/// The default weights: mostly priority lookups and misses (Puppet's
/// automatic parameter lookup asks for every `class::param`, most of
/// which no data sets), some merges, and the occasional huge hash or
/// array (Fuel's `nodes`: one in five array lookups of the generated
/// data, as when it was one class).
pub(crate) const DEFAULT_MIX: &str =
    "priority=45,interpolated=15,hash=10,array=4,large-array=1,large=2,missing=23";

/// Class weights, parsed from `name=weight,…`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Mix(pub(crate) Vec<(String, u32)>);

impl std::str::FromStr for Mix {
    type Err = String;

    fn from_str(text: &str) -> Result<Mix, String> {
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, weight) = part
                .split_once('=')
                .ok_or_else(|| format!("a mix entry is class=weight, not {part:?}"))?;
            if !CLASSES.contains(&name) {
                return Err(format!(
                    "unknown key class {name:?} (known: {})",
                    CLASSES.join(", ")
                ));
            }
            let weight: u32 = weight
                .parse()
                .map_err(|_| format!("the weight of {name} is not a whole number: {weight:?}"))?;
            out.push((name.to_owned(), weight));
        }
        if out.iter().all(|(_, w)| *w == 0) {
            return Err("the mix has no weight".to_owned());
        }
        Ok(Mix(out))
    }
}

/// One lookup to send.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pick<'p> {
    /// Index into the plan's classes.
    pub(crate) class: usize,
    pub(crate) key: &'p str,
    pub(crate) node: usize,
    pub(crate) calling_class: usize,
}

/// Draws lookups from a plan by a mix; classes the plan lacks (or
/// without keys) are dropped from the mix.
#[derive(Clone, Debug)]
pub(crate) struct Sampler {
    /// (class index, cumulative weight).
    table: Vec<(usize, u64)>,
    total: u64,
}

impl Sampler {
    /// # Errors
    ///
    /// No class of the mix has keys in the plan.
    pub(crate) fn new(plan: &Plan, mix: &Mix) -> Result<Sampler, String> {
        let mut table = Vec::new();
        let mut total = 0u64;
        for (name, weight) in &mix.0 {
            let Some(index) = plan
                .classes
                .iter()
                .position(|c| &c.name == name && !c.keys.is_empty())
            else {
                continue;
            };
            if *weight > 0 {
                total += u64::from(*weight);
                table.push((index, total));
            }
        }
        if total == 0 {
            return Err("no class of the mix has keys in this environment".to_owned());
        }
        Ok(Sampler { table, total })
    }

    pub(crate) fn pick<'p>(&self, plan: &'p Plan, rng: &mut Rng) -> Pick<'p> {
        let roll = rng.next_u64() % self.total;
        let class = self
            .table
            .iter()
            .find(|(_, upto)| roll < *upto)
            .map_or(self.table[0].0, |(i, _)| *i);
        let key = rng.pick(&plan.classes[class].keys);
        Pick {
            class,
            key,
            node: if plan.nodes.is_empty() {
                0
            } else {
                rng.below(plan.nodes.len())
            },
            // A key is looked up by the class that needs it, the same one
            // on every node (as Puppet's classes own their parameters).
            calling_class: if plan.calling_classes.is_empty() {
                0
            } else {
                owner(key, plan.calling_classes.len())
            },
        }
    }
}

/// Which of `n` calling classes looks `key` up: a stable hash (FNV-1a).
fn owner(key: &str, n: usize) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    (h % n as u64) as usize
}

/// Request bodies: the per-(node, calling class) part, with the
/// hierarchy and the scope, is rendered once; a request adds its key.
pub(crate) struct Bodies {
    /// `{"environment":…,"level":…,"hierarchy_id":…,"scope":{…` (open).
    prefixes: Vec<String>,
    classes: usize,
    resolutions: Vec<String>,
}

impl Bodies {
    /// `hierarchy_id`: what the server answered to the plan's hierarchy
    /// (`POST /api/v1/hierarchies`); `None` sends the templates inline,
    /// as the shim does with a server older than that route.
    pub(crate) fn new(plan: &Plan, hierarchy_id: Option<&str>) -> Bodies {
        let hierarchy = match hierarchy_id {
            Some(id) => format!(",\"hierarchy_id\":{}", json_str(id)),
            None => format!(
                ",\"hierarchy\":{}",
                serde_json::to_string(&plan.hierarchy).expect("Strings serialize")
            ),
        };
        let nodes: Vec<Option<&str>> = if plan.nodes.is_empty() {
            vec![None]
        } else {
            plan.nodes.iter().map(|n| Some(n.as_str())).collect()
        };
        let classes: Vec<&str> = if plan.calling_classes.is_empty() {
            vec![""]
        } else {
            plan.calling_classes.iter().map(String::as_str).collect()
        };
        let mut prefixes = Vec::with_capacity(nodes.len() * classes.len());
        for node in &nodes {
            for class in &classes {
                prefixes.push(prefix(plan, &hierarchy, *node, class));
            }
        }
        Bodies {
            prefixes,
            classes: classes.len(),
            resolutions: plan
                .classes
                .iter()
                .map(|c| json_str(&c.resolution))
                .collect(),
        }
    }

    /// The JSON body of one lookup; `unique` adds a scope variable no data
    /// reads, so the server cannot answer from its cache.
    pub(crate) fn body(&self, pick: &Pick<'_>, unique: Option<u64>) -> Vec<u8> {
        let prefix = &self.prefixes[pick.node * self.classes + pick.calling_class];
        let mut out = String::with_capacity(prefix.len() + pick.key.len() + 64);
        out.push_str(prefix);
        if let Some(n) = unique {
            let _ = write!(out, ",\"bench_request\":{n}");
        }
        out.push_str("},\"resolution\":");
        out.push_str(&self.resolutions[pick.class]);
        out.push_str(",\"key\":");
        out.push_str(&json_str(pick.key));
        out.push('}');
        out.into_bytes()
    }
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// `hierarchy`: the `,"hierarchy_id":…` or `,"hierarchy":[…]` field.
fn prefix(plan: &Plan, hierarchy: &str, node: Option<&str>, calling_class: &str) -> String {
    let module = calling_class.split("::").next().unwrap_or_default();
    let mut scope = serde_json::Map::new();
    if let Some(node) = node {
        scope.insert("::fqdn".to_owned(), node.into());
    }
    if !calling_class.is_empty() {
        scope.insert("calling_class".to_owned(), calling_class.into());
        scope.insert("calling_module".to_owned(), module.into());
    }
    let scope = serde_json::Value::Object(scope).to_string();
    let mut out = format!("{{\"environment\":{}", plan.environment);
    if let (Some(node), false) = (node, plan.level.is_empty()) {
        let _ = write!(
            out,
            ",\"level\":{}",
            json_str(&format!("{}={node}", plan.level))
        );
    }
    let _ = write!(out, "{hierarchy},\"scope\":{}", &scope[..scope.len() - 1]);
    out
}

/// A hierarchy level with its `%{var}` tokens replaced, as
/// `Backend.datasources` does (unknown variables are empty): the names of
/// the datasources a plan is discovered from.
pub(crate) fn expand(level: &str, var: &dyn Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(level.len());
    let mut rest = level;
    while let Some(start) = rest.find("%{") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&var(rest[start + 2..start + 2 + len].trim()));
        rest = &rest[start + 2 + len + 1..];
    }
    out.push_str(rest);
    out
}

/// Sorts the keys of an environment's datasources into classes.
/// `sources` are (name, document) in hierarchy order, most specific
/// first; `node_keys` are keys only node-level data sets (looked up by
/// priority). `missing` keys are made up from the calling classes.
pub(crate) fn classify(
    sources: &[(String, &Hash)],
    node_keys: &[String],
    calling_classes: &[String],
) -> Vec<KeyClass> {
    let mut order: Vec<&str> = Vec::new();
    let mut seen: std::collections::HashMap<&str, Vec<&Value>> = std::collections::HashMap::new();
    for (_, doc) in sources {
        for (k, v) in doc.iter() {
            let Value::String(k) = k else { continue };
            let entry = seen.entry(k.as_str()).or_default();
            if entry.is_empty() {
                order.push(k.as_str());
            }
            entry.push(v);
        }
    }
    let mut classes: Vec<KeyClass> = CLASSES
        .iter()
        .map(|name| KeyClass {
            name: (*name).to_owned(),
            resolution: "priority".to_owned(),
            keys: Vec::new(),
        })
        .collect();
    let at = |name: &str| CLASSES.iter().position(|c| *c == name).unwrap_or(0);
    let (hash, array, large) = (at("hash"), at("array"), at("large"));
    classes[hash].resolution = "hash".to_owned();
    classes[array].resolution = "array".to_owned();
    // Array lookups of large answers apart, so that `array` is what its
    // name promises everywhere a figure is given for it: small answers.
    classes[at("large-array")].resolution = "array".to_owned();
    // The large class holds hash lookups (Fuel reads `network_metadata`
    // with hiera_hash); a large key found in one layer only is a large
    // priority answer, and stays in `priority`.
    classes[large].resolution = "hash".to_owned();
    for key in order {
        let values = &seen[key];
        let all_hashes = values.iter().all(|v| matches!(v, Value::Hash(_)));
        let size = values
            .iter()
            .map(|v| crate::wire::to_string(v).len())
            .max()
            .unwrap_or(0);
        let class = if size >= LARGE_BYTES && all_hashes && values.len() >= 2 {
            "large"
        } else if values.iter().any(|v| interpolates(v)) {
            "interpolated"
        } else if all_hashes && values.len() >= 2 {
            "hash"
        } else if values
            .iter()
            .all(|v| matches!(v, Value::Array(_) | Value::String(_)))
            && values.iter().any(|v| matches!(v, Value::Array(_)))
        {
            if size >= LARGE_BYTES {
                "large-array"
            } else {
                "array"
            }
        } else {
            "priority"
        };
        classes[at(class)].keys.push(key.to_owned());
    }
    for key in node_keys {
        if !seen.contains_key(key.as_str()) {
            classes[at("priority")].keys.push(key.clone());
        }
    }
    const PARAMS: [&str; 8] = [
        "enabled",
        "debug",
        "workers",
        "package_ensure",
        "manage_service",
        "log_dir",
        "bind_host",
        "sync_db",
    ];
    classes[at("missing")].keys = calling_classes
        .iter()
        .flat_map(|c| PARAMS.iter().map(move |p| format!("{c}::{p}")))
        .collect();
    classes
}

fn interpolates(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains("%{"),
        Value::Array(items) => items.iter().any(interpolates),
        Value::Hash(h) => h.values().any(interpolates),
        _ => false,
    }
}

/// The Puppet classes whose lookups the bench imitates.
pub(crate) fn default_calling_classes() -> Vec<String> {
    [
        "openstack::keystone",
        "openstack::nova::controller",
        "openstack::compute",
        "osnailyfacter::globals",
        "osnailyfacter::netconfig",
        "cluster::haproxy",
        "ceph::osds",
        "neutron::agents::ml2::ovs",
    ]
    .map(str::to_owned)
    .to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    fn plan() -> Plan {
        Plan {
            environment: 3,
            level: "nodes".into(),
            nodes: vec!["n1.d".into(), "n2.d".into()],
            hierarchy: vec![
                "override/node/%{::fqdn}".into(),
                "class/%{calling_class}".into(),
                "module/%{calling_module}".into(),
                "globals%{disable_globals_yaml}".into(),
                "astute".into(),
            ],
            calling_classes: vec!["a::b".into()],
            classes: vec![
                KeyClass {
                    name: "priority".into(),
                    resolution: "priority".into(),
                    keys: vec!["k\"1".into()],
                },
                KeyClass {
                    name: "hash".into(),
                    resolution: "hash".into(),
                    keys: vec!["h".into()],
                },
            ],
            write_resource: "override/common".into(),
        }
    }

    #[test]
    fn bodies_are_lookup_requests() {
        let plan = plan();
        let id = "0123456789abcdef0123456789abcdef";
        let by_id = Bodies::new(&plan, Some(id));
        let inline = Bodies::new(&plan, None);
        let templates = serde_json::json!(plan.hierarchy);
        let cases: [(&Bodies, Pick<'_>, Option<u64>, serde_json::Value); 3] = [
            (
                &by_id,
                Pick {
                    class: 0,
                    key: "k\"1",
                    node: 1,
                    calling_class: 0,
                },
                None,
                serde_json::json!({
                    "environment": 3, "level": "nodes=n2.d",
                    "hierarchy_id": id,
                    "scope": {"::fqdn": "n2.d", "calling_class": "a::b", "calling_module": "a"},
                    "resolution": "priority", "key": "k\"1"
                }),
            ),
            (
                &by_id,
                Pick {
                    class: 1,
                    key: "h",
                    node: 0,
                    calling_class: 0,
                },
                Some(42),
                serde_json::json!({
                    "environment": 3, "level": "nodes=n1.d",
                    "hierarchy_id": id,
                    "scope": {"::fqdn": "n1.d", "calling_class": "a::b", "calling_module": "a", "bench_request": 42},
                    "resolution": "hash", "key": "h"
                }),
            ),
            (
                &inline,
                Pick {
                    class: 1,
                    key: "h",
                    node: 0,
                    calling_class: 0,
                },
                None,
                serde_json::json!({
                    "environment": 3, "level": "nodes=n1.d",
                    "hierarchy": templates,
                    "scope": {"::fqdn": "n1.d", "calling_class": "a::b", "calling_module": "a"},
                    "resolution": "hash", "key": "h"
                }),
            ),
        ];
        for (bodies, pick, unique, want) in cases {
            let got: serde_json::Value =
                serde_json::from_slice(&bodies.body(&pick, unique)).unwrap();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn mixes_parse_and_sample_by_weight() {
        let cases = [
            ("priority=3,hash=1", Ok(vec![("priority", 3), ("hash", 1)])),
            ("priority=1,bogus=2", Err("unknown key class")),
            ("priority=x", Err("not a whole number")),
            ("priority", Err("class=weight")),
            ("priority=0", Err("no weight")),
        ];
        for (text, want) in cases {
            let got = text.parse::<Mix>();
            match want {
                Ok(pairs) => assert_eq!(
                    got.unwrap().0,
                    pairs
                        .iter()
                        .map(|(n, w)| ((*n).to_owned(), *w))
                        .collect::<Vec<_>>()
                ),
                Err(part) => assert!(got.unwrap_err().contains(part), "{text}"),
            }
        }
        let plan = plan();
        let sampler = Sampler::new(&plan, &"priority=3,hash=1,array=5".parse().unwrap()).unwrap();
        let mut rng = Rng::new(9);
        let mut counts = [0usize; 2];
        let mut nodes = [0usize; 2];
        for _ in 0..4000 {
            let pick = sampler.pick(&plan, &mut rng);
            counts[pick.class] += 1;
            nodes[pick.node] += 1;
        }
        // array has no keys in this plan: only priority and hash, 3:1.
        assert!((2800..3200).contains(&counts[0]), "{counts:?}");
        assert!(nodes.iter().all(|&n| n > 1800), "{nodes:?}");
        // A key always comes from the same calling class.
        let mut plan = plan;
        plan.calling_classes = (0..5).map(|i| format!("c{i}")).collect();
        let mut owners = std::collections::HashMap::new();
        let mut used = std::collections::HashSet::new();
        plan.classes[0].keys = (0..40).map(|i| format!("key{i}")).collect();
        for _ in 0..2000 {
            let pick = sampler.pick(&plan, &mut rng);
            assert_eq!(
                *owners
                    .entry(pick.key.to_owned())
                    .or_insert(pick.calling_class),
                pick.calling_class
            );
            used.insert(pick.calling_class);
        }
        assert_eq!(used.len(), 5, "keys spread over the classes");
        assert!(Sampler::new(&plan, &"array=1".parse().unwrap()).is_err());
    }

    #[test]
    fn expands_hierarchy_tokens() {
        let var = |name: &str| {
            if name == "::fqdn" {
                "n1".to_owned()
            } else {
                String::new()
            }
        };
        let cases = [
            ("override/node/%{::fqdn}", "override/node/n1"),
            ("globals%{disable_globals_yaml}", "globals"),
            ("astute", "astute"),
            ("a/%{ ::fqdn }/b", "a/n1/b"),
            ("broken/%{fqdn", "broken/%{fqdn"),
        ];
        for (level, want) in cases {
            assert_eq!(expand(level, &var), want, "{level}");
        }
    }

    #[test]
    fn classifies_keys_by_how_they_are_looked_up() {
        let big: Vec<Value> = (0..2000).map(|i| Value::str(format!("item-{i}"))).collect();
        let top = rhash! {
            "svc" => Value::Hash(rhash! { "a" => Value::Int(1) }),
            "meta" => Value::Hash(rhash! { "x" => Value::Bool(true) }),
            "dns" => Value::Array(vec![Value::str("1.1.1.1")]),
            "hosts" => Value::Array(big.clone()),
        };
        let globals = rhash! {
            "uri" => Value::str("http://%{hiera('vip')}/"),
            "list" => Value::Array(vec![Value::str("%{hiera('vip')}:11211")]),
        };
        let astute = rhash! {
            "svc" => Value::Hash(rhash! { "b" => Value::Int(2) }),
            "meta" => Value::Hash(rhash! { "nodes" => Value::Array(big) }),
            "dns" => Value::str("8.8.8.8"),
            "vip" => Value::str("10.0.0.1"),
            "solo" => Value::Hash(rhash! { "c" => Value::Int(3) }),
        };
        let sources = [
            ("top".to_owned(), &top),
            ("globals".to_owned(), &globals),
            ("astute".to_owned(), &astute),
        ];
        let classes = classify(
            &sources,
            &["fqdn".to_owned(), "vip".to_owned()],
            &["m::c".to_owned()],
        );
        let keys = |name: &str| -> Vec<&str> {
            classes
                .iter()
                .find(|c| c.name == name)
                .unwrap()
                .keys
                .iter()
                .map(String::as_str)
                .collect()
        };
        assert_eq!(keys("hash"), ["svc"]);
        assert_eq!(keys("large"), ["meta"]);
        assert_eq!(keys("array"), ["dns"]);
        assert_eq!(keys("large-array"), ["hosts"]);
        assert_eq!(keys("interpolated"), ["uri", "list"]);
        assert_eq!(keys("priority"), ["vip", "solo", "fqdn"]);
        assert_eq!(keys("missing").len(), 8);
        assert!(keys("missing").iter().all(|k| k.starts_with("m::c::")));
    }
}
