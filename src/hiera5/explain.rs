//! `puppet lookup --explain`: the tree Puppet's explainer grows while a
//! lookup runs (a node pushed for each search, provider, merge, location,
//! interpolation and sub key, popped when it is done, kept when it fails)
//! and its text. Ported from puppet/pops/lookup/explainer.rb.

use super::error::Result;
use super::key::Segment;
use super::lookup::{Files, Lookup};
use super::merge::Strategy;
use crate::hiera::render::ruby;
use crate::hiera::{Hash, Value};

/// What a node of the tree stands for.
#[derive(Debug)]
pub(crate) enum Kind {
    Root,
    /// `Searching for "KEY"` (a lookup, or the `lookup_options` meta one).
    Top(String),
    InvalidKey(String),
    MergeSource(String),
    /// A merge of several variants: the strategy's name, its options.
    Merge {
        name: &'static str,
        options: Option<Hash>,
    },
    /// A data provider: its name, the configuration it read, and its
    /// module for a module's layer.
    Provider {
        name: String,
        config: Option<String>,
        module: Option<String>,
    },
    Location {
        path: String,
        original: String,
    },
    SubLookup(String),
    Segment,
    Interpolate(String),
    Scope(String),
    ModuleNotFound(String),
    ModuleProviderNotFound(String),
}

#[derive(Debug, Default)]
enum Event {
    #[default]
    None,
    Found(String, Value),
    NotFound(String),
    Result(Value),
    LocationNotFound,
}

#[derive(Debug)]
struct Node {
    kind: Kind,
    parent: usize,
    branches: Vec<usize>,
    event: Event,
    texts: Vec<String>,
}

/// The explanation of one `puppet lookup` run.
#[derive(Debug)]
pub(crate) struct Explainer {
    nodes: Vec<Node>,
    current: usize,
}

impl Default for Explainer {
    fn default() -> Explainer {
        Explainer {
            nodes: vec![Node {
                kind: Kind::Root,
                parent: 0,
                branches: Vec::new(),
                event: Event::None,
                texts: Vec::new(),
            }],
            current: 0,
        }
    }
}

impl Explainer {
    /// A new node under the current one, which becomes current.
    pub(crate) fn push(&mut self, kind: Kind) {
        let at = self.add(kind);
        self.current = at;
    }

    /// Back to the current node's parent.
    pub(crate) fn pop(&mut self) {
        self.current = self.nodes[self.current].parent;
    }

    /// A leaf under the current node (a merge source, a missing module).
    pub(crate) fn add(&mut self, kind: Kind) -> usize {
        let at = self.nodes.len();
        self.nodes.push(Node {
            kind,
            parent: self.current,
            branches: Vec::new(),
            event: Event::None,
            texts: Vec::new(),
        });
        self.nodes[self.current].branches.push(at);
        at
    }

    pub(crate) fn found(&mut self, key: &str, value: &Value) {
        self.nodes[self.current].event = Event::Found(key.to_owned(), value.clone());
    }

    pub(crate) fn not_found(&mut self, key: &str) {
        self.nodes[self.current].event = Event::NotFound(key.to_owned());
    }

    pub(crate) fn result(&mut self, value: &Value) {
        self.nodes[self.current].event = Event::Result(value.clone());
    }

    pub(crate) fn location_not_found(&mut self) {
        self.nodes[self.current].event = Event::LocationNotFound;
    }

    pub(crate) fn text(&mut self, text: String) {
        self.nodes[self.current].texts.push(text);
    }

    /// `Explainer#to_hash`: the tree as data (what `--render-as json`
    /// prints); the root's texts are not in it, as in Puppet.
    pub(crate) fn to_value(&self) -> Value {
        match self.nodes[0].branches.as_slice() {
            [one] => self.node_value(*one),
            all => {
                let mut h = Hash::default();
                if !all.is_empty() {
                    h.insert(Value::str("branches"), self.branch_values(all));
                }
                Value::Hash(h)
            }
        }
    }

    fn branch_values(&self, branches: &[usize]) -> Value {
        Value::Array(branches.iter().map(|b| self.node_value(*b)).collect())
    }

    /// Each node class's `to_hash`, its keys in Puppet's order.
    fn node_value(&self, at: usize) -> Value {
        let node = &self.nodes[at];
        let mut h = Hash::default();
        let mut put = |k: &str, v: Value| {
            h.insert(Value::str(k), v);
        };
        let (kind, extra): (&str, Vec<(&str, Value)>) = match &node.kind {
            Kind::Merge { .. } if node.branches.len() == 1 => {
                return self.node_value(node.branches[0]);
            }
            Kind::MergeSource(source) => {
                put("type", Value::str("merge_source"));
                put("merge_source", Value::str(source.as_str()));
                return Value::Hash(h);
            }
            Kind::Root | Kind::Top(_) => ("root", vec![]),
            Kind::InvalidKey(_) => ("invalid_key", vec![]),
            Kind::ModuleNotFound(_) | Kind::ModuleProviderNotFound(_) => ("module", vec![]),
            Kind::Interpolate(expr) => (
                "interpolate",
                vec![("expression", Value::str(expr.as_str()))],
            ),
            Kind::Merge { name, options } => {
                let mut extra = vec![("merge", Value::str(*name))];
                if let Some(o) = options {
                    extra.push(("options", Value::Hash(o.clone())));
                }
                ("merge", extra)
            }
            Kind::Provider {
                name,
                config,
                module,
            } => {
                let mut extra = vec![("name", Value::str(name.as_str()))];
                if let Some(path) = config {
                    extra.push(("configuration_path", Value::str(path.as_str())));
                }
                if let Some(m) = module {
                    extra.push(("module", Value::str(m.as_str())));
                }
                ("data_provider", extra)
            }
            Kind::Location { path, original } => (
                "path",
                vec![
                    ("original_path", Value::str(original.as_str())),
                    ("path", Value::str(path.as_str())),
                ],
            ),
            Kind::SubLookup(_) => ("sub_key", vec![]),
            Kind::Segment => ("segment", vec![]),
            Kind::Scope(name) => ("scope", vec![("name", Value::str(name.as_str()))]),
        };
        if !node.branches.is_empty() {
            put("branches", self.branch_values(&node.branches));
        }
        let key = match (&node.event, &node.kind) {
            (Event::Found(k, _) | Event::NotFound(k), _) => Some(k),
            (_, Kind::Top(k) | Kind::InvalidKey(k)) => Some(k),
            _ => None,
        };
        if let Some(k) = key {
            put("key", Value::str(k.as_str()));
        }
        let event = match &node.event {
            Event::Found(_, v) | Event::Result(v) => {
                put("value", v.clone());
                Some(if matches!(node.event, Event::Found(..)) {
                    "found"
                } else {
                    "result"
                })
            }
            Event::NotFound(_) => Some("not_found"),
            Event::LocationNotFound => Some("location_not_found"),
            Event::None => match node.kind {
                Kind::ModuleNotFound(_) => Some("module_not_found"),
                Kind::ModuleProviderNotFound(_) => Some("module_provider_not_found"),
                _ => None,
            },
        };
        if let Some(e) = event {
            put("event", Value::str(e));
        }
        if !node.texts.is_empty() {
            put(
                "texts",
                Value::Array(node.texts.iter().map(|t| Value::str(t.as_str())).collect()),
            );
        }
        put("type", Value::str(kind));
        for (k, v) in extra {
            put(k, v);
        }
        Value::Hash(h)
    }

    /// `Explainer#explain`: the whole tree as text.
    pub(crate) fn render(&self) -> String {
        let mut io = String::new();
        self.dump(0, &mut io, "", "");
        io
    }

    /// `dump_on(io, indent, first_indent)` of each node kind.
    fn dump(&self, at: usize, io: &mut String, indent: &str, first: &str) {
        let node = &self.nodes[at];
        let inner = format!("{indent}  ");
        let branches = |io: &mut String, indent: &str, first: &str| {
            for b in &node.branches {
                self.dump(*b, io, indent, first);
            }
        };
        match &node.kind {
            Kind::Root => {
                branches(io, indent, first);
                texts(io, indent, &node.texts);
            }
            Kind::Top(key) => {
                line(io, first, &format!("Searching for \"{key}\""));
                branches(io, &inner, &inner);
            }
            Kind::InvalidKey(key) => line(io, first, &format!("Invalid key \"{key}\"")),
            Kind::MergeSource(source) => line(
                io,
                first,
                &format!("Using merge options from \"{source}\" hash"),
            ),
            Kind::ModuleNotFound(name) => line(io, indent, &format!("Module \"{name}\" not found")),
            Kind::ModuleProviderNotFound(name) => line(
                io,
                indent,
                &format!("Module data provider for module \"{name}\" not found"),
            ),
            Kind::Interpolate(expr) => {
                line(io, first, &format!("Interpolation on \"{expr}\""));
                branches(io, &inner, &inner);
            }
            Kind::Merge { name, options } => match node.branches.len() {
                0 => {}
                // Puppet does not report a merge of one branch.
                1 => self.dump(node.branches[0], io, indent, first),
                _ => {
                    line(io, first, &format!("Merge strategy {name}"));
                    if let Some(options) = options {
                        io.push_str(&format!("{inner}Options: "));
                        dump_value(io, &inner, &Value::Hash(options.clone()));
                        io.push('\n');
                    }
                    branches(io, &inner, &inner);
                    if let Event::Result(v) = &node.event {
                        io.push_str(&format!("{inner}Merged result: "));
                        dump_value(io, &inner, v);
                        io.push('\n');
                    }
                }
            },
            Kind::Provider { name, config, .. } => {
                line(io, first, name);
                if let Some(path) = config {
                    line(io, &inner, &format!("Using configuration \"{path}\""));
                }
                branches(io, &inner, &inner);
                outcome(io, &inner, node);
            }
            Kind::Location { path, original } => {
                line(io, indent, &format!("Path \"{path}\""));
                line(io, &inner, &format!("Original path: \"{original}\""));
                branches(io, &inner, &inner);
                if let Event::LocationNotFound = node.event {
                    line(io, &inner, "Path not found");
                }
                outcome(io, &inner, node);
            }
            Kind::SubLookup(sub_key) => {
                line(io, indent, &format!("Sub key: \"{sub_key}\""));
                branches(io, &inner, &inner);
                outcome(io, &inner, node);
            }
            Kind::Segment => outcome(io, indent, node),
            Kind::Scope(name) => {
                line(io, indent, name);
                branches(io, &inner, &inner);
                outcome(io, &inner, node);
            }
        }
    }
}

/// What `puppet lookup --explain` prints: the text (`--render-as s`),
/// and the tree as data (`--render-as json`).
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    pub text: String,
    pub tree: Value,
}

/// `Lookup.fail_lookup`'s message: the last line of an explanation that
/// found none of `keys`.
fn not_found(keys: &[String]) -> String {
    match keys {
        [one] => format!("Function lookup() did not find a value for the name '{one}'"),
        _ => format!(
            "Function lookup() did not find a value for any of the names [{}]",
            keys.iter()
                .map(|k| format!("'{k}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl<F: Files> Lookup<'_, F> {
    /// The explanation of the lookup of `keys` that gave `result`: a
    /// failure, or no key found (and no default), is the text's last
    /// line, as `puppet lookup --explain` prints it (its `report_text`).
    /// `None` when not explaining. Call it once, after the lookup.
    pub fn explained(
        &self,
        keys: &[String],
        result: &Result<Option<Value>>,
        has_default: bool,
    ) -> Option<Explanation> {
        let last = match result {
            Ok(Some(_)) => None,
            Ok(None) if has_default => None,
            Ok(None) => Some(not_found(keys)),
            Err(e) => Some(e.to_string()),
        };
        let mut text = self.explanation(last)?;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        Some(Explanation {
            text,
            tree: self.explanation_value()?,
        })
    }

    /// `MergeStrategy#lookup` with a merge node explained when there are
    /// several variants to merge.
    pub(crate) fn merged(
        &self,
        strategy: &Strategy,
        variants: usize,
        find: impl FnMut(usize) -> Result<Option<Value>>,
    ) -> Result<Option<Value>> {
        if variants < 2 || matches!(strategy, Strategy::First) {
            return strategy.lookup(variants, find);
        }
        let kind = || {
            let (name, options) = strategy.explained();
            Kind::Merge { name, options }
        };
        self.with(kind, || {
            let found = strategy.lookup(variants, find)?;
            if let Some(v) = &found {
                self.explain(|e| e.result(v));
            }
            Ok(found)
        })
    }

    /// `sub_lookup`: `value` dug by `segments`, each step explained.
    pub(crate) fn dig(
        &self,
        key: &str,
        segments: &[Segment],
        value: Value,
    ) -> Result<Option<Value>> {
        if segments.is_empty() || !self.is_explaining() {
            return super::key::dig(key, segments, value);
        }
        let joined = segments
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(".");
        self.with(
            || Kind::SubLookup(joined),
            || {
                let mut value = value;
                for segment in segments {
                    let at = segment.to_string();
                    let taken = std::mem::replace(&mut value, Value::Nil);
                    let step = self.with(
                        || Kind::Segment,
                        || {
                            let found = super::key::dig(key, std::slice::from_ref(segment), taken)?;
                            match &found {
                                Some(v) => self.explain(|e| e.found(&at, v)),
                                None => self.explain(|e| e.not_found(&at)),
                            }
                            Ok(found)
                        },
                    )?;
                    match step {
                        Some(v) => value = v,
                        None => return Ok(None),
                    }
                }
                Ok(Some(value))
            },
        )
    }
}

fn line(io: &mut String, indent: &str, text: &str) {
    io.push_str(indent);
    io.push_str(text);
    io.push('\n');
}

fn texts(io: &mut String, indent: &str, texts: &[String]) {
    for t in texts {
        line(io, indent, t);
    }
}

/// `dump_outcome`: what the node found, then its texts.
fn outcome(io: &mut String, indent: &str, node: &Node) {
    match &node.event {
        Event::NotFound(key) => line(io, indent, &format!("No such key: \"{key}\"")),
        Event::Found(key, value) => {
            io.push_str(&format!("{indent}Found key: \"{key}\" value: "));
            dump_value(io, indent, value);
            io.push('\n');
        }
        _ => {}
    }
    texts(io, indent, &node.texts);
}

/// `dump_value`: Hashes and Arrays one entry a line, the rest inspected.
fn dump_value(io: &mut String, indent: &str, value: &Value) {
    let inner = format!("{indent}  ");
    match value {
        Value::Hash(h) => {
            io.push('{');
            if !h.is_empty() {
                let mut sep = "\n";
                for (k, v) in h {
                    io.push_str(sep);
                    io.push_str(&inner);
                    dump_value(io, &inner, k);
                    io.push_str(" => ");
                    dump_value(io, &inner, v);
                    sep = ",\n";
                }
                io.push('\n');
                io.push_str(indent);
            }
            io.push('}');
        }
        Value::Array(items) => {
            io.push('[');
            if !items.is_empty() {
                let mut sep = "\n";
                for v in items {
                    io.push_str(sep);
                    io.push_str(&inner);
                    dump_value(io, &inner, v);
                    sep = ",\n";
                }
                io.push('\n');
                io.push_str(indent);
            }
            io.push(']');
        }
        other => io.push_str(&ruby::inspect(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merge_of_one_branch_is_not_reported() {
        let mut e = Explainer::default();
        e.push(Kind::Top("k".into()));
        e.push(Kind::Merge {
            name: "deep",
            options: None,
        });
        e.push(Kind::Scope("Only".into()));
        e.found("k", &Value::Array(vec![Value::Int(1)]));
        e.pop();
        e.pop();
        e.pop();
        e.text("done".into());
        // As data, the merge of one branch is that branch; the root's
        // texts are left out.
        assert_eq!(
            crate::hiera::render::json::dump(&e.to_value()),
            r#"{"branches":[{"key":"k","value":[1],"event":"found","type":"scope","name":"Only"}],"key":"k","type":"root"}"#
        );
        assert_eq!(
            e.render(),
            "Searching for \"k\"\n  Only\n    Found key: \"k\" value: [\n      1\n    ]\ndone\n"
        );
    }
}
