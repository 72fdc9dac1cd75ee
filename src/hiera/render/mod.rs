//! How the `hiera` command prints an answer: Ruby (`puts`/`pp`), JSON
//! (`JSON.dump`) and YAML (`to_yaml`), byte for byte as Ruby 3.1 does.
//! Pure functions over [`Value`](crate::hiera::Value); no I/O.
//!
//! - [`ruby`]: `Float#to_s`, `inspect`, `to_s` (interpolation), `pp`.
//! - [`json`]: `JSON.dump` (json 2.6.1).
//! - [`yaml`]: `to_yaml` (Psych 4.0.3 over libyaml 0.2.5).

pub mod json;
mod libyaml;
mod prettyprint;
pub mod ruby;
pub mod unicode;
pub mod yaml;
