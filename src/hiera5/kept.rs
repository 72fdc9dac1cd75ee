//! What Puppet's `yaml_data` and `json_data` make of a data file Hiera 3
//! could not read: a file a store keeps unparsed (docs/api.md, "Files that
//! do not parse") is known by Hiera 3's error for it, and Puppet reads the
//! same file with other words, or, for YAML that is no Hash, with a
//! warning and no data. Puppet 7's pops/lookup/data_hash_function_provider.rb
//! and functions/yaml_data.rb, json_data.rb
//! (<https://github.com/puppetlabs/puppet/tree/7.x/lib/puppet/functions>).

use crate::hiera::HieraError;
use crate::hiera::error::ErrorClass;

/// How Puppet reads a kept file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeptRead {
    /// The lookup fails with this `Puppet::DataBinding::LookupError` text.
    Fails(String),
    /// Puppet warns this and reads no data from the file.
    Empty { warning: String },
}

/// Puppet's reading of the file at `path` (as Puppet names it), which
/// Hiera 3 refused with `class` and `message`.
pub fn kept_read(path: &str, class: ErrorClass, message: &str) -> KeptRead {
    // Hiera 3's "Data retrieved from <file> is <Class> not Hash": the file
    // parsed, to something that is no Hash.
    let got = (class == ErrorClass::TypeError)
        .then(|| message.strip_suffix(" not Hash")?.rsplit_once(" is "))
        .flatten()
        .map(|(_, got)| got);
    if path.ends_with(".json") {
        return KeptRead::Fails(match got {
            Some(got) => format!(
                "Value returned from data_hash function 'json_data', when using location \
                 '{path}', has wrong type, expects a Hash value, got {got}"
            ),
            None => format!("Unable to parse ({path}): {message}"),
        });
    }
    match got {
        Some(_) => KeptRead::Empty {
            warning: format!("{path}: file does not contain a valid yaml hash"),
        },
        None => KeptRead::Fails(yaml_error(path, &HieraError::new(class, message))),
    }
}

/// yaml_data's error for a YAML file at `path` that Psych refused with
/// `error`: "Unable to parse " and the message as Puppet's safe_load
/// words it, naming the file (puppet/util/yaml.rb). Psych names the file
/// it was given where hierad's reader, given the text alone, says
/// `(<unknown>)`; a disallowed class gets the name from Puppet.
pub(crate) fn yaml_error(path: &str, error: &HieraError) -> String {
    if error.class == ErrorClass::PsychDisallowedClass {
        return format!("Unable to parse ({path}): {}", error.message);
    }
    format!(
        "Unable to parse {}",
        error
            .message
            .replacen("(<unknown>)", &format!("({path})"), 1)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_that_does_not_parse_fails_naming_the_file() {
        assert_eq!(
            kept_read(
                "/env/data/a.yaml",
                ErrorClass::PsychSyntaxError,
                "(<unknown>): did not find expected node content while parsing a flow node at line 1 column 5"
            ),
            KeptRead::Fails(
                "Unable to parse (/env/data/a.yaml): did not find expected node content while \
                 parsing a flow node at line 1 column 5"
                    .into()
            )
        );
    }

    #[test]
    fn a_disallowed_class_is_named_with_the_file_as_puppet_names_it() {
        assert_eq!(
            kept_read(
                "data/d.yaml",
                ErrorClass::PsychDisallowedClass,
                "Tried to load unspecified class: Date"
            ),
            KeptRead::Fails(
                "Unable to parse (data/d.yaml): Tried to load unspecified class: Date".into()
            )
        );
    }

    #[test]
    fn yaml_that_is_no_hash_is_empty_with_a_warning() {
        assert_eq!(
            kept_read(
                "data/list.yaml",
                ErrorClass::TypeError,
                "Data retrieved from data/list.yaml is Array not Hash"
            ),
            KeptRead::Empty {
                warning: "data/list.yaml: file does not contain a valid yaml hash".into()
            }
        );
    }

    #[test]
    fn json_fails_either_way() {
        assert_eq!(
            kept_read(
                "data/x.json",
                ErrorClass::TypeError,
                "Data retrieved from data/x.json is Integer not Hash"
            ),
            KeptRead::Fails(
                "Value returned from data_hash function 'json_data', when using location \
                 'data/x.json', has wrong type, expects a Hash value, got Integer"
                    .into()
            )
        );
        assert_eq!(
            kept_read(
                "data/x.json",
                ErrorClass::JsonParserError,
                "unexpected token at '{'"
            ),
            KeptRead::Fails("Unable to parse (data/x.json): unexpected token at '{'".into())
        );
    }
}
