//! The Hiera 3.10 semantics, as pure functions: no I/O, no async, no clock.
//!
//! Everything that decides an answer lives here, written to the letter of
//! `docs/spec/hiera3-semantics.md`; data files reach it through the
//! [`lookup::DataSource`] trait, so the CLI, the server and the bench share
//! one lookup path.

pub(crate) mod budget;
pub(crate) mod config;
pub(crate) mod datafile;
pub(crate) mod encoding;
pub(crate) mod error;
pub(crate) mod hierarchy;
pub(crate) mod interpolate;
pub mod json;
pub(crate) mod key;
pub(crate) mod lookup;
pub mod merge;
pub mod render;
pub(crate) mod value;
pub mod yaml;

#[cfg(test)]
mod properties;

pub use error::{ErrorClass, HieraError, Result};
pub use value::{Hash, Value};
