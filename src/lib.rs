//! # hierad
//!
//! A Hiera-compatible data lookup server and command-line tool.
//!
//! Layout:
//! - [`hiera`]: the pure Hiera 3.10 core (values, YAML as Psych reads it,
//!   keys, interpolation, merges, resolution, output formats). No I/O.
//! - [`datafiles`]: Hiera data files on disk, for `hierad lookup`.
//! - [`cli`]: one module per subcommand; the only place that parses flags.

pub mod cli;
pub mod datafiles;
pub mod hiera;
