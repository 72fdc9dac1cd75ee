//! # hierad
//!
//! A Hiera-compatible data lookup server and command-line tool.
//!
//! Layout, from the bottom up; a module uses only modules above it in this
//! list (docs/architecture.md: what each owns, where a new feature goes):
//! - [`hiera`]: the pure Hiera 3.10 core (values, YAML as Psych reads it,
//!   keys, interpolation, merges, resolution, output formats). No I/O.
//! - [`wire`]: values as JSON on the wire and in the store, every type kept.
//! - [`config_file`]: the small files the server's configuration names
//!   (auth file, Keystone password, TLS material), read safely.
//! - [`configdb`]: the ConfigDB model: environments, components, level
//!   paths, versions, the effective-value fold, the in-memory snapshot.
//! - [`store`]: persistence of the ConfigDB (SQLite); the only SQL.
//! - [`tree`]: a Hiera data tree on disk, read as resources.
//! - [`sample`]: the sample environment (data/) built into the binary.
//! - [`hiera5`]: the pure Hiera 5 core as Puppet 7's `lookup` applies it
//!   (`hierad puppet-lookup`).
//! - [`datafiles`]: Hiera data files on disk, for `hierad lookup`.
//! - [`lookup`]: the one lookup path over the ConfigDB snapshot.
//! - [`cache`]: the server's caches (lookup answers, loaded configurations)
//!   and the admission policy they share.
//! - [`api`]: the REST API's request and response bodies, shared by the
//!   server and the remote client.
//! - [`settings`]: how the daemon runs; every limit and timeout.
//! - [`auth`]: principals, roles, the rule of which route needs which
//!   role; the auth file; checking passwords, tokens, client certificates
//!   and Keystone tokens.
//! - [`secrets`]: hiera-eyaml's `ENC[PKCS7,…]` values: the key files,
//!   blocks encrypted and decrypted, values decrypted for a principal who
//!   may see plaintext.
//! - [`server`]: the HTTP server (axum): routes, errors, metrics, shutdown;
//!   `server/http/conn.rs` owns the connections (accept loop, limits, timeouts),
//!   `server/http/guard.rs` who may do what, `server/http/throttle.rs` what failed
//!   authentications cost, `server/http/proxied.rs` balancers' PROXY headers.
//! - [`ops`]: the ConfigDB operations (create an environment, import a
//!   tree, read what an export writes, get/set/override a key, history,
//!   restore), one trait
//!   with a local (store) and a remote (HTTP) implementation; used by the
//!   CLI, the sample loader and the bench.
//! - [`bench`](mod@bench): load testing (`hierad bench`): synthetic environments, the
//!   load loop, statistics and charts.
//! - [`cli`]: one module per subcommand; the only place that parses flags.

pub(crate) mod api;
pub(crate) mod auth;
pub(crate) mod bench;
pub(crate) mod cache;
pub mod cli;
pub(crate) mod config_file;
pub(crate) mod configdb;
pub(crate) mod datafiles;
pub mod hiera;
pub mod hiera5;
pub(crate) mod lookup;
pub(crate) mod lookup5;
pub(crate) mod ops;
pub(crate) mod sample;
pub(crate) mod secrets;
pub mod server;
pub mod settings;
pub(crate) mod store;
pub mod tree;
pub(crate) mod tree5;
pub mod wire;
