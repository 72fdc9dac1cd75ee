//! `hiera.yaml` version 5: `defaults`, and `hierarchy` entries with their
//! data function and locations. Ported from HieraConfigV5 in
//! puppet/pops/lookup/hiera_config.rb (validation and
//! `create_configured_data_providers`).

use super::error::{Error, Result};
use crate::hiera::{Hash, Value};

/// The data functions hierad reads files with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataFormat {
    /// `data_hash: yaml_data`
    Yaml,
    /// `data_hash: json_data`
    Json,
    /// `lookup_key: eyaml_lookup_key` (hiera-eyaml's): YAML files whose
    /// `ENC[PKCS7,…]` blocks are decrypted with the entry's
    /// `pkcs7_private_key` and `pkcs7_public_key`, then interpolated.
    Eyaml,
}

impl DataFormat {
    /// The data function's name, as Puppet's messages give it.
    pub(crate) fn function(self) -> &'static str {
        match self {
            DataFormat::Yaml => "yaml_data",
            DataFormat::Json => "json_data",
            DataFormat::Eyaml => "eyaml_lookup_key",
        }
    }
}

/// Where a hierarchy entry's data is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Locations {
    /// No location key: the function gets no `path` (Puppet refuses that
    /// for yaml_data and json_data, at lookup time).
    None,
    Paths(Vec<String>),
    Globs(Vec<String>),
    Uris(Vec<String>),
    /// `[variable, key, template]`.
    Mapped([String; 3]),
}

/// One `hierarchy` entry.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) format: DataFormat,
    /// As written (`defaults.datadir`, else `data`), not yet interpolated.
    pub(crate) datadir: String,
    pub(crate) locations: Locations,
    /// Its `options` (else `defaults`' options), not yet interpolated:
    /// what an eyaml entry reads its key files' paths from.
    pub(crate) options: Option<Hash>,
}

/// A version 5 hiera.yaml.
#[derive(Clone, Debug)]
pub struct Config {
    pub(crate) entries: Vec<Entry>,
    /// Puppet's built-in config (no file): paths that do not exist are
    /// left out rather than looked for.
    pub(crate) is_default: bool,
    /// What Puppet refuses only once it reads the hierarchy's entries
    /// (`create_configured_data_providers`: a name given twice), inside
    /// the layer's provider as `--explain` shows it.
    pub(crate) refused: Option<Error>,
}

const FUNCTION_KEYS: [&str; 4] = ["data_hash", "lookup_key", "data_dig", "hiera3_backend"];
const LOCATION_KEYS: [&str; 7] = [
    "path",
    "paths",
    "glob",
    "globs",
    "uri",
    "uris",
    "mapped_paths",
];
const ENTRY_KEYS: [&str; 14] = [
    "name",
    "options",
    "data_hash",
    "lookup_key",
    "hiera3_backend",
    "v4_data_hash",
    "data_dig",
    "path",
    "paths",
    "glob",
    "globs",
    "uri",
    "uris",
    "mapped_paths",
];

impl Config {
    /// The entries' datadirs as written, each once, none inside another
    /// (`data`, not also `data/nodes`).
    pub fn datadirs(&self) -> Vec<String> {
        let mut dirs: Vec<String> = self
            .entries
            .iter()
            .map(|e| e.datadir.trim_end_matches('/').to_owned())
            .collect();
        dirs.sort();
        dirs.dedup();
        let all = dirs.clone();
        dirs.retain(|d| {
            !all.iter()
                .any(|o| o != d && (o == "." || o.is_empty() || d.starts_with(&format!("{o}/"))))
        });
        dirs
    }

    /// Puppet's `DEFAULT_CONFIG_HASH`: `data/common.yaml` through yaml_data.
    pub fn default_config() -> Config {
        Config {
            entries: vec![Entry {
                name: "Common".into(),
                format: DataFormat::Yaml,
                datadir: "data".into(),
                locations: Locations::Paths(vec!["common.yaml".into()]),
                options: None,
            }],
            is_default: true,
            refused: None,
        }
    }

    /// Reads a loaded hiera.yaml (`path` names it in errors).
    ///
    /// # Errors
    /// [`Error::Config`] with Puppet's wording for what Puppet refuses,
    /// and with hierad's for what Puppet takes but hierad does not read
    /// (versions 3 and 4, functions other than yaml_data, json_data and
    /// eyaml_lookup_key, `default_hierarchy`).
    pub fn from_value(path: &str, loaded: &Value) -> Result<Config> {
        let fail = |message: String| Error::Config {
            path: path.to_owned(),
            message,
        };
        let unsupported = |message: String| Error::Unsupported(format!("{path}: {message}"));
        let Value::Hash(top) = loaded else {
            return Err(unsupported(
                "hierad reads only hiera.yaml version 5, and this file is no Hash".into(),
            ));
        };
        let get = |k: &str| {
            top.get(&Value::str(k))
                .or_else(|| top.get(&Value::Symbol(k.into())))
        };
        match get("version") {
            Some(Value::Int(5)) => {}
            Some(Value::String(s)) if s.trim() == "5" => {}
            None => return Err(unsupported("hierad reads only hiera.yaml version 5 here, and this file has no version (version 3)".into())),
            Some(v) => {
                let v = crate::hiera::render::ruby::to_s(v);
                return Err(unsupported(format!("hierad reads only hiera.yaml version 5 here, not version {v}")));
            }
        }
        for key in top.keys() {
            let name = key.as_str().unwrap_or_default();
            if ![
                "version",
                "defaults",
                "hierarchy",
                "plan_hierarchy",
                "default_hierarchy",
            ]
            .contains(&name)
            {
                return Err(fail(format!(
                    "The Lookup Configuration at '{path}' has wrong type, unrecognized key '{}'",
                    crate::hiera::render::ruby::to_s(key)
                )));
            }
        }
        if get("default_hierarchy").is_some() {
            return Err(unsupported(
                "hierad does not read 'default_hierarchy' (a module's defaults) yet".into(),
            ));
        }
        // A file with no `defaults` takes Puppet's (DEFAULT_CONFIG_HASH of
        // puppet/pops/lookup/hiera_config.rb): its entries read yaml_data.
        let builtin: Hash = [("datadir", "data"), ("data_hash", "yaml_data")]
            .into_iter()
            .map(|(k, v)| (Value::str(k), Value::str(v)))
            .collect();
        let defaults = match get("defaults") {
            None => &builtin,
            Some(Value::Hash(h)) => h,
            Some(_) => {
                return Err(fail(format!(
                    "The Lookup Configuration at '{path}' entry 'defaults' expects a Hash"
                )));
            }
        };
        if FUNCTION_KEYS
            .iter()
            .filter(|k| defaults.contains_key(&Value::str(**k)))
            .count()
            > 1
        {
            return Err(fail(format!(
                "Only one of {} can be defined in defaults",
                combine(&FUNCTION_KEYS)
            )));
        }
        if let Some(Value::Hash(options)) = defaults.get(&Value::str("options")) {
            reserved_options(options, None).map_err(fail)?;
        }
        let datadir = match defaults.get(&Value::str("datadir")) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            None => "data".into(),
            Some(_) => {
                return Err(fail(
                    "defaults: 'datadir' expects a non-empty String".into(),
                ));
            }
        };
        // Nor any `hierarchy`: Puppet's one entry, read with these defaults.
        let common = [Value::Hash(
            [("name", "Common"), ("path", "common.yaml")]
                .into_iter()
                .map(|(k, v)| (Value::str(k), Value::str(v)))
                .collect(),
        )];
        let hierarchy = match get("hierarchy") {
            None => &common[..],
            Some(Value::Array(items)) => &items[..],
            Some(_) => {
                return Err(fail(format!(
                    "The Lookup Configuration at '{path}' entry 'hierarchy' expects an Array"
                )));
            }
        };
        let mut entries: Vec<Entry> = Vec::new();
        let mut refused = None;
        for he in hierarchy {
            let entry = entry(he, defaults, &datadir).map_err(|r| match r {
                Refusal::Puppet(m) => fail(m),
                Refusal::Hierad(m) => unsupported(m),
            })?;
            if entries.iter().any(|e| e.name == entry.name) {
                refused = Some(fail(format!(
                    "Hierarchy name '{}' defined more than once.",
                    entry.name
                )));
                break;
            }
            entries.push(entry);
        }
        Ok(Config {
            entries,
            is_default: false,
            refused,
        })
    }
}

fn entry(he: &Value, defaults: &Hash, datadir: &str) -> Result<Entry, Refusal> {
    let Value::Hash(he) = he else {
        return Err(Refusal::Puppet("a hierarchy entry expects a Hash".into()));
    };
    let text = |k: &str| -> Result<Option<String>, String> {
        match he.get(&Value::str(k)) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(format!("hierarchy entry '{k}' expects a non-empty String")),
        }
    };
    let name = text("name")?.ok_or_else(|| "a hierarchy entry has no 'name'".to_owned())?;
    if let Some(key) = he.keys().find(|k| {
        !k.as_str()
            .is_some_and(|k| ENTRY_KEYS.contains(&k) || k == "datadir")
    }) {
        return Err(Refusal::Puppet(format!(
            "hierarchy entry '{name}' has an unrecognized key '{}'",
            crate::hiera::render::ruby::to_s(key)
        )));
    }
    let mut functions = FUNCTION_KEYS
        .iter()
        .chain(["v4_data_hash"].iter())
        .filter(|k| he.contains_key(&Value::str(**k)));
    let (kind, function) = match (functions.next(), functions.next()) {
        (Some(_), Some(_)) => {
            return Err(Refusal::Puppet(format!(
                "Only one of {} can be defined in hierarchy '{name}'",
                combine(&FUNCTION_KEYS)
            )));
        }
        (Some(kind), None) => (*kind, he.get(&Value::str(*kind)).cloned()),
        (None, _) => match FUNCTION_KEYS
            .iter()
            .find(|k| defaults.contains_key(&Value::str(**k)))
        {
            Some(kind) => (*kind, defaults.get(&Value::str(*kind)).cloned()),
            None => {
                return Err(Refusal::Puppet(format!(
                    "One of {} must be defined in hierarchy '{name}'",
                    combine(&FUNCTION_KEYS)
                )));
            }
        },
    };
    let function = function
        .as_ref()
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let format = match (kind, function.as_str()) {
        ("data_hash", "yaml_data") => DataFormat::Yaml,
        ("data_hash", "json_data") => DataFormat::Json,
        ("lookup_key", "eyaml_lookup_key") => DataFormat::Eyaml,
        (kind, function) => {
            return Err(Refusal::Hierad(format!(
                "hierad reads only 'data_hash: yaml_data', 'data_hash: json_data' and 'lookup_key: eyaml_lookup_key'; hierarchy '{name}' uses '{kind}: {function}'"
            )));
        }
    };
    if LOCATION_KEYS
        .iter()
        .filter(|k| he.contains_key(&Value::str(**k)))
        .count()
        > 1
    {
        return Err(Refusal::Puppet(format!(
            "Only one of {} can be defined in hierarchy '{name}'",
            combine(&LOCATION_KEYS)
        )));
    }
    if let Some(Value::Hash(options)) = he.get(&Value::str("options")) {
        reserved_options(options, Some(&name))?;
    }
    let list = |k: &str, min: usize| -> Result<Vec<String>, String> {
        let items = he
            .get(&Value::str(k))
            .and_then(Value::as_array)
            .filter(|a| a.len() >= min);
        let items = items.ok_or_else(|| {
            format!(
                "hierarchy '{name}': '{k}' expects an Array of at least {min} non-empty Strings"
            )
        })?;
        items
            .iter()
            .map(|v| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                format!("hierarchy '{name}': '{k}' expects an Array of non-empty Strings")
            })
    };
    let locations = if let Some(p) = text("path")? {
        Locations::Paths(vec![p])
    } else if he.contains_key(&Value::str("paths")) {
        Locations::Paths(list("paths", 1)?)
    } else if let Some(g) = text("glob")? {
        Locations::Globs(vec![g])
    } else if he.contains_key(&Value::str("globs")) {
        Locations::Globs(list("globs", 1)?)
    } else if let Some(u) = text("uri")? {
        Locations::Uris(vec![u])
    } else if he.contains_key(&Value::str("uris")) {
        Locations::Uris(list("uris", 1)?)
    } else if he.contains_key(&Value::str("mapped_paths")) {
        let m = list("mapped_paths", 3)?;
        let [a, b, c]: [String; 3] = m
            .try_into()
            .map_err(|_| format!("hierarchy '{name}': 'mapped_paths' expects exactly 3 Strings"))?;
        Locations::Mapped([a, b, c])
    } else {
        Locations::None
    };
    let options = match he.get(&Value::str("options")) {
        Some(Value::Hash(options)) => Some(options.clone()),
        _ => match defaults.get(&Value::str("options")) {
            Some(Value::Hash(options)) => Some(options.clone()),
            _ => None,
        },
    };
    Ok(Entry {
        datadir: text("datadir")?.unwrap_or_else(|| datadir.to_owned()),
        name,
        format,
        locations,
        options,
    })
}

/// Who refuses a hierarchy entry: Puppet (its words), or hierad, for
/// what Puppet reads and hierad does not.
enum Refusal {
    Puppet(String),
    Hierad(String),
}

impl From<String> for Refusal {
    fn from(message: String) -> Refusal {
        Refusal::Puppet(message)
    }
}

/// `options` may not set `path` or `uri`, which Puppet passes itself.
fn reserved_options(options: &Hash, name: Option<&str>) -> Result<(), String> {
    for key in ["path", "uri"] {
        if options.contains_key(&Value::str(key)) {
            return Err(match name {
                Some(name) => {
                    format!("Option key '{key}' used in hierarchy '{name}' is reserved by Puppet")
                }
                None => format!("Option key '{key}' used in defaults is reserved by Puppet"),
            });
        }
    }
    Ok(())
}

/// Puppet's `label.combine_strings`: `'a', 'b', or 'c'`.
fn combine(keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
    let (last, rest) = quoted.split_last().expect("keys");
    format!("{}, or {last}", rest.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Config> {
        Config::from_value("/h.yaml", &crate::hiera::yaml::load(text).unwrap())
    }

    #[test]
    fn entries_take_their_function_and_datadir_from_defaults() {
        let c = load("version: 5\ndefaults: {datadir: d, data_hash: json_data}\nhierarchy:\n- {name: a, paths: [x.json, y.json]}\n- {name: b, glob: '*.yaml', data_hash: yaml_data, datadir: e}\n").unwrap();
        assert_eq!(c.entries[0].format, DataFormat::Json);
        assert_eq!(c.entries[0].datadir, "d");
        assert_eq!(
            c.entries[1].locations,
            Locations::Globs(vec!["*.yaml".into()])
        );
        assert_eq!(c.entries[1].datadir, "e");
    }

    #[test]
    fn a_file_without_defaults_or_hierarchy_takes_puppets() {
        let c = load("version: 5\nhierarchy:\n- {name: a, path: x.yaml}\n").unwrap();
        assert_eq!(
            (c.entries[0].format, &*c.entries[0].datadir),
            (DataFormat::Yaml, "data")
        );
        let c = load("version: 5\ndefaults: {datadir: d, data_hash: json_data}\n").unwrap();
        assert_eq!(c.entries.len(), 1);
        let e = &c.entries[0];
        assert_eq!(
            (&*e.name, e.format, &*e.datadir),
            ("Common", DataFormat::Json, "d")
        );
        assert_eq!(e.locations, Locations::Paths(vec!["common.yaml".into()]));
        assert!(
            !c.is_default,
            "a file of its own, not Puppet's built-in one"
        );
    }

    #[test]
    fn what_puppet_refuses_is_refused_in_its_words() {
        let cases = [
            (
                "version: 5\ndefaults: {datadir: d}\nhierarchy:\n- {name: a, path: x}\n",
                "One of 'data_hash', 'lookup_key', 'data_dig', or 'hiera3_backend' must be defined in hierarchy 'a'",
            ),
            (
                "version: 5\nhierarchy:\n- {name: a, path: x, glob: y, data_hash: yaml_data}\n",
                "Only one of 'path', 'paths', 'glob', 'globs', 'uri', 'uris', or 'mapped_paths' can be defined in hierarchy 'a'",
            ),
            (
                "version: 5\nhierarchy:\n- {name: a, lookup_key: hiera_vault}\n",
                "uses 'lookup_key: hiera_vault'",
            ),
            (
                "version: 5\ndefaults: {data_hash: yaml_data}\nhierarchy:\n- {name: a, path: x}\n- {name: a, path: y}\n",
                "Hierarchy name 'a' defined more than once.",
            ),
            (
                "version: 5\ndefaults: {data_hash: yaml_data}\nhierarchy:\n- {name: a, path: x, options: {path: z}}\n",
                "Option key 'path' used in hierarchy 'a' is reserved by Puppet",
            ),
        ];
        for (text, want) in cases {
            // A name given twice is refused when the entries are read.
            let err = match load(text) {
                Ok(config) => config.refused.expect("refused").to_string(),
                Err(e) => e.to_string(),
            };
            assert!(err.contains(want), "{err}\nwanted: {want}");
        }
    }
}
