//! A layer's data files as Puppet's `yaml_data` and `json_data` read
//! them (puppet/functions/yaml_data.rb, json_data.rb), and hiera-eyaml's
//! `eyaml_lookup_key` (its blocks decrypted as values are found): parsed once per
//! lookup, kept files read as Puppet reads them, a module's keys checked.

use super::{Files, LOOKUP_OPTIONS, Lookup};
use crate::hiera::{Hash, Value};
use crate::hiera5::config::DataFormat;
use crate::hiera5::error::{Error, Result};
use std::rc::Rc;

impl<F: Files> Lookup<'_, F> {
    /// A data file's Hash, parsed once.
    pub(super) fn data(
        &self,
        path: &str,
        format: DataFormat,
        module: Option<&str>,
    ) -> Result<Rc<Hash>> {
        if let Some(known) = self.data.borrow().get(path) {
            return known.clone();
        }
        let parsed = self.parse(path, format, module);
        self.data
            .borrow_mut()
            .insert(path.to_owned(), parsed.clone());
        parsed
    }

    fn parse(&self, path: &str, format: DataFormat, module: Option<&str>) -> Result<Rc<Hash>> {
        match self.files.unparsable(path) {
            Some(crate::hiera5::KeptRead::Fails(reason)) => return Err(Error::Data(reason)),
            Some(crate::hiera5::KeptRead::Empty { warning }) => {
                self.warn(warning);
                return Ok(Rc::new(Hash::default()));
            }
            None => {}
        }
        let parsed = self.files.parsed(path);
        let text = match parsed {
            Some(_) => String::new(),
            None => self.files.read(path).unwrap_or_default(),
        };
        let mut hash = match format {
            // eyaml_lookup_key reads its files as yaml_data does.
            DataFormat::Yaml | DataFormat::Eyaml => {
                match parsed.map_or_else(|| crate::hiera::yaml::load_puppet(&text), Ok) {
                    Ok(Value::Hash(h)) => symkeys_to_string(h),
                    Ok(_) => {
                        self.warn(format!("{path}: file does not contain a valid yaml hash"));
                        Hash::default()
                    }
                    Err(e) => return Err(Error::Data(crate::hiera5::kept::yaml_error(path, &e))),
                }
            }
            DataFormat::Json => match parsed.map_or_else(|| crate::hiera::json::load(&text), Ok) {
                Ok(Value::Hash(h)) => h,
                Ok(other) => {
                    return Err(Error::Data(format!(
                        "Value returned from data_hash function 'json_data', when using location '{path}', has wrong type, expects a Hash value, got {}",
                        other.class_name()
                    )));
                }
                Err(e) => {
                    return Err(Error::Data(format!(
                        "Unable to parse ({path}): {}",
                        e.message
                    )));
                }
            },
        };
        // Only a data_hash function's Hash is checked for the module's
        // keys (`validate_data_hash`); a lookup_key function is asked
        // only for keys of the module's.
        if let Some(m) = module.filter(|_| format != DataFormat::Eyaml) {
            let prefix = format!("{m}::");
            let before = hash.len();
            hash.retain(|k, _| {
                k.as_str()
                    .is_some_and(|k| k == LOOKUP_OPTIONS || k.starts_with(&prefix))
            });
            if hash.len() != before {
                self.warn(format!(
                    "Module '{m}': Value returned from data_hash function '{}', when using location '{path}', must use keys qualified with the name of the module",
                    format.function()
                ));
            }
        }
        Ok(Rc::new(hash))
    }
}

/// `HieraConfig.symkeys_to_string`: Symbol keys become Strings, at every depth.
fn symkeys_to_string(h: Hash) -> Hash {
    fn value(v: Value) -> Value {
        match v {
            Value::Hash(h) => Value::Hash(symkeys_to_string(h)),
            Value::Array(items) => Value::Array(items.into_iter().map(value).collect()),
            other => other,
        }
    }
    h.into_iter()
        .map(|(k, v)| {
            let k = match k {
                Value::Symbol(s) => Value::String(s),
                other => other,
            };
            (k, value(v))
        })
        .collect()
}
