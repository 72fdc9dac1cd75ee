//! The routes: each handler parses its request (the environment through
//! [`env::Env`]), calls the one operation (`ops`, `lookup`, the snapshot)
//! and encodes the answer. The ConfigDB API (`config.rs`: components,
//! environments, imports; `documents.rs`: the versioned documents, with
//! `datasource.rs` for addressing them by name or id; `registers.rs`;
//! `content.rs`: resource definitions' content), lookups (`lookup.rs`,
//! with `hierarchies.rs`: hierarchies registered for lookups to name by
//! id), and query parameters (`params.rs`).

pub(crate) mod changes;
pub(crate) mod config;
pub(crate) mod content;
pub(crate) mod datasource;
pub(crate) mod diffs;
pub(crate) mod documents;
pub(crate) mod env;
pub(crate) mod hierarchies;
pub(crate) mod impact;
pub(crate) mod lookup;
pub(crate) mod params;
pub(crate) mod pinned;
pub(crate) mod provenance;
pub(crate) mod registers;
pub(crate) mod rotate;
pub(crate) mod scopes;
pub(crate) mod tags;
pub(crate) mod ui;
