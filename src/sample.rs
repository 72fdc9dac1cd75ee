//! The sample environment (the repository's `data/`, a Fuel node's
//! /etc/hiera tree), built into the binary so that `hierad serve` run from
//! any folder loads it into an empty database; `--sample DIR` loads
//! another tree instead, `--no-sample` none.
//!
//! The files are listed one by one with `include_str!` rather than through
//! a crate such as include_dir: eight small files do not need a
//! dependency, and the test below fails when `data/` and this list part.

use crate::tree::{TreeError, TreeFile, read_texts};
use std::path::Path;

/// The sample's files: (path under `data/`, text).
pub(crate) const FILES: &[(&str, &str)] = &[
    ("astute.yaml", include_str!("../data/astute.yaml")),
    ("globals.yaml", include_str!("../data/globals.yaml")),
    ("hiera.yaml", include_str!("../data/hiera.yaml")),
    (
        "override/plugins.yaml",
        include_str!("../data/override/plugins.yaml"),
    ),
    (
        "override/configuration/cluster.yaml",
        include_str!("../data/override/configuration/cluster.yaml"),
    ),
    (
        "override/configuration/role.yaml",
        include_str!("../data/override/configuration/role.yaml"),
    ),
    (
        "override/node/node-126.test.domain.local.yaml",
        include_str!("../data/override/node/node-126.test.domain.local.yaml"),
    ),
    (
        "override/node/node-127.test.domain.local.yaml",
        include_str!("../data/override/node/node-127.test.domain.local.yaml"),
    ),
    (
        "override/node/node-128.test.domain.local.yaml",
        include_str!("../data/override/node/node-128.test.domain.local.yaml"),
    ),
];

/// The JSON Schema of the data override_resources applies,
/// `schemas/override_resources.json`.
pub(crate) const OVERRIDE_RESOURCES_SCHEMA: &str =
    include_str!("../schemas/override_resources.json");

/// The resources of the sample that hold override_resources data.
pub(crate) fn holds_override_data(resource: &str) -> bool {
    resource.starts_with("override/configuration/")
}

/// Sets the override_resources schema on the `override/configuration/*`
/// resources `component` defines, so a typo there is refused on upload.
///
/// # Errors
///
/// The store's (the component does not exist; the database failed).
pub(crate) fn define_schemas(
    store: &dyn crate::store::Store,
    component: &str,
) -> crate::store::Result<()> {
    let which = crate::configdb::ComponentRef::Name(component.to_owned());
    let schema: serde_json::Value =
        serde_json::from_str(OVERRIDE_RESOURCES_SCHEMA).expect("the shipped schema is JSON");
    let mut content = serde_json::Map::new();
    content.insert(crate::configdb::schema::SCHEMA_KEY.to_owned(), schema);
    for definition in store.component(&which)?.resource_definitions {
        if holds_override_data(&definition.name) {
            store.set_resource_content(&which, &definition.name, &content)?;
        }
    }
    Ok(())
}

/// How logs and errors name the built-in sample.
pub(crate) const NAME: &str = "the built-in sample (data/ of the hierad source)";

/// The built-in sample's documents, as `read_tree` would read `data/`.
///
/// # Errors
///
/// None in a released binary (the test below reads every file).
pub(crate) fn files() -> Result<Vec<TreeFile>, TreeError> {
    read_texts(Path::new("(built-in sample)"), FILES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_sample_is_data_exactly() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        let on_disk = crate::tree::read_tree(&root).unwrap();
        let built_in = files().unwrap();
        let names = |docs: &[TreeFile]| docs.iter().map(|d| d.resource.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&built_in),
            names(&on_disk),
            "data/ and sample::FILES differ"
        );
        for (a, b) in built_in.iter().zip(&on_disk) {
            assert_eq!(a.content, b.content, "{}", a.resource);
        }
    }

    /// The sample's own override data passes the schema put on it.
    #[test]
    fn the_sample_matches_the_override_resources_schema() {
        use crate::configdb::{DocAddress, DocKind, LevelPath, schema};
        let content = serde_json::json!({"schema": serde_json::from_str::<serde_json::Value>(OVERRIDE_RESOURCES_SCHEMA).unwrap()});
        let validator = schema::compile("r", &content).unwrap().unwrap();
        let mut checked = 0;
        for file in files().unwrap() {
            if holds_override_data(&file.resource) {
                let at = DocAddress::new(1, LevelPath::root(), &file.resource, DocKind::Values);
                schema::check(&at, &validator, file.content.data().unwrap()).unwrap();
                checked += 1;
            }
        }
        assert_eq!(checked, 2);
    }
}
