//! `hiera.yaml` as Hiera 3.10's `Hiera::Config.load` reads it (§10): the
//! defaults, the version check, backends, logger, merge behaviour, and the
//! per-backend sections. Takes the already-loaded YAML value: reading the
//! file is the caller's job.

use super::error::{ErrorClass, HieraError, Result};
use super::merge::MergeSpec;
use super::render::ruby::inspect;
use super::value::{Hash, Value};

/// The data backends Hiera 3.10 ships.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum BackendKind {
    Yaml,
    Json,
}

impl BackendKind {
    /// The data file extension, also the backend's config section name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BackendKind::Yaml => "yaml",
            BackendKind::Json => "json",
        }
    }

    /// The name Hiera's debug messages use (`Looking up k in YAML backend`).
    pub(crate) fn display(self) -> &'static str {
        match self {
            BackendKind::Yaml => "YAML",
            BackendKind::Json => "JSON",
        }
    }
}

/// Where the console logger's messages go: nowhere, or stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LoggerKind {
    Console,
    Noop,
}

/// A loaded Hiera 3 configuration.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    /// `:backends:` in order, with the name as configured: Hiera keeps one
    /// backend instance per name, so `[yaml, YAML]` consults YAML twice.
    pub(crate) backends: Vec<(String, BackendKind)>,
    /// `:hierarchy:` as written (String, nested Array, nil, …).
    pub(crate) hierarchy: Value,
    /// `:merge_behavior:` and `:deep_merge_options:`.
    pub(crate) merge: MergeSpec,
    pub(crate) logger: LoggerKind,
    /// The whole merged configuration, for the per-backend sections.
    raw: Hash,
}

fn sym(name: &str) -> Value {
    Value::Symbol(name.to_owned())
}

impl Config {
    /// `Config.load` of a file whose YAML loaded as `loaded`. Returns the
    /// configuration and the warnings Hiera prints while loading it (they
    /// go to stderr whatever the logger: Hiera warns before switching).
    ///
    /// # Errors
    ///
    /// What `Hiera.new` raises, which the `hiera` command reports as
    /// `Failed to start Hiera: <Class>: <message>`.
    pub(crate) fn load(loaded: Value) -> Result<(Config, Vec<String>)> {
        let mut raw = Hash::default();
        raw.insert(sym("backends"), Value::Array(vec![Value::str("yaml")]));
        raw.insert(
            sym("hierarchy"),
            Value::Array(vec![
                Value::str("nodes/%{::trusted.certname}"),
                Value::str("common"),
            ]),
        );
        raw.insert(sym("merge_behavior"), sym("native"));
        match loaded {
            Value::Nil | Value::Bool(false) => {}
            Value::Hash(file) => {
                check_version(&file)?;
                for (k, v) in file {
                    raw.insert(k, v);
                }
            }
            other => return Err(not_a_hash(&other)),
        }
        let mut warnings = Vec::new();
        let logger = match raw.get(&sym("logger")) {
            None => LoggerKind::Console,
            Some(name) => logger_kind(&ruby_to_s(name), &mut warnings),
        };
        let merge = MergeSpec::from_config(
            raw.get(&sym("merge_behavior")),
            raw.get(&sym("deep_merge_options")),
        )?;
        let mut names = Vec::new();
        flatten_into(raw.get(&sym("backends")).unwrap_or(&Value::Nil), &mut names);
        let backends = names.iter().map(backend_kind).collect::<Result<_>>()?;
        let hierarchy = raw.get(&sym("hierarchy")).cloned().unwrap_or(Value::Nil);
        Ok((
            Config {
                backends,
                hierarchy,
                merge,
                logger,
                raw,
            },
            warnings,
        ))
    }

    /// `Config[<backend>][:datadir]` when it is set (truthy).
    ///
    /// # Errors
    ///
    /// The `TypeError` Ruby raises when the backend section is a String or
    /// an Array (indexed with a Symbol).
    pub(crate) fn datadir(&self, backend: BackendKind) -> Result<Option<&Value>> {
        // Asked on every lookup: a key borrowed from the configuration, not
        // a Symbol built each time.
        let section = self
            .raw
            .iter()
            .find(|(k, _)| matches!(k, Value::Symbol(s) if s == backend.name()))
            .map(|(_, v)| v);
        match section {
            Some(Value::Hash(section)) => Ok(section
                .iter()
                .find(|(k, _)| matches!(k, Value::Symbol(s) if s == "datadir"))
                .map(|(_, v)| v)
                .filter(|v| v.is_truthy())),
            Some(Value::String(_) | Value::Array(_) | Value::Symbol(_)) => Err(HieraError::new(
                ErrorClass::TypeError,
                "no implicit conversion of Symbol into Integer",
            )),
            _ => Ok(None),
        }
    }
}

/// `version = config['version'] || config[:version] || 3`, refused from 4.
fn check_version(file: &Hash) -> Result<()> {
    let version = [Value::str("version"), sym("version")]
        .iter()
        .filter_map(|k| file.get(k))
        .find(|v| v.is_truthy());
    let too_new = match version {
        None => false,
        Some(Value::Int(n)) => *n >= 4,
        Some(Value::BigInt(n)) => n.sign() == num_bigint::Sign::Plus,
        Some(Value::Float(f)) => *f >= 4.0,
        Some(v @ (Value::String(_) | Value::Symbol(_))) => {
            return Err(HieraError::new(
                ErrorClass::ArgumentError,
                format!("comparison of {} with 4 failed", v.class_name()),
            ));
        }
        Some(v) => {
            return Err(HieraError::new(
                ErrorClass::NoMethodError,
                format!(
                    "undefined method `>=' for {}:{}",
                    inspect(v),
                    v.class_name()
                ),
            ));
        }
    };
    if too_new {
        let v = version.map(ruby_to_s).unwrap_or_default();
        return Err(HieraError::new(
            ErrorClass::RuntimeError,
            format!(
                "v{v} hiera.yaml is only to be used inside an environment or a module and cannot be given to the global hiera"
            ),
        ));
    }
    Ok(())
}

/// What `config['version']` does to a top level that is not a Hash.
fn not_a_hash(v: &Value) -> HieraError {
    match v {
        Value::String(s) | Value::Symbol(s) if s.contains("version") => HieraError::new(
            ErrorClass::ArgumentError,
            format!("comparison of {} with 4 failed", v.class_name()),
        ),
        Value::String(_) | Value::Symbol(_) => HieraError::new(
            ErrorClass::TypeError,
            "no implicit conversion of Symbol into Integer",
        ),
        Value::Array(_) | Value::Int(_) | Value::BigInt(_) => HieraError::new(
            ErrorClass::TypeError,
            "no implicit conversion of String into Integer",
        ),
        other => HieraError::new(
            ErrorClass::NoMethodError,
            format!(
                "undefined method `[]' for {}:{}",
                inspect(other),
                other.class_name()
            ),
        ),
    }
}

fn ruby_to_s(v: &Value) -> String {
    super::render::ruby::to_s(v)
}

/// `Hiera.logger = name`: console and noop exist; puppet falls back to
/// console without Puppet; anything else warns and uses console.
fn logger_kind(name: &str, warnings: &mut Vec<String>) -> LoggerKind {
    match name {
        "noop" => LoggerKind::Noop,
        "console" => LoggerKind::Console,
        "puppet" => {
            // FallbackLogger rejects it when Puppet is not loaded, as under
            // the `hiera` command.
            warnings.push(
                "Not using Hiera::Puppet_logger. It does not report itself to be suitable."
                    .to_owned(),
            );
            LoggerKind::Console
        }
        "fallback" => {
            warnings.push(
                "Failed to load fallback logger: NameError: uninitialized constant Hiera::Fallback_logger"
                    .to_owned(),
            );
            LoggerKind::Console
        }
        other => {
            warnings.push(format!(
                "Failed to load {other} logger: LoadError: cannot load such file -- hiera/{other}_logger"
            ));
            LoggerKind::Console
        }
    }
}

/// `[x].flatten`.
fn flatten_into(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| flatten_into(i, out)),
        other => out.push(other.clone()),
    }
}

/// `Config.load_backends`: `require "hiera/backend/#{name.downcase}_backend"`.
fn backend_kind(name: &Value) -> Result<(String, BackendKind)> {
    let (Value::String(s) | Value::Symbol(s)) = name else {
        return Err(HieraError::new(
            ErrorClass::NoMethodError,
            format!(
                "undefined method `downcase' for {}:{}",
                inspect(name),
                name.class_name()
            ),
        ));
    };
    // Ruby's downcase is Unicode-aware; backend names are ASCII in practice.
    match s.to_lowercase().as_str() {
        "yaml" => Ok((s.clone(), BackendKind::Yaml)),
        "json" => Ok((s.clone(), BackendKind::Json)),
        // Hiera loads hiera-eyaml's backend where it is installed; saying
        // it is missing would send the reader looking for a gem.
        "eyaml" => Err(HieraError::new(
            ErrorClass::RuntimeError,
            format!(
                "Cannot load backend {s}: hierad does not read hiera-eyaml's Hiera 3 backend; it reads Hiera 5's eyaml_lookup_key (docs/hiera5.md), and a server decrypts the ENC[PKCS7,…] blocks of stored data (docs/security.md)"
            ),
        )),
        lower => Err(HieraError::new(
            ErrorClass::RuntimeError,
            format!(
                "Cannot load backend {s}: cannot load such file -- hiera/backend/{lower}_backend"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    fn load(v: Value) -> Result<(Config, Vec<String>)> {
        Config::load(v)
    }

    #[test]
    fn defaults() {
        for empty in [Value::Nil, Value::Bool(false), Value::Hash(Hash::default())] {
            let (c, w) = load(empty).unwrap();
            assert_eq!(c.backends, [("yaml".to_owned(), BackendKind::Yaml)]);
            assert_eq!(
                c.hierarchy,
                Value::Array(vec!["nodes/%{::trusted.certname}".into(), "common".into()])
            );
            assert_eq!(c.logger, LoggerKind::Console);
            assert!(w.is_empty());
        }
    }

    #[test]
    fn string_keys_are_ignored() {
        let (c, _) = load(Value::Hash(
            rhash! {"backends" => "json", "hierarchy" => "x"},
        ))
        .unwrap();
        assert_eq!(c.backends, [("yaml".to_owned(), BackendKind::Yaml)]);
    }

    #[test]
    fn backends_and_logger() {
        let mut h = Hash::default();
        h.insert(
            sym("backends"),
            Value::Array(vec!["YAML".into(), Value::Array(vec![sym("json")])]),
        );
        h.insert(sym("logger"), "nope".into());
        let (c, w) = load(Value::Hash(h)).unwrap();
        assert_eq!(
            c.backends,
            [
                ("YAML".to_owned(), BackendKind::Yaml),
                ("json".to_owned(), BackendKind::Json)
            ]
        );
        assert_eq!(
            w,
            ["Failed to load nope logger: LoadError: cannot load such file -- hiera/nope_logger"]
        );
    }

    #[test]
    fn errors() {
        let with = |k: Value, v: Value| {
            let mut h = Hash::default();
            h.insert(k, v);
            Value::Hash(h)
        };
        let cases: &[(Value, ErrorClass, &str)] = &[
            (
                with("version".into(), 5.into()),
                ErrorClass::RuntimeError,
                "v5 hiera.yaml is only to be used inside an environment or a module and cannot be given to the global hiera",
            ),
            (
                with(sym("version"), 4.into()),
                ErrorClass::RuntimeError,
                "v4 hiera.yaml is only to be used inside an environment or a module and cannot be given to the global hiera",
            ),
            (
                Value::Array(vec![]),
                ErrorClass::TypeError,
                "no implicit conversion of String into Integer",
            ),
            (
                with(sym("backends"), "foo".into()),
                ErrorClass::RuntimeError,
                "Cannot load backend foo: cannot load such file -- hiera/backend/foo_backend",
            ),
            (
                with(sym("backends"), "eyaml".into()),
                ErrorClass::RuntimeError,
                "Cannot load backend eyaml: hierad does not read hiera-eyaml's Hiera 3 backend; it reads Hiera 5's eyaml_lookup_key (docs/hiera5.md), and a server decrypts the ENC[PKCS7,…] blocks of stored data (docs/security.md)",
            ),
        ];
        for (v, class, message) in cases {
            let err = load(v.clone()).unwrap_err();
            assert_eq!(
                (err.class, err.message.as_str()),
                (*class, *message),
                "{v:?}"
            );
        }
    }
}
