//! The Hiera 3.10 semantics, as pure functions: no I/O, no async, no clock.
//!
//! Everything that decides an answer lives here, written to the letter of
//! `research/hiera3-semantics.md`; data files reach it through the
//! [`lookup::DataSource`] trait, so the CLI, the server and the bench share
//! one lookup path.

pub mod budget;
pub mod config;
pub mod encoding;
pub mod error;
pub mod hierarchy;
pub mod interpolate;
pub mod json;
pub mod key;
pub mod lookup;
pub mod merge;
pub mod render;
pub mod value;
pub mod yaml;

#[cfg(test)]
mod properties;

pub use error::{ErrorClass, HieraError, Result};
pub use value::{Hash, Value};
