//! The ConfigDB data model and its rules, free of SQL and I/O: components
//! and resource definitions, environments and their hierarchy levels, level
//! paths, key paths, document versions, the effective-value fold, and the
//! in-memory [`Snapshot`] that lookups read.
//!
//! Persistence lives in [`crate::store`]; this module only says what is
//! valid and what a set of documents means.

pub mod error;
pub mod fold;
pub mod keypath;
pub mod level;
pub mod model;
pub mod retention;
pub mod snapshot;

pub use error::{ConfigError, Conflict, ErrorKind, Invalid, NotFound, Stale};
pub use keypath::{KeyPath, KeyPathError};
pub use level::{LevelPath, LevelPathError, LevelValue};
pub use model::{
    Component, ComponentRef, DocAddress, DocKind, Environment, NewComponent, NewEnvironment,
    ResourceDefinition, SnapshotData, StoredDocument, UnreadableDocument, Version, check_depth,
    into_document,
};
pub use retention::Retention;
pub use snapshot::{EffectiveKey, PathReader, Snapshot, StoredDoc};
