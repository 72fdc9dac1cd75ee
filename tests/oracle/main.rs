//! The oracle suite: hierad against the real tools it must agree with,
//! Hiera 3.10 on Ruby (with deep_merge), Puppet 7, openssl and Keystone. Every test
//! here needs them and fails, naming the missing tool, without them
//! (`bash .ci/run` installs them). What needs only the crate's own binary
//! is the fast suite, tests/it.

// Shared with the fast suite, which uses all of it and so has the
// compiler check it; public here, where the shim and server suites use a part.
#[path = "../common/binary.rs"]
pub mod binary;
#[path = "../common/keystone.rs"]
pub mod keystone;
#[path = "../common/server.rs"]
pub mod server;
mod shell;
mod tagged;
mod tools;

mod differential;
mod export_hiera;
mod eyaml;
mod eyaml_rotate;
mod eyaml_server;
mod hiera5;
mod json_ruby;
mod keystone_real;
mod merge_ruby;
mod overrides;
mod render_ruby;
mod round_trip;
mod server_differential;
mod shim;
mod yaml_psych;
