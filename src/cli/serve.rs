//! `hierad serve`: the ConfigDB and lookup server.

use crate::configdb::Retention;
use crate::hiera::budget::Budget;
use crate::server::http::proxied::Proxies;
use crate::server::{self};
use crate::settings::{DEFAULT_DB, DEFAULT_PORT, Sample, Settings, default_lookup_workers};
use crate::store::Quotas;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Serve the ConfigDB REST API and Hiera lookups over HTTP.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Address to listen on (port 0: any free port; the bound address is
    /// printed as `listening on http://ADDR`).
    #[arg(long, env = "HIERAD_LISTEN", default_value_t = SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)))]
    pub(crate) listen: SocketAddr,
    /// The database: a SQLite file (created if missing), or a PostgreSQL
    /// URL, postgres://USER[:PASSWORD]@HOST[:PORT]/DB (the password may
    /// come from PGPASSWORD instead; docs/deploy.md)
    #[arg(long, env = "HIERAD_DB", default_value = DEFAULT_DB)]
    pub(crate) db: PathBuf,
    /// A Hiera data tree loaded as environment 1 when the database is
    /// empty, instead of the sample built into the binary (the Fuel tree
    /// of the repository's data/).
    #[arg(long, value_name = "DIR", conflicts_with = "no_sample")]
    pub(crate) sample: Option<PathBuf>,
    /// Do not load any sample into an empty database.
    #[arg(long)]
    pub(crate) no_sample: bool,
    /// Largest request body accepted, in bytes (at least 1024).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1024..), default_value_t = 16 * 1024 * 1024)]
    pub(crate) body_limit: u64,
    /// Largest lookup or hierarchy-registration body accepted, in bytes
    /// (at least 1024, at most --body-limit). Such a body is parsed whole,
    /// into some 70 times its size in memory.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1024..), default_value_t = crate::settings::DEFAULT_LOOKUP_BODY_LIMIT)]
    pub(crate) lookup_body_limit: u64,
    /// The lookup-answer cache's budget in MiB of request and answer
    /// bodies (0: no cache). Answers are cached from their second request.
    #[arg(long, env = "HIERAD_CACHE_MIB", default_value_t = 256)]
    pub(crate) cache_mib: u64,
    /// The budget in MiB of each snapshot's memo of answers made from
    /// final values, whatever the request (0: none): merged Hashes of
    /// hash lookups keyed by the stored values merged, array lookups'
    /// answers over such values, and the encoded bodies of large
    /// answers. Emptied by every write.
    #[arg(long, env = "HIERAD_MEMO_MIB", default_value_t = 64)]
    pub(crate) memo_mib: usize,
    /// Every request is answered within this time, or gets 408 (`30s`,
    /// `500ms`, `1m`).
    #[arg(long, value_parser = positive_duration, default_value = "30s")]
    pub(crate) request_timeout: Duration,
    /// Connections served at once. At the limit a new connection closes
    /// the longest-open idle one (between requests, or still sending its
    /// head); while every connection is busy with a request, new ones wait.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000), default_value_t = 1024)]
    pub(crate) max_connections: u32,
    /// A request head must arrive whole within this time of its first byte
    /// (or of the connection being accepted); then the connection closes.
    #[arg(long, value_parser = positive_duration, default_value = "10s")]
    pub(crate) header_timeout: Duration,
    /// A connection with no request in progress for this long is closed.
    #[arg(long, value_parser = positive_duration, default_value = "60s")]
    pub(crate) idle_timeout: Duration,
    /// Largest request head (request line and headers) answered, in bytes:
    /// 414 or 431 beyond it.
    #[arg(long, value_parser = clap::value_parser!(u32).range(4096..=1_048_576), default_value_t = 32 * 1024)]
    pub(crate) max_header_bytes: u32,
    /// After SIGTERM or Ctrl-C, connections still open after this long are
    /// closed and the server exits.
    #[arg(long, value_parser = super::bench::parse_duration, default_value = "10s")]
    pub(crate) shutdown_timeout: Duration,
    /// Interpolation steps one lookup request may take: each %{} token
    /// evaluated, hiera() and alias() lookups included. Beyond: 422.
    #[arg(long, env = "HIERAD_BUDGET_STEPS", default_value_t = Budget::DEFAULT.steps)]
    pub(crate) budget_steps: u64,
    /// Bytes of values interpolation may build for one lookup request
    /// (Strings it makes, values alias() copies). Beyond: 422.
    #[arg(long, env = "HIERAD_BUDGET_BYTES", default_value_t = Budget::DEFAULT.bytes)]
    pub(crate) budget_bytes: u64,
    /// Lookups too costly to answer inline that run at once, off the
    /// async workers (default: one per CPU).
    #[arg(long, env = "HIERAD_LOOKUP_WORKERS")]
    pub(crate) lookup_workers: Option<NonZeroUsize>,
    /// Clients that may wait for changes at once (GET /api/v1/changes
    /// with wait=, or its event stream). Beyond it: 503 and Retry-After.
    #[arg(long, env = "HIERAD_MAX_CHANGE_WAITERS", default_value_t = crate::settings::DEFAULT_CHANGE_WAITERS)]
    pub(crate) max_change_waiters: usize,
    /// MiB of lookup requests that may wait for a --lookup-workers turn
    /// (or run in one): large or costly lookups, each counted by its body
    /// size. Beyond it a lookup is refused with 503 and Retry-After: 1.
    #[arg(long, env = "HIERAD_LOOKUP_QUEUE_MIB", value_parser = clap::value_parser!(u64).range(1..=1_048_576), default_value_t = 64)]
    pub(crate) lookup_queue_mib: u64,
    /// MiB of answers made but not yet read by their clients the server
    /// holds at most (answers under 64 KiB and shared documents are not
    /// counted). Beyond it, connections that read nothing for a second
    /// are closed to make room, else the answer is refused with 503 and
    /// Retry-After: 1.
    #[arg(long, env = "HIERAD_UNREAD_ANSWERS_MIB", value_parser = clap::value_parser!(u64).range(1..=1_048_576), default_value_t = 256)]
    pub(crate) unread_answers_mib: u64,
    /// KiB of kernel send buffer (SO_SNDBUF) per connection: what a client
    /// that reads slowly or not at all can make the server copy and hold
    /// in the kernel. 0: the kernel's autotuning (up to
    /// net.ipv4.tcp_wmem's maximum), for links whose bandwidth-delay
    /// product needs more.
    #[arg(long, env = "HIERAD_SOCKET_SEND_BUFFER_KIB", value_parser = clap::value_parser!(u32).range(0..=1_048_576), default_value_t = crate::settings::DEFAULT_SEND_BUFFER_KIB)]
    pub(crate) socket_send_buffer_kib: u32,
    /// Password checks (Argon2: 19 MiB and a core each) that run at once,
    /// on threads of their own (default: half the CPUs, at least 1).
    #[arg(long, env = "HIERAD_PASSWORD_THREADS")]
    pub(crate) password_threads: Option<NonZeroUsize>,
    /// Password checks that may wait for a thread; one more is refused
    /// unchecked (503, Retry-After). Tokens, certificates and passwords
    /// verified lately never wait for these.
    #[arg(long, env = "HIERAD_PASSWORD_QUEUE", value_parser = clap::value_parser!(u32).range(0..=100_000), default_value_t = crate::auth::pool::DEFAULT_QUEUE as u32)]
    pub(crate) password_queue: u32,
    /// Keep at most this many versions of each document, the latest
    /// included (0: no limit), in environments that set no retention of
    /// their own. History is bounded by default: every version is held
    /// in the database for ever otherwise.
    #[arg(long, env = "HIERAD_KEEP_VERSIONS", default_value_t = DEFAULT_KEEP_VERSIONS)]
    pub(crate) keep_versions: u64,
    /// Keep versions written less than this many days ago (0: no limit),
    /// in environments that set no retention of their own. The latest
    /// version of a document is always kept.
    #[arg(long, env = "HIERAD_KEEP_DAYS", default_value_t = 0)]
    pub(crate) keep_days: u64,
    /// Largest document a write may store, in MiB of its stored encoding
    /// (wire JSON; 0: no limit): a PUT, key-path edit, restore or import
    /// beyond it is refused with 413 and writes nothing. The default is
    /// --body-limit's, so whatever one request may carry fits.
    #[arg(long, env = "HIERAD_MAX_DOCUMENT_MIB", default_value_t = 16)]
    pub(crate) max_document_mib: u64,
    /// Largest total of an environment's latest documents, in MiB of their
    /// stored encoding (0: no limit): a write that would grow it beyond is
    /// refused with 413 and writes nothing. A replica holds some 8 times
    /// this in memory per environment.
    #[arg(long, env = "HIERAD_MAX_ENVIRONMENT_MIB", default_value_t = 256)]
    pub(crate) max_environment_mib: u64,
    /// Time between pruning rounds (old versions the retention no longer
    /// keeps; also when hierad_database_bytes is measured).
    #[arg(long, value_parser = positive_duration, default_value = "60s")]
    pub(crate) prune_every: Duration,
    /// How often to look for writes by other processes on the same
    /// database (the CLI with `--db`, other servers) and publish them.
    #[arg(long, env = "HIERAD_SYNC_EVERY", value_parser = positive_duration, default_value = "20ms")]
    pub(crate) sync_every: Duration,
    /// How long a request naming a minimum generation (header
    /// X-Hierad-Min-Generation or ?min_generation=N) waits for this server
    /// to reach it; then 503.
    #[arg(long, value_parser = positive_duration, default_value = "5s")]
    pub(crate) min_generation_wait: Duration,
    /// A server that has not confirmed for this long that it serves the
    /// database's newest generation (the database unreadable, catching up
    /// failing) is stale: /readyz answers 503 and /healthz says so, while
    /// lookups go on from the last snapshot.
    #[arg(long, env = "HIERAD_MAX_LAG", value_parser = positive_duration, default_value = "5s")]
    pub(crate) max_lag: Duration,
    /// The auth file: users, tokens, client-certificate rules, Keystone
    /// (docs/security.md; `hierad auth` edits it). Reloaded when it
    /// changes (looked at every 2 s) and on SIGHUP.
    /// Without it every client may do everything, so the server listens
    /// on loopback only.
    #[arg(long, env = "HIERAD_AUTH", value_name = "FILE")]
    pub(crate) auth: Option<PathBuf>,
    /// Serve HTTPS with this certificate chain (PEM, leaf first; reloaded,
    /// with the key and client CA, when one changes and on SIGHUP)
    #[arg(
        long,
        env = "HIERAD_TLS_CERT",
        value_name = "PEM",
        requires = "tls_key"
    )]
    pub(crate) tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM)
    #[arg(
        long,
        env = "HIERAD_TLS_KEY",
        value_name = "PEM",
        requires = "tls_cert"
    )]
    pub(crate) tls_key: Option<PathBuf>,
    /// Verify client certificates against these CA certificates (PEM);
    /// the auth file's client_cert rules map them to roles
    #[arg(
        long,
        env = "HIERAD_TLS_CLIENT_CA",
        value_name = "PEM",
        requires = "tls_cert"
    )]
    pub(crate) tls_client_ca: Option<PathBuf>,
    /// Listen beyond loopback without an auth file: anyone who can connect
    /// may read every secret and delete every environment
    #[arg(long)]
    pub(crate) insecure: bool,
    /// Balancers (addresses or CIDR blocks, repeated or comma-separated)
    /// whose connections start with a PROXY protocol header (HAProxy's
    /// send-proxy, v1 or v2): the client it names is the one the access
    /// log and the throttle of failed authentications see. Their
    /// connections without one are closed.
    #[arg(long, env = "HIERAD_PROXY_PROTOCOL_FROM", value_name = "CIDR", value_delimiter = ',', value_parser = crate::server::http::proxied::parse_net)]
    pub(crate) proxy_protocol_from: Vec<ipnet::IpNet>,
    /// A name clients reach this server by (a balancer's or a proxy's, or
    /// the server's own), repeated or comma-separated: requests whose Host
    /// is not an IP address, `localhost` or one of these are refused, so a
    /// web page cannot reach the server through DNS rebinding
    #[arg(long = "allowed-host", env = "HIERAD_ALLOWED_HOST", value_name = "NAME", value_delimiter = ',', value_parser = crate::server::http::cross_site::parse_allowed_host)]
    pub(crate) allowed_hosts: Vec<String>,
    /// Serve no browser console at /ui/ (docs/console.md)
    #[arg(long, env = "HIERAD_NO_UI")]
    pub(crate) no_ui: bool,
    #[command(flatten)]
    pub(crate) eyaml: super::secrets::KeyArgs,
    /// Decrypted eyaml values kept in memory (never on disk), at most
    /// this many MiB; emptied when the keys are reloaded
    #[arg(
        long,
        env = "HIERAD_EYAML_CACHE_MIB",
        value_name = "MIB",
        default_value_t = 16
    )]
    pub(crate) eyaml_cache_mib: u64,
}

/// A duration above zero: a zero timeout would refuse everything.
fn positive_duration(text: &str) -> Result<Duration, String> {
    let duration = super::bench::parse_duration(text)?;
    if duration.is_zero() {
        return Err(format!(
            "{text:?} is no time at all; give a duration above zero"
        ));
    }
    Ok(duration)
}

/// Runs the server until Ctrl-C or SIGTERM.
///
/// # Errors
///
/// The database cannot be opened or the address cannot be bound.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Held to the end: its drop writes the last access lines.
    let _log = super::logging::init()?;
    super::logging::hide_panic_data();
    let (settings, security, quotas) = parts(args)?;
    server::run(settings, &security, quotas)
}

/// `hierad serve ARGS` in this process, on `listener` (its address
/// replaces `--listen`), until `shutdown`: the server the binary runs,
/// for tests of its routes, statuses and headers that need no process
/// of their own. Logs nowhere unless the caller set up `tracing`.
///
/// # Errors
///
/// ARGS that `hierad serve` refuses, and what [`server::run`] fails on.
pub fn serve_in_process(
    args: &[&str],
    listener: std::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let cli = <super::Cli as clap::Parser>::try_parse_from(["hierad", "serve"].iter().chain(args))?;
    let super::Command::Serve(args) = cli.command else {
        unreachable!("parsed as `hierad serve`")
    };
    let (mut settings, security, quotas) = parts(args)?;
    settings.listen = listener.local_addr()?;
    let listener = server::run::Listener::Bound(listener);
    server::run::run_on(settings, &security, quotas, listener, shutdown)
}

/// What the flags of `hierad serve` make: the settings, the security
/// files and the quotas.
fn parts(args: Args) -> anyhow::Result<(Settings, server::run::SecurityFiles, Quotas)> {
    let security = server::run::SecurityFiles {
        auth: args.auth.clone(),
        tls_cert: args.tls_cert.clone(),
        tls_key: args.tls_key.clone(),
        tls_client_ca: args.tls_client_ca.clone(),
        insecure: args.insecure,
        password_threads: args.password_threads,
        password_queue: args.password_queue as usize,
    };
    let settings = Settings {
        listen: args.listen,
        db: args.db,
        body_limit: usize::try_from(args.body_limit).unwrap_or(usize::MAX),
        lookup_body_limit: usize::try_from(args.lookup_body_limit).unwrap_or(usize::MAX),
        cache_bytes: args.cache_mib.saturating_mul(1024 * 1024),
        memo_bytes: args.memo_mib.saturating_mul(1024 * 1024),
        sample: match (args.no_sample, args.sample) {
            (true, _) => Sample::Off,
            (false, Some(dir)) => Sample::Dir(dir),
            (false, None) => Sample::BuiltIn,
        },
        request_timeout: args.request_timeout,
        max_connections: args.max_connections as usize,
        header_timeout: args.header_timeout,
        idle_timeout: args.idle_timeout,
        max_header_bytes: args.max_header_bytes as usize,
        shutdown_timeout: args.shutdown_timeout,
        lookup_budget: Budget {
            steps: args.budget_steps,
            bytes: args.budget_bytes,
        },
        lookup_workers: args
            .lookup_workers
            .map_or_else(default_lookup_workers, NonZeroUsize::get),
        change_waiters: args.max_change_waiters,
        lookup_queue_bytes: args.lookup_queue_mib * 1024 * 1024,
        unread_answers_bytes: args.unread_answers_mib * 1024 * 1024,
        send_buffer_bytes: (args.socket_send_buffer_kib > 0)
            .then(|| args.socket_send_buffer_kib as usize * 1024),
        retention: Retention {
            keep_versions: Some(args.keep_versions),
            keep_days: Some(args.keep_days),
        },
        prune_every: args.prune_every,
        sync_every: args.sync_every,
        min_generation_wait: args.min_generation_wait,
        max_lag: args.max_lag,
        proxies: Proxies::new(args.proxy_protocol_from),
        allowed_hosts: crate::server::http::cross_site::AllowedHosts::new(args.allowed_hosts),
        ui: !args.no_ui,
        eyaml: args.eyaml.files(),
        eyaml_cache_bytes: args.eyaml_cache_mib.saturating_mul(1024 * 1024),
    };
    let quotas = Quotas {
        document_bytes: args.max_document_mib.saturating_mul(1024 * 1024),
        environment_bytes: args.max_environment_mib.saturating_mul(1024 * 1024),
    };
    Ok((settings, security, quotas))
}

/// The default `--keep-versions`: a long way back for a document edited
/// daily, bounded for one a script rewrites every minute.
const DEFAULT_KEEP_VERSIONS: u64 = 100;
