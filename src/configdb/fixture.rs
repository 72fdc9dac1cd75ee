//! Test data for the model's tests: one component `fuel` defining the
//! given resources, and environment 1 using it with the given levels.

use crate::configdb::model::{ResourceDefinition, StoredDocument};
use crate::configdb::{Component, Environment, SnapshotData};

/// Environment 1 with `levels`, its component defining `resources`
/// (ids from 1, in order), holding `documents`; no registers.
pub(crate) fn environment(
    resources: &[&str],
    levels: &[&str],
    documents: Vec<StoredDocument>,
) -> SnapshotData {
    let defs = resources
        .iter()
        .enumerate()
        .map(|(i, n)| ResourceDefinition {
            id: i as i64 + 1,
            name: (*n).into(),
            content: Default::default(),
        })
        .collect();
    SnapshotData {
        components: vec![Component {
            id: 1,
            name: "fuel".into(),
            resource_definitions: defs,
        }],
        environments: vec![Environment {
            hiera: Default::default(),
            id: 1,
            components: vec![1],
            hierarchy_levels: levels.iter().map(|l| (*l).into()).collect(),
        }],
        documents,
        unreadable: Vec::new(),
        unparsed: Vec::new(),
        registers: Vec::new(),
    }
}
