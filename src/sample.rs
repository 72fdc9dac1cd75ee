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
}
