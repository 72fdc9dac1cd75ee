//! How the daemon runs: defaults, then environment variables, then flags
//! (the CLI layer fills the struct; everything below reads only this).

use crate::configdb::Retention;
use crate::hiera::budget::Budget;
use crate::server::http::cross_site::AllowedHosts;
use crate::server::http::proxied::Proxies;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The port `hierad serve` listens on by default.
pub(crate) const DEFAULT_PORT: u16 = 8750;

/// The database `hierad serve` and local `hierad config`/`import` use by
/// default: `hierad.db` in the working directory.
pub(crate) const DEFAULT_DB: &str = "hierad.db";

/// How often a server looks for other processes' writes: well within
/// 100 ms of the write, at one cheap read each.
pub(crate) const DEFAULT_SYNC_EVERY: Duration = Duration::from_millis(20);

/// The default of `--lookup-body-limit`: a lookup names its scope
/// variables and keys, a few kilobytes; a whole Puppet fact set (hundreds
/// of kilobytes at most) still fits.
pub(crate) const DEFAULT_LOOKUP_BODY_LIMIT: u64 = 1024 * 1024;

/// The server's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    pub(crate) listen: SocketAddr,
    pub(crate) db: PathBuf,
    /// The largest request body accepted (413 beyond).
    pub(crate) body_limit: usize,
    /// The largest lookup or hierarchy-registration body accepted (413
    /// beyond): those are parsed whole into trees that take some 70 times
    /// their size, while they are small by nature (the scope a hierarchy
    /// names, some keys).
    pub(crate) lookup_body_limit: usize,
    /// Every request is answered or abandoned within this time.
    pub(crate) request_timeout: Duration,
    /// The sample tree loaded into an empty database on first start.
    pub(crate) sample: Sample,
    /// The lookup-answer cache's budget, in bytes of cached answers.
    pub(crate) cache_bytes: u64,
    /// Each snapshot's memo of answers made from final values
    /// (configdb/memo.rs), in bytes (0: none).
    pub(crate) memo_bytes: usize,
    /// Connections served at once; at the limit a new one closes an idle
    /// one, or waits while every connection is busy.
    pub(crate) max_connections: usize,
    /// A request head must arrive whole within this time once it starts
    /// (or once a new connection is accepted).
    pub(crate) header_timeout: Duration,
    /// A connection with no request for this long is closed.
    pub(crate) idle_timeout: Duration,
    /// The largest request head (request line and headers) answered; one
    /// over twice this is refused by the HTTP layer before routing.
    pub(crate) max_header_bytes: usize,
    /// After a shutdown signal, connections still open after this long are
    /// closed.
    pub(crate) shutdown_timeout: Duration,
    /// What one lookup request may spend on interpolation (422 beyond).
    pub(crate) lookup_budget: Budget,
    /// Lookups too costly to answer on the async workers run on the
    /// blocking pool, at most this many at once, so they neither starve
    /// `/healthz` nor take every core.
    pub(crate) lookup_workers: usize,
    /// Clients that may wait for changes at once (`GET /api/v1/changes`
    /// with `wait=`, or its event stream); beyond, 503.
    pub(crate) change_waiters: usize,
    /// Bytes of lookup bodies that may wait for (or run in) a
    /// `lookup_workers` turn; beyond, 503 (`server/routes/lookup.rs`).
    pub(crate) lookup_queue_bytes: u64,
    /// Bytes of answers made but not yet read by their clients that the
    /// server holds at most; beyond, 503 (`server/state/unread.rs`).
    pub(crate) unread_answers_bytes: u64,
    /// `SO_SNDBUF` of every accepted connection (`None`: the kernel's
    /// autotuning, up to `net.ipv4.tcp_wmem`'s maximum, 4 MiB on Linux),
    /// which bounds what the kernel copies and holds for a client that
    /// does not read (`server/http/conn.rs`).
    pub(crate) send_buffer_bytes: Option<usize>,
    /// The retention of environments that set none of their own.
    pub(crate) retention: Retention,
    /// How often old versions are pruned and the database size measured.
    pub(crate) prune_every: Duration,
    /// How often the server reads the store's generation to publish what
    /// other processes wrote (see `server::sync`).
    pub(crate) sync_every: Duration,
    /// How long a request naming a minimum generation waits for this
    /// replica to reach it (503 after).
    pub(crate) min_generation_wait: Duration,
    /// A server that has not confirmed for this long that it serves the
    /// database's newest generation is stale: /readyz answers 503.
    pub(crate) max_lag: Duration,
    /// The balancers whose connections start with a PROXY protocol header.
    pub(crate) proxies: Proxies,
    /// The names requests may give as their `Host` besides IP addresses
    /// and `localhost` (`server::cross_site`).
    pub(crate) allowed_hosts: AllowedHosts,
    /// Whether the browser console is served at `/ui/` (`--no-ui`: not).
    pub(crate) ui: bool,
    /// The eyaml key files (`crate::secrets`); `None`: values are answered
    /// as stored.
    pub(crate) eyaml: Option<crate::secrets::KeyFiles>,
    /// The bound of the decrypted values kept in memory.
    pub(crate) eyaml_cache_bytes: u64,
}

/// Which sample `hierad serve` loads into an empty database.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Sample {
    /// None (`--no-sample`).
    Off,
    /// The one built into the binary ([`crate::sample`]).
    #[default]
    BuiltIn,
    /// A Hiera data tree on disk (`--sample DIR`).
    Dir(PathBuf),
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            listen: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
            db: PathBuf::from(DEFAULT_DB),
            body_limit: 16 * 1024 * 1024,
            lookup_body_limit: DEFAULT_LOOKUP_BODY_LIMIT as usize,
            request_timeout: Duration::from_secs(30),
            sample: Sample::BuiltIn,
            cache_bytes: 256 * 1024 * 1024,
            memo_bytes: crate::configdb::memo::DEFAULT_BUDGET,
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_header_bytes: 32 * 1024,
            shutdown_timeout: Duration::from_secs(10),
            lookup_budget: Budget::DEFAULT,
            lookup_workers: default_lookup_workers(),
            change_waiters: DEFAULT_CHANGE_WAITERS,
            lookup_queue_bytes: 64 * 1024 * 1024,
            unread_answers_bytes: 256 * 1024 * 1024,
            send_buffer_bytes: Some(DEFAULT_SEND_BUFFER_KIB as usize * 1024),
            retention: Retention::KEEP_ALL,
            prune_every: Duration::from_secs(60),
            sync_every: DEFAULT_SYNC_EVERY,
            min_generation_wait: Duration::from_secs(5),
            max_lag: Duration::from_secs(5),
            proxies: Proxies::default(),
            allowed_hosts: AllowedHosts::default(),
            ui: true,
            eyaml: None,
            eyaml_cache_bytes: 16 * 1024 * 1024,
        }
    }
}

/// The default `--socket-send-buffer-kib`: large enough that a reading
/// client on a LAN is not slowed (bench/documents.sh), small enough that
/// 250 clients that never read cannot stall the server with copies into
/// 4 MiB kernel buffers (bench/LOG.md, "Never-reading readers").
pub(crate) const DEFAULT_SEND_BUFFER_KIB: u32 = 256;
/// The default of `--max-change-waiters` (bench/changes.sh measures
/// what waiters hold).
pub(crate) const DEFAULT_CHANGE_WAITERS: usize = 10_000;

/// One costly lookup per core: they are CPU-bound, more at once would
/// only share the cores more finely.
pub(crate) fn default_lookup_workers() -> usize {
    std::thread::available_parallelism().map_or(2, std::num::NonZero::get)
}

impl Settings {
    /// These settings with at most `n` clients waiting for changes (what
    /// `hierad serve --max-change-waiters` sets; the in-process tests set
    /// it here).
    #[must_use]
    pub fn with_change_waiters(mut self, n: usize) -> Settings {
        self.change_waiters = n;
        self
    }
}
