//! # hierad
//!
//! A Hiera-compatible data lookup server and command-line tool.
//!
//! Layout:
//! - [`hiera`]: the pure Hiera 3.10 core (values, YAML as Psych reads it,
//!   keys, interpolation, merges, resolution, output formats). No I/O.
//! - [`configdb`]: the ConfigDB model: environments, components, level
//!   paths, versions, the effective-value fold, the in-memory snapshot.
//! - [`store`]: persistence of the ConfigDB (SQLite); the only SQL.
//! - [`ops`]: the ConfigDB operations (create an environment, import a
//!   tree, get/set a document or a key, history, restore), one trait with
//!   a local (store) and a remote (HTTP) implementation; used by the CLI,
//!   the sample loader and the bench.
//! - [`api`]: the REST API's request and response bodies, shared by the
//!   server and the remote client.
//! - [`lookup`]: the one lookup path over the ConfigDB snapshot.
//! - [`server`]: the HTTP server (axum): routes, errors, metrics, shutdown.
//! - [`settings`]: how the daemon runs.
//! - [`tree`]: a Hiera data tree on disk, read as resources.
//! - [`wire`]: values as JSON on the wire and in the store, every type kept.
//! - [`datafiles`]: Hiera data files on disk, for `hierad lookup`.
//! - [`bench`]: load testing (`hierad bench`): synthetic environments, the
//!   load loop, statistics and charts.
//! - [`cli`]: one module per subcommand; the only place that parses flags.

pub mod api;
pub mod bench;
pub mod cache;
pub mod cli;
pub mod configdb;
pub mod datafiles;
pub mod hiera;
pub mod lookup;
pub mod ops;
pub mod server;
pub mod settings;
pub mod store;
pub mod tree;
pub mod wire;
