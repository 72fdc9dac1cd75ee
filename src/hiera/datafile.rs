//! A data file's bytes as Hiera 3.10's yaml and json backends read them:
//! `Filecache#read_file(path, Hash) { |data| YAML.load(data) || {} }` (or
//! `JSON.parse`), the one reading shared by `hierad lookup` over files and
//! by documents the store keeps unparsed (`configdb::unparsed`), so both
//! fail with the same error.

use super::config::BackendKind;
use super::error::{ErrorClass, HieraError, Result};
use super::value::{Hash, Value};
use super::{encoding, json, yaml};

/// The data of the file at `path` (named in errors as Hiera names it)
/// holding `bytes`, read by `backend`.
///
/// # Errors
///
/// What Hiera raises reading it: Psych's or JSON's parse error, or the
/// `TypeError` of a top level that is not a Hash ([`data_from_loaded`]).
pub(crate) fn read(backend: BackendKind, path: &str, bytes: &[u8]) -> Result<Hash> {
    let loaded = match backend {
        BackendKind::Yaml => yaml::load(&encoding::yaml_text(bytes)?)?,
        // Ruby's JSON keeps invalid UTF-8 inside strings; hierad's
        // Strings are UTF-8, so such bytes become U+FFFD.
        BackendKind::Json => {
            let text = String::from_utf8_lossy(bytes);
            let loaded = json::load(text.strip_prefix('\u{feff}').unwrap_or(&text))?;
            // The json backend has no `|| {}`: `null` is no Hash either.
            return match loaded {
                Value::Hash(h) => Ok(h),
                other => Err(not_a_hash(path, &other)),
            };
        }
    };
    data_from_loaded(loaded, path)
}

/// The backend that reads the file at `path`: json for `*.json`, else yaml
/// (the extension is what Hiera's `datafile` appends for each backend).
pub(crate) fn backend_of(path: &str) -> BackendKind {
    if path.ends_with(".json") {
        BackendKind::Json
    } else {
        BackendKind::Yaml
    }
}

/// The top level of a data file as the backend accepts it: `YAML.load(text)
/// || {}` (nil/false are empty data), else it must be a Hash.
///
/// # Errors
///
/// `TypeError "Data retrieved from <path> is <Class> not Hash"`.
pub(crate) fn data_from_loaded(loaded: Value, path: &str) -> Result<Hash> {
    match loaded {
        Value::Hash(h) => Ok(h),
        Value::Nil | Value::Bool(false) => Ok(Hash::default()),
        other => Err(not_a_hash(path, &other)),
    }
}

/// Hiera's `Filecache#read_file` refusing what is not a Hash.
fn not_a_hash(path: &str, loaded: &Value) -> HieraError {
    HieraError::new(
        ErrorClass::TypeError,
        format!(
            "Data retrieved from {path} is {} not Hash",
            loaded.class_name()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_path_hiera_names() {
        let yaml = |text: &str| read(BackendKind::Yaml, "data/x.yaml", text.as_bytes());
        assert_eq!(yaml("a: 1\n").unwrap().len(), 1);
        assert!(yaml("").unwrap().is_empty());
        let e = yaml("- 1\n").unwrap_err();
        assert_eq!(
            (e.class, e.message.as_str()),
            (
                ErrorClass::TypeError,
                "Data retrieved from data/x.yaml is Array not Hash"
            )
        );
        assert_eq!(
            yaml("a: [1\n").unwrap_err().class,
            ErrorClass::PsychSyntaxError
        );
        let e = read(BackendKind::Yaml, "x.yaml", b"a: \xff\n").unwrap_err();
        assert_eq!(e.class, ErrorClass::PsychSyntaxError);
        let e = read(BackendKind::Json, "x.json", b"null").unwrap_err();
        assert_eq!(e.message, "Data retrieved from x.json is NilClass not Hash");
        assert_eq!(backend_of("a/b.json"), BackendKind::Json);
        assert_eq!(backend_of("a/b.yaml"), BackendKind::Yaml);
    }
}
