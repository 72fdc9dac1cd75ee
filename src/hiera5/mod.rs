//! The Hiera 5 semantics as Puppet 7's `lookup` applies them, as pure
//! functions: no I/O, no clock. Files reach it through the [`Files`]
//! trait, so the CLI (`hierad puppet-lookup`) and later the server share
//! one lookup path.
//!
//! Ported from Puppet 7's own code, cited per module:
//! /usr/lib/ruby/vendor_ruby/puppet/pops/lookup/*.rb and
//! puppet/pops/merge_strategy.rb (Debian's puppet package), also at
//! <https://github.com/puppetlabs/puppet/tree/7.x/lib/puppet/pops/lookup>.
//! The values, YAML and JSON readers and the deep merge are the Hiera 3
//! core's: Puppet reads the same Ruby objects and merges with the same
//! deep_merge gem. What Puppet reads differently (YAML aliases) has its
//! own reader (`hiera::yaml::load_puppet`).

mod config;
mod error;
mod explain;
mod glob;
mod interpolate;
mod kept;
mod key;
mod layout;
mod lookup;
mod merge;
mod options;
mod scope;

pub use config::{Config, DataFormat};
pub use error::{Error, Result};
pub use explain::Explanation;
pub use glob::glob_regex;
pub use kept::{KeptRead, kept_read};
pub use layout::{
    CONFIG_RESOURCE, Form, Layout, MODULES_DIR, ORIGIN_RESOURCE, Place, Source, Unexpressible,
    config_module, module_config_resource,
};
pub use lookup::{EyamlKeys, Files, Lookup, Tree};
pub use merge::Strategy;
pub use scope::Scope;
