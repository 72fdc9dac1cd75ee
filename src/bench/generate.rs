//! `hierad bench generate`: a synthetic Fuel environment of N nodes built
//! from real Fuel deployment data (the `neut_tun.ceph.murano.sahara.ceil`
//! fixtures: one primary controller, one compute, one Ceph OSD node of a
//! single environment, read from the repository).
//!
//! What the three fixtures share is shared here: it goes once into the
//! root `astute`, with `globals`, the override layers and the plugin
//! layers. What differs between them (uid, fqdn, roles, network_scheme,
//! node_volumes…) is per node: each generated node gets its template's
//! values with its own name, uid and addresses, in an `astute` at level
//! `nodes=<fqdn>`. So a thousand nodes hold one `network_metadata`, as the
//! ConfigDB should.
//!
//! The shared `nodes` list and `network_metadata` describe
//! [`LISTED_NODES`] nodes whatever N is (padded with spare nodes when N is
//! smaller): `network_metadata` is then the ~55 KB of the perf anchors,
//! and environments of different sizes differ in their number of nodes
//! only, not in the size of their answers.

use super::plan::{self, PLAN_FILE, Plan};
use super::rng::Rng;
use crate::hiera::render::yaml::to_yaml;
use crate::hiera::{Hash, Value, yaml};
use std::net::Ipv4Addr;
use std::path::Path;

/// The real data a generated environment is made from: three nodes of
/// Fuel's `neut_tun.ceph.murano.sahara.ceil` environment
/// (`tests/fixtures/fuel/`) and the sample's globals and override layers
/// (`data/`).
#[derive(Clone, Debug)]
pub(crate) struct Sources {
    pub(crate) primary_controller: String,
    pub(crate) compute: String,
    pub(crate) ceph_osd: String,
    pub(crate) globals: String,
    pub(crate) plugins: String,
    pub(crate) role: String,
    pub(crate) cluster: String,
}

impl Sources {
    /// Reads the sources from the repository's `fixtures` (Fuel
    /// fixtures) and `sample` (`data/`) folders.
    ///
    /// # Errors
    ///
    /// A file is missing: run from the repository, or give the folders.
    pub(crate) fn read(fixtures: &Path, sample: &Path) -> std::io::Result<Sources> {
        let read = |path: std::path::PathBuf| {
            std::fs::read_to_string(&path).map_err(|e| {
                std::io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display()))
            })
        };
        let fixture = |role: &str| {
            read(fixtures.join(format!("neut_tun.ceph.murano.sahara.ceil-{role}.yaml")))
        };
        Ok(Sources {
            primary_controller: fixture("primary-controller")?,
            compute: fixture("compute")?,
            ceph_osd: fixture("ceph-osd")?,
            globals: read(sample.join("globals.yaml"))?,
            plugins: read(sample.join("override/plugins.yaml"))?,
            role: read(sample.join("override/configuration/role.yaml"))?,
            cluster: read(sample.join("override/configuration/cluster.yaml"))?,
        })
    }
}

/// The top-level astute keys that differ between the nodes of one
/// environment (found by comparing the three fixtures).
pub(crate) const NODE_KEYS: [&str; 7] = [
    "fqdn",
    "uid",
    "user_node_name",
    "roles",
    "fail_if_error",
    "network_scheme",
    "node_volumes",
];

/// How many nodes the shared `nodes` and `network_metadata` describe.
pub(crate) const LISTED_NODES: usize = 45;

pub(crate) const DOMAIN: &str = "test.domain.local";

/// Fuel's hierarchy (MOS 9.x `hiera.yaml`) with two plugins' levels: 17.
pub(crate) const HIERARCHY: [&str; 17] = [
    "override/node/%{::fqdn}",
    "override/class/%{calling_class}",
    "override/module/%{calling_module}",
    "override/plugins",
    "plugins/contrail",
    "plugins/ldap",
    "override/common",
    "override/configuration/%{::fqdn}",
    "override/configuration/role",
    "override/configuration/cluster",
    "override/configuration/default_route",
    "class/%{calling_class}",
    "module/%{calling_module}",
    "deleted_nodes",
    "nodes",
    "globals%{disable_globals_yaml}",
    "astute",
];

/// A generated environment, in memory.
#[derive(Debug)]
pub(crate) struct Generated {
    /// Root documents by resource name (`hiera` is the Hiera
    /// configuration, Symbol keys as in `hiera.yaml`).
    pub(crate) root: Vec<(String, Hash)>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) plan: Plan,
}

/// One node's own documents, imported at `nodes=<fqdn>`.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) fqdn: String,
    pub(crate) docs: Vec<(String, Hash)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    PrimaryController,
    Controller,
    CephOsd,
    Compute,
}

impl Role {
    fn of(uid: usize, nodes: usize) -> Role {
        match uid {
            1 => Role::PrimaryController,
            2 | 3 => Role::Controller,
            _ if uid <= 3 + (nodes / 10).max(1) => Role::CephOsd,
            _ => Role::Compute,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Role::PrimaryController => "primary-controller",
            Role::Controller => "controller",
            Role::CephOsd => "ceph-osd",
            Role::Compute => "compute",
        }
    }
}

/// One fixture node: its astute, its name, and its addresses by network.
struct Template {
    astute: Hash,
    name: String,
    uid: String,
    addresses: Vec<(Net, String)>,
}

#[derive(Clone, Copy)]
enum Net {
    Management,
    Storage,
    Public,
    Admin,
    Mesh,
}

impl Net {
    const ALL: [(Net, &'static str); 5] = [
        (Net::Management, "management"),
        (Net::Storage, "storage"),
        (Net::Public, "ex"),
        (Net::Admin, "fw-admin"),
        (Net::Mesh, "neutron/mesh"),
    ];

    /// Node `uid`'s address: one /16 per network, so a thousand nodes fit.
    fn address(self, uid: usize) -> String {
        let base: [u8; 2] = match self {
            Net::Management => [10, 20],
            Net::Storage => [10, 21],
            Net::Public => [172, 16],
            Net::Admin => [10, 109],
            Net::Mesh => [10, 22],
        };
        let host = u16::try_from(uid + 2).unwrap_or(u16::MAX);
        Ipv4Addr::new(base[0], base[1], (host >> 8) as u8, (host & 0xff) as u8).to_string()
    }
}

fn s(text: &str) -> Value {
    Value::str(text)
}

fn get<'h>(h: &'h Hash, key: &str) -> Option<&'h Value> {
    h.get(&s(key))
}

fn load(text: &str, what: &str) -> Result<Hash, String> {
    match yaml::load(text).map_err(|e| format!("{what}: {}", e.message))? {
        Value::Hash(h) => Ok(h),
        Value::Nil => Ok(Hash::default()),
        other => Err(format!("{what}: not a Hash but {}", other.class_name())),
    }
}

impl Template {
    fn parse(text: &str, what: &str) -> Result<Template, String> {
        let astute = load(text, what)?;
        let name = get(&astute, "user_node_name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{what}: no user_node_name"))?
            .to_owned();
        let uid = get(&astute, "uid")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{what}: no uid"))?
            .to_owned();
        let roles = get(&astute, "network_metadata")
            .and_then(Value::as_hash)
            .and_then(|m| get(m, "nodes"))
            .and_then(Value::as_hash)
            .and_then(|n| get(n, &name))
            .and_then(Value::as_hash)
            .and_then(|n| get(n, "network_roles"))
            .and_then(Value::as_hash)
            .ok_or_else(|| format!("{what}: no network_metadata.nodes.{name}.network_roles"))?;
        let addresses = Net::ALL
            .iter()
            .filter_map(|(net, role)| {
                get(roles, role)
                    .and_then(Value::as_str)
                    .map(|a| (*net, a.to_owned()))
            })
            .collect();
        Ok(Template {
            astute,
            name,
            uid,
            addresses,
        })
    }

    /// What to replace in this template's values to make them node `uid`'s.
    fn renames(&self, uid: usize) -> Vec<(String, String)> {
        let name = format!("node-{uid}");
        let mut out = vec![
            (
                format!("{}.{DOMAIN}", self.name),
                format!("{name}.{DOMAIN}"),
            ),
            (self.name.clone(), name),
            (self.uid.clone(), uid.to_string()),
        ];
        for (net, address) in &self.addresses {
            out.push((address.clone(), net.address(uid)));
        }
        out
    }
}

/// `v` with every String that is one of the `renames` (or one of them
/// followed by `/prefix`, an address in CIDR form) replaced.
fn rename(v: &Value, renames: &[(String, String)]) -> Value {
    match v {
        Value::String(text) => {
            for (from, to) in renames {
                if text == from {
                    return s(to);
                }
                if let Some(rest) = text.strip_prefix(from.as_str())
                    && rest.starts_with('/')
                {
                    return s(&format!("{to}/16"));
                }
            }
            v.clone()
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| rename(i, renames)).collect()),
        Value::Hash(h) => Value::Hash(
            h.iter()
                .map(|(k, v)| (rename(k, renames), rename(v, renames)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn roles_value(role: Role) -> Value {
    Value::Array(vec![s(role.name())])
}

/// The service Hashes of astute that globals and the overlays extend.
const SERVICES: &[&str] = &[
    "nova",
    "keystone",
    "glance",
    "cinder",
    "heat",
    "ceilometer",
    "aodh",
    "murano",
    "sahara",
    "swift",
    "ironic",
    "quantum_settings",
    "storage",
    "rabbit",
    "mysql",
];

/// The fixture a role's nodes are made from.
fn template_of(templates: &[Template; 3], role: Role) -> &Template {
    match role {
        Role::PrimaryController | Role::Controller => &templates[0],
        Role::Compute => &templates[1],
        Role::CephOsd => &templates[2],
    }
}

/// Generates an environment of `nodes` nodes from `sources`; the same
/// seed gives the same environment.
///
/// # Errors
///
/// A source does not parse, or lacks what a Fuel node's data has.
pub(crate) fn generate(sources: &Sources, nodes: usize, seed: u64) -> Result<Generated, String> {
    let templates = [
        Template::parse(&sources.primary_controller, "primary-controller fixture")?,
        Template::parse(&sources.compute, "compute fixture")?,
        Template::parse(&sources.ceph_osd, "ceph-osd fixture")?,
    ];
    let mut rng = Rng::new(seed);
    let astute = shared_astute(&templates, nodes)?;
    let services: Vec<String> = SERVICES
        .iter()
        .filter(|k| matches!(get(&astute, k), Some(Value::Hash(_))))
        .map(|k| (*k).to_owned())
        .collect();
    let globals = globals(sources, &astute, &services)?;
    let overlays = overlays(sources, &services, &mut rng)?;
    let mut root = vec![
        ("hiera".to_owned(), hiera_config()),
        ("astute".to_owned(), astute),
        ("globals".to_owned(), globals),
    ];
    root.extend(overlays);
    let generated_nodes: Vec<Node> = (1..=nodes)
        .map(|uid| {
            node(
                template_of(&templates, Role::of(uid, nodes)),
                uid,
                nodes,
                &mut rng,
            )
        })
        .collect();
    let plan = plan_for(&root, &generated_nodes);
    Ok(Generated {
        root,
        nodes: generated_nodes,
        plan,
    })
}

/// The shared astute: everything but the node keys, with the lists of
/// nodes rebuilt for the listed nodes.
fn shared_astute(templates: &[Template; 3], nodes: usize) -> Result<Hash, String> {
    let shared = &templates[0].astute;
    let mut astute: Hash = shared
        .iter()
        .filter(|(k, _)| !NODE_KEYS.iter().any(|n| *k == &s(n)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let listed = LISTED_NODES.max(1);
    let fixture_nodes = get(shared, "nodes")
        .and_then(Value::as_array)
        .ok_or("the fixture has no nodes list")?;
    let mut node_list = Vec::new();
    let mut metadata_nodes = Hash::default();
    for uid in 1..=listed {
        let role = Role::of(uid, nodes);
        let t = template_of(templates, role);
        let renames = t.renames(uid);
        if let Some(entry) = fixture_nodes.iter().find(|e| {
            e.as_hash()
                .and_then(|h| get(h, "uid"))
                .and_then(Value::as_str)
                == Some(t.uid.as_str())
        }) {
            let mut entry = rename(entry, &renames);
            if let Value::Hash(h) = &mut entry {
                h.insert(s("role"), s(role.name()));
            }
            node_list.push(entry);
        }
        let entry = get(&t.astute, "network_metadata")
            .and_then(Value::as_hash)
            .and_then(|m| get(m, "nodes"))
            .and_then(Value::as_hash)
            .and_then(|n| get(n, &t.name))
            .ok_or("the fixture has no network_metadata entry for itself")?;
        let mut entry = rename(entry, &renames);
        if let Value::Hash(h) = &mut entry {
            h.insert(s("node_roles"), roles_value(role));
        }
        metadata_nodes.insert(s(&format!("node-{uid}")), entry);
    }
    astute.insert(s("nodes"), Value::Array(node_list));
    if let Some(Value::Hash(metadata)) = astute.get_mut(&s("network_metadata")) {
        metadata.insert(s("nodes"), Value::Hash(metadata_nodes));
    }
    Ok(astute)
}

/// globals: Fuel's derived values as interpolations, per service too.
fn globals(sources: &Sources, astute: &Hash, services: &[String]) -> Result<Hash, String> {
    let mut globals = load(&sources.globals, "globals")?;
    for (i, svc) in services.iter().enumerate() {
        let port = 8000 + 10 * i;
        globals.insert(
            s(&format!("{svc}_internal_url")),
            s(&format!(
                "http://%{{hiera('service_endpoint')}}:{port}/{svc}"
            )),
        );
        globals.insert(
            s(&format!("{svc}_public_url")),
            s(&format!("https://%{{hiera('public_vip')}}:{port}/{svc}")),
        );
        globals.insert(
            s(&format!("{svc}_hash")),
            s(&format!("%{{alias('{svc}')}}")),
        );
        let has_db = get(astute, svc)
            .and_then(Value::as_hash)
            .is_some_and(|h| get(h, "db_password").is_some());
        if has_db {
            globals.insert(
                s(&format!("{svc}_db_connection")),
                s(&format!(
                    "mysql://{svc}:%{{hiera('{svc}.db_password')}}@%{{hiera('management_vip')}}/{svc}?read_timeout=60"
                )),
            );
        }
        globals.insert(
            s(&format!("{svc}_syslog_facility")),
            s(&format!("LOG_LOCAL{}", i % 8)),
        );
    }
    Ok(globals)
}

/// Override and plugin layers: small Hashes over the service Hashes, so a
/// hash lookup of them merges three or four layers. In the root's order.
fn overlays(
    sources: &Sources,
    services: &[String],
    rng: &mut Rng,
) -> Result<Vec<(String, Hash)>, String> {
    let mut plugins = load(&sources.plugins, "override/plugins")?;
    let mut cluster = load(&sources.cluster, "override/configuration/cluster")?;
    let role = load(&sources.role, "override/configuration/role")?;
    let mut contrail = Hash::default();
    let mut ldap = Hash::default();
    for (i, svc) in services.iter().enumerate() {
        let mut overlay = Hash::default();
        overlay.insert(
            s("plugin_option"),
            s(&format!("opt-{:04x}", rng.next_u64() & 0xffff)),
        );
        overlay.insert(s("debug"), Value::Bool(rng.chance(0.5)));
        plugins.insert(s(svc), Value::Hash(overlay));
        let mut overlay = Hash::default();
        overlay.insert(s("cluster_option"), Value::Int(rng.below(100) as i64));
        overlay.insert(s("workers"), Value::Int(4));
        cluster.insert(s(svc), Value::Hash(overlay));
        if i % 3 == 0 {
            let mut overlay = Hash::default();
            overlay.insert(s("contrail_integration"), Value::Bool(true));
            contrail.insert(s(svc), Value::Hash(overlay));
        }
    }
    let mut settings = Hash::default();
    settings.insert(s("api_server"), s(&Net::Management.address(1)));
    settings.insert(s("asn"), Value::Int(64512));
    contrail.insert(s("contrail"), Value::Hash(settings));
    let mut settings = Hash::default();
    settings.insert(s("url"), s("ldap://ldap.test.domain.local"));
    settings.insert(s("suffix"), s("dc=test,dc=domain,dc=local"));
    settings.insert(s("user_tree_dn"), s("ou=Users,dc=test,dc=domain,dc=local"));
    ldap.insert(s("ldap"), Value::Hash(settings));
    if let Some(keystone) = services.iter().find(|k| *k == "keystone") {
        let mut overlay = Hash::default();
        overlay.insert(s("identity_driver"), s("ldap"));
        ldap.insert(s(keystone), Value::Hash(overlay));
    }
    let mut common = Hash::default();
    common.insert(s("ntp_servers"), Value::Array(vec![s("10.109.0.2")]));
    common.insert(s("syslog_remote"), Value::Bool(true));
    common.insert(s("custom_motd"), s("Managed by Puppet"));
    Ok(vec![
        ("override/plugins".to_owned(), plugins),
        ("plugins/contrail".to_owned(), contrail),
        ("plugins/ldap".to_owned(), ldap),
        ("override/common".to_owned(), common),
        ("override/configuration/role".to_owned(), role),
        ("override/configuration/cluster".to_owned(), cluster),
    ])
}

/// The environment's hiera.yaml: the Fuel hierarchy, deeper merges.
fn hiera_config() -> Hash {
    let mut hiera = Hash::default();
    hiera.insert(
        Value::Symbol("backends".into()),
        Value::Array(vec![s("yaml")]),
    );
    hiera.insert(
        Value::Symbol("hierarchy".into()),
        Value::Array(HIERARCHY.iter().map(|l| s(l)).collect()),
    );
    let mut yaml_options = Hash::default();
    yaml_options.insert(Value::Symbol("datadir".into()), s("/etc/hiera"));
    hiera.insert(Value::Symbol("yaml".into()), Value::Hash(yaml_options));
    hiera.insert(Value::Symbol("merge_behavior".into()), s("deeper"));
    hiera.insert(Value::Symbol("logger".into()), s("noop"));
    hiera
}

/// Node `uid`'s own documents: its astute keys and, for one node in ten,
/// a per-node override, as operators make.
fn node(t: &Template, uid: usize, nodes: usize, rng: &mut Rng) -> Node {
    let role = Role::of(uid, nodes);
    let renames = t.renames(uid);
    let mut own: Hash = NODE_KEYS
        .iter()
        .filter_map(|k| get(&t.astute, k).map(|v| (s(k), rename(v, &renames))))
        .collect();
    own.insert(s("roles"), roles_value(role));
    let fqdn = format!("node-{uid}.{DOMAIN}");
    let mut docs = vec![("astute".to_owned(), own)];
    if rng.chance(0.1) {
        let mut over = Hash::default();
        match rng.below(3) {
            0 => {
                let mut nova = Hash::default();
                nova.insert(s("state_path"), s("/srv/nova"));
                over.insert(s("nova"), Value::Hash(nova));
                over.insert(s("debug"), Value::Bool(true));
            }
            1 => {
                over.insert(
                    s("dns_nameservers"),
                    Value::Array(vec![s(&Net::Admin.address(uid))]),
                );
            }
            _ => {
                let mut syslog = Hash::default();
                syslog.insert(s("syslog_server"), s(&Net::Admin.address(1)));
                over.insert(s("base_syslog"), Value::Hash(syslog));
            }
        }
        docs.push((format!("override/node/{fqdn}"), over));
    }
    Node { fqdn, docs }
}

/// The bench plan: the key classes over the layers a node sees, most
/// specific first.
fn plan_for(root: &[(String, Hash)], nodes: &[Node]) -> Plan {
    let calling_classes = plan::default_calling_classes();
    let by_name = |name: &str| root.iter().find(|(n, _)| n == name).map(|(_, d)| d);
    let sources: Vec<(String, &Hash)> = HIERARCHY
        .iter()
        .filter(|l| !l.contains("%{"))
        .chain(["globals"].iter())
        .filter_map(|l| by_name(l).map(|d| ((*l).to_owned(), d)))
        .collect();
    let node_keys: Vec<String> = NODE_KEYS.iter().map(|k| (*k).to_owned()).collect();
    Plan {
        environment: 1,
        level: "nodes".to_owned(),
        nodes: nodes.iter().map(|n| n.fqdn.clone()).collect(),
        hierarchy: HIERARCHY.iter().map(|l| (*l).to_owned()).collect(),
        classes: plan::classify(&sources, &node_keys, &calling_classes),
        calling_classes,
        write_resource: "override/common".to_owned(),
    }
}

/// What [`write`](fn@write) wrote.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Written {
    pub(crate) files: usize,
    pub(crate) bytes: u64,
}

/// Writes `generated` under `dir`: `root/` (the tree for the
/// environment's root, with `hiera.yaml`), `nodes/<fqdn>/` (each node's
/// tree, for level `nodes=<fqdn>`), and the plan, `bench-plan.json`.
/// YAML as Psych writes it, so the real Hiera reads the same values.
///
/// # Errors
///
/// The files cannot be written.
pub(crate) fn write(generated: &Generated, dir: &Path) -> std::io::Result<Written> {
    let mut written = Written::default();
    let mut put = |path: &Path, text: &str| -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
        written.files += 1;
        written.bytes += text.len() as u64;
        Ok(())
    };
    let yaml_text = |doc: &Hash| {
        to_yaml(&Value::Hash(doc.clone())).map_err(|e| std::io::Error::other(e.message))
    };
    for (name, doc) in &generated.root {
        put(
            &dir.join("root").join(format!("{name}.yaml")),
            &yaml_text(doc)?,
        )?;
    }
    for node in &generated.nodes {
        for (name, doc) in &node.docs {
            let path = dir
                .join("nodes")
                .join(&node.fqdn)
                .join(format!("{name}.yaml"));
            put(&path, &yaml_text(doc)?)?;
        }
    }
    let plan = serde_json::to_string_pretty(&generated.plan).map_err(std::io::Error::other)?;
    put(&dir.join(PLAN_FILE), &plan)?;
    Ok(written)
}

#[cfg(test)]
mod tests;
