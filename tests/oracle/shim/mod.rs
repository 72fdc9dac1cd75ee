//! The Ruby shim in `hiera/` against the real tools: the `hiera` command
//! with the hierad backend against the yaml backend, Puppet's `lookup`
//! and `apply` through the Hiera 5 functions against `yaml_data`, failure
//! when the server is down, the number of requests a compile makes, and
//! the shim's own Ruby tests, TLS with credentials through a proxy, and
//! the hierad backend beside the yaml backend.

use crate::server;

mod backends;
mod broken;
mod cases;
pub(crate) mod env;
mod fuel;
mod hiera_cli;
pub(crate) mod oracle;
mod pinned;
mod puppet;
mod restart;
mod ruby;
mod tls;
mod upload;
mod use_case_4;
