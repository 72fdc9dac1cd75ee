//! The ConfigDB data model and its rules, free of SQL and I/O: components
//! and resource definitions, environments and their hierarchy levels, level
//! paths, key paths, document versions, the effective-value fold, and the
//! in-memory [`Snapshot`] that lookups read.
//!
//! Persistence lives in [`crate::store`]; this module only says what is
//! valid and what a set of documents means.

pub(crate) mod diff;
pub(crate) mod error;
#[cfg(test)]
pub(crate) mod fixture;
pub(crate) mod fold;
pub(crate) mod impact;
pub(crate) mod keypath;
pub(crate) mod level;
pub(crate) mod memo;
pub(crate) mod model;
pub(crate) mod provenance;
pub(crate) mod registers;
pub(crate) mod retention;
pub(crate) mod schema;
pub(crate) mod snapshot;
pub(crate) mod tags;
pub(crate) mod unparsed;

pub(crate) use error::{
    ConfigError, Conflict, ErrorKind, Gone, Invalid, NotFound, OverQuota, Stale, Truncated,
};
pub(crate) use keypath::KeyPath;
pub(crate) use level::{Interpolated, LevelPath, LevelPathError, LevelValue, split_once_at};
pub(crate) use model::{
    Component, ComponentRef, DocAddress, DocKind, Environment, HieraVersion, NewComponent,
    NewEnvironment, ResourceDefinition, SnapshotData, StoredDocument, UnreadableDocument, Version,
    check_depth, into_document,
};
pub(crate) use registers::RegisterRow;
pub(crate) use retention::Retention;
pub(crate) use snapshot::{Encoded, PathReader, Snapshot, StoredDoc};
pub(crate) use tags::Tag;
