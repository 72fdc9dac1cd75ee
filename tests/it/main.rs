//! The fast suite: the API in process (routes driven with tower's
//! `oneshot`), the real binary as server and CLI, the bench. Needs nothing
//! but the crate (`cargo test --test it`); the comparisons with the real
//! Hiera, Puppet and Ruby are the oracle suite, tests/oracle.

// Public, as in the oracle suite, which uses a part of it.
#[path = "../common/binary.rs"]
pub mod binary;
#[path = "../common/in_process.rs"]
pub mod in_process;
#[path = "../common/keystone.rs"]
pub mod keystone;
/// A throwaway PostgreSQL server for the `--db postgres://` tests.
#[path = "../common/postgres.rs"]
pub mod pg;
#[path = "../common/pki.rs"]
pub mod pki;
#[path = "../common/server.rs"]
pub mod server;

mod api;
mod auth_file;
mod auth_flood;
mod backup;
mod bench;
mod bench_tls;
mod bodies;
mod budget;
mod changes;
mod cli;
mod cli_client;
mod cli_config;
mod cli_dry_run;
mod cli_tags;
mod conn;
mod crash;
mod cross_site;
mod data_limits;
mod depth;
mod docker;
mod fast_path;
mod generations;
mod health;
mod hiera5_api;
mod hierarchies;
mod house;
mod http;
mod impact;
mod import_environment;
mod import_export;
mod import_export_fs;
mod insight;
mod keystone_faults;
mod logs;
mod migrate;
mod pg_db;
mod pg_faults;
mod pg_tls;
mod plain_on_tls;
mod pressure;
mod proxy_protocol;
mod puppet_lookup;
mod read_only_db;
mod recipes;
mod remembered;
mod replicas;
mod replicas_pg;
mod sample_race;
mod schemas;
mod security;
mod seeds_api;
mod seeds_cli;
mod throttle;
mod unparsed;
