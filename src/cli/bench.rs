//! `hierad bench`: load a running server with realistic lookups and
//! report lookups/s, latency percentiles, errors and cache hits; and its
//! helpers: `generate` (a synthetic Fuel environment), `load` (import it,
//! timed), `chart` (SVG of saved reports), `baseline-server` (the bare
//! hyper server to compare with).

use crate::bench::client::{self, Limit, Options, Target};
use crate::bench::plan::{self, KeyClass, Mix, Plan, Sampler};
use crate::bench::stats::Report;
use crate::bench::{baseline, chart, discover, generate, load, summary};
use crate::cli::args::ClientFlags;
use anyhow::{Context, bail};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Load-test a hierad server; or generate, load and chart bench data.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) command: Option<Sub>,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Sub {
    /// Hold WAITERS change-feed long polls on a server, make one write,
    /// and print the RSS they added and how soon after the write's answer
    /// each was woken (bench/changes.sh).
    Waiters {
        /// The server, `host:port` (plain HTTP).
        #[arg(long)]
        server: String,
        #[arg(long, default_value_t = 5000)]
        waiters: usize,
        /// The server's process id: its RSS and CPU are read from /proc.
        #[arg(long)]
        pid: u32,
        /// The write: a PUT of --body to this path.
        #[arg(long)]
        path: String,
        #[arg(long)]
        body: String,
    },
    /// Write a synthetic Fuel environment of N nodes to DIR: `root/` and
    /// `nodes/<fqdn>/` trees for `hierad import`, and `bench-plan.json`.
    Generate {
        /// How many nodes.
        #[arg(long, default_value_t = 100)]
        nodes: usize,
        /// The generator's seed (the same seed writes the same files).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The Fuel fixtures the nodes are made from.
        #[arg(long, default_value = "tests/fixtures/fuel")]
        fixtures: PathBuf,
        /// The sample tree the globals and override layers come from.
        #[arg(long, default_value = "data")]
        sample: PathBuf,
        dir: PathBuf,
    },
    /// Import a generated environment, timed: through a server's import
    /// API (one import per level), or into a database file.
    Load {
        dir: PathBuf,
        /// The server, `http://host:port` or `https://…`.
        #[arg(long, conflicts_with = "db", required_unless_present = "db")]
        server: Option<String>,
        #[command(flatten)]
        client: ClientFlags,
        #[arg(long)]
        db: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        env: i64,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Draw saved `--json` reports side by side as an SVG chart.
    Chart {
        /// The SVG file to write.
        #[arg(long, short)]
        output: PathBuf,
        #[arg(required = true)]
        reports: Vec<PathBuf>,
    },
    /// Write-to-visible latency across servers: write a key through
    /// --write, read it through --read until it shows, N times; prints
    /// p50/p99 in ms (or JSON).
    Visible {
        /// The server written to, `http://host:port` or `https://…`.
        #[arg(long)]
        write: String,
        /// The server read from (another replica on the same database).
        #[arg(long)]
        read: String,
        /// The credentials and TLS settings for both servers, as the
        /// other commands' (docs/security.md).
        #[command(flatten)]
        client: ClientFlags,
        #[arg(long, default_value_t = 1)]
        env: i64,
        /// A resource of the environment; its key `bench_visible` is written.
        #[arg(long, default_value = "globals")]
        resource: String,
        #[arg(long, short = 'n', default_value_t = 1000)]
        writes: u64,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The table of bench/run.sh (each figure, its baseline, the ratio,
    /// the target) from the reports it saved in DIR; or, with --run, the
    /// one line it prints after a run.
    Summary {
        #[arg(required_unless_present = "run", conflicts_with = "run")]
        dir: Option<PathBuf>,
        /// A report (`hierad bench --json`) to summarise in one line.
        #[arg(long, value_name = "REPORT")]
        run: Option<PathBuf>,
    },
    /// A bare hyper server answering every request with a fixed body, on
    /// the same runtime as `hierad serve`: the benchmark's baseline.
    #[command(hide = true)]
    BaselineServer {
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// Set TCP_NODELAY on accepted connections.
        #[arg(long)]
        nodelay: bool,
        /// Answer with this file's bytes instead of a short lookup answer
        /// (the same bytes as a whole document hierad sends).
        #[arg(long, value_name = "FILE")]
        body: Option<PathBuf>,
        /// Serve TLS with this certificate chain (PEM), built as `serve
        /// --tls-cert` builds it (bench/tls.sh's bare TLS server).
        #[arg(long, value_name = "FILE", requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        /// The certificate's private key (PEM).
        #[arg(long, value_name = "FILE", requires = "tls_cert")]
        tls_key: Option<PathBuf>,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The server to load, `http://host:port` or `https://host:port`.
    #[arg(long)]
    pub(crate) server: Option<String>,
    /// The credentials and TLS settings, as the other commands'
    /// (docs/security.md).
    #[command(flatten)]
    pub(crate) client: ClientFlags,
    /// The plan (`bench-plan.json` from `hierad bench generate`); without
    /// it, keys and nodes come from the environment's own data.
    #[arg(long)]
    pub(crate) plan: Option<PathBuf>,
    /// The environment (default: the plan's, or 1).
    #[arg(long)]
    pub(crate) env: Option<i64>,
    /// Keep-alive connections, each sending one request after another.
    #[arg(long, short = 'c', default_value_t = 32)]
    pub(crate) connections: usize,
    /// How long to measure (`10s`, `500ms`, `1m`).
    #[arg(long, short = 'd', value_parser = parse_duration, conflicts_with = "requests")]
    pub(crate) duration: Option<Duration>,
    /// How many requests to measure, instead of a duration.
    #[arg(long, short = 'n')]
    pub(crate) requests: Option<u64>,
    /// Requests before the measurement (not counted).
    #[arg(long, value_parser = parse_duration, default_value = "1s")]
    pub(crate) warmup: Duration,
    /// Key classes and weights.
    #[arg(long, default_value = plan::DEFAULT_MIX)]
    pub(crate) mix: Mix,
    /// Look up this one key only (with --resolution).
    #[arg(long)]
    pub(crate) key: Option<String>,
    #[arg(long, default_value = "priority", value_parser = ["priority", "array", "hash"])]
    pub(crate) resolution: String,
    /// Make every request distinct, so none is answered from the cache.
    #[arg(long)]
    pub(crate) unique: bool,
    /// Publish a new version of a small document this often while
    /// measuring (`250ms`).
    #[arg(long, value_parser = parse_duration)]
    pub(crate) write_every: Option<Duration>,
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// The client's runtime threads (default: one per CPU).
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// A name for this run in reports and charts.
    #[arg(long, default_value = "")]
    pub(crate) label: String,
    /// GET this path instead of sending lookups, e.g. a whole datasource
    /// (`/api/v1/data/1/astute?level=nodes%3D{node}`); `{node}` becomes a
    /// node of the plan, drawn at random.
    #[arg(long, value_name = "PATH")]
    pub(crate) get: Option<String>,
    /// An extra request header, `Name: value` (repeatable), e.g. the
    /// `If-None-Match` of a revalidation.
    #[arg(long = "header", value_name = "HEADER", value_parser = parse_header)]
    pub(crate) headers: Vec<(String, String)>,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Write an SVG latency chart of the run.
    #[arg(long)]
    pub(crate) chart: Option<PathBuf>,
}

/// `Name: value`.
fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("a header is `Name: value`, not {text:?}"))?;
    let name = name.trim();
    hyper::header::HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("not a header name: {name:?}"))?;
    Ok((name.to_owned(), value.trim().to_owned()))
}

/// `10s`, `250ms`, `2m`, or plain seconds.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else {
        (text, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("not a duration: {text:?} (try 10s, 250ms, 1m)"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("not a duration: {text:?}"));
    }
    // `from_secs_f64` panics past u64::MAX seconds.
    Duration::try_from_secs_f64(value * scale).map_err(|_| format!("too long a duration: {text:?}"))
}

fn runtime(threads: Option<usize>) -> anyhow::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = threads {
        builder.worker_threads(n.max(1));
    }
    builder
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Runs `hierad bench …`.
///
/// # Errors
///
/// Bad arguments, an unreachable server, unwritable files.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Some(Sub::Generate {
            nodes,
            seed,
            fixtures,
            sample,
            dir,
        }) => generate_tree(nodes, seed, &fixtures, &sample, &dir),
        Some(Sub::Load {
            dir,
            server,
            client,
            db,
            env,
            json,
        }) => {
            let loaded = match (server, db) {
                (_, Some(db)) => load::into_db(&db, &dir, env)?,
                (Some(server), None) => {
                    let target: Target = server.parse().map_err(anyhow::Error::msg)?;
                    load::via_server(&target, client.auth()?, &dir, env)?
                }
                (None, None) => bail!("give --server or --db"),
            };
            if json {
                println!("{}", serde_json::to_string(&loaded)?);
            } else {
                print!("{}", loaded.text());
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Sub::Visible {
            write,
            read,
            client,
            env,
            resource,
            writes,
            json,
        }) => {
            let options = crate::bench::visible::Options {
                write,
                read,
                auth: client.auth()?,
                env,
                resource,
                writes,
                patience: Duration::from_secs(10),
            };
            let figures = crate::bench::visible::run(&options)?;
            if json {
                println!("{}", serde_json::to_string(&figures)?);
            } else {
                let ms = |us: u64| us as f64 / 1000.0;
                println!(
                    "{} writes: visible on the other server after p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms \
                     (write acknowledged p50 {:.2} ms, p99 {:.2} ms; {:.1} reads per write)",
                    figures.writes,
                    ms(figures.visible_p50_us),
                    ms(figures.visible_p99_us),
                    ms(figures.visible_max_us),
                    ms(figures.ack_p50_us),
                    ms(figures.ack_p99_us),
                    figures.reads_per_write
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Sub::Chart { output, reports }) => {
            let mut loaded = Vec::new();
            for path in &reports {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let report: Report = serde_json::from_str(&text)
                    .with_context(|| format!("{} is not a bench report", path.display()))?;
                loaded.push(report);
            }
            std::fs::write(&output, chart::svg(&loaded))
                .with_context(|| format!("cannot write {}", output.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Sub::Summary { dir, run }) => {
            match (run, dir) {
                (Some(report), _) => print!("{}", summary::run_line(&report)?),
                (None, Some(dir)) => print!("{}", summary::table(&dir)?),
                (None, None) => bail!("give a results DIR or --run REPORT"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Sub::BaselineServer {
            listen,
            nodelay,
            body,
            tls_cert,
            tls_key,
        }) => {
            let tls = match (tls_cert, tls_key) {
                (Some(cert), Some(key)) => Some(crate::server::http::tls::TlsFiles {
                    cert,
                    key,
                    client_ca: None,
                }),
                _ => None,
            };
            baseline_server(listen, nodelay, body.as_deref(), tls)
        }
        Some(Sub::Waiters {
            server,
            waiters,
            pid,
            path,
            body,
        }) => {
            let w = crate::bench::waiters::Waiters {
                server,
                waiters,
                pid,
                path,
                body,
            };
            crate::bench::waiters::run(&w)?;
            Ok(ExitCode::SUCCESS)
        }
        None => load_test(args.run),
    }
}

/// `bench generate`: a synthetic Fuel tree of `nodes` nodes in `dir`.
fn generate_tree(
    nodes: usize,
    seed: u64,
    fixtures: &Path,
    sample: &Path,
    dir: &Path,
) -> anyhow::Result<ExitCode> {
    let sources = generate::Sources::read(fixtures, sample).context(
        "the generator reads the repository's Fuel fixtures and data/ (run it from the repository, or give --fixtures and --sample)",
    )?;
    let generated = generate::generate(&sources, nodes, seed).map_err(anyhow::Error::msg)?;
    let written = generate::write(&generated, dir)
        .with_context(|| format!("cannot write {}", dir.display()))?;
    eprintln!(
        "wrote {} files ({:.1} MB) for {nodes} nodes to {}",
        written.files,
        written.bytes as f64 / 1e6,
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `bench baseline-server`: a bare hyper server answering `body` (or a
/// fixed small answer) to every request, over TLS given `tls`, the
/// yardstick of the figures.
fn baseline_server(
    listen: SocketAddr,
    nodelay: bool,
    body: Option<&Path>,
    tls: Option<crate::server::http::tls::TlsFiles>,
) -> anyhow::Result<ExitCode> {
    let tls = tls
        .map(crate::server::http::tls::Tls::load)
        .transpose()?
        .map(|tls| tls.acceptor());
    runtime(None)?.block_on(async move {
        let body = match body {
            Some(path) => bytes::Bytes::from(
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?,
            ),
            None => bytes::Bytes::from_static(baseline::FIXED),
        };
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen}"))?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        eprintln!("listening on {scheme}://{}", listener.local_addr()?);
        baseline::serve(
            listener,
            nodelay,
            tls,
            body,
            crate::server::http::signal::shutdown_signal(),
        )
        .await?;
        Ok(ExitCode::SUCCESS)
    })
}

fn load_test(args: RunArgs) -> anyhow::Result<ExitCode> {
    let Some(server) = &args.server else {
        bail!("give --server URL (or a subcommand: generate, load, chart, summary)");
    };
    let target: Target = server.parse().map_err(anyhow::Error::msg)?;
    let target = target.authenticate(&args.client.auth()?)?;
    if args.connections == 0 {
        bail!("--connections must be at least 1");
    }
    let runtime = runtime(args.threads)?;
    let mut plan: Plan = match &args.plan {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            serde_json::from_str(&text)
                .with_context(|| format!("{} is not a bench plan", path.display()))?
        }
        None => runtime.block_on(discover(&target, args.env.unwrap_or(1)))?,
    };
    if let Some(env) = args.env {
        plan.environment = env;
    }
    let mix = match &args.key {
        Some(key) => {
            plan.classes = vec![KeyClass {
                name: "key".to_owned(),
                resolution: args.resolution.clone(),
                keys: vec![key.clone()],
            }];
            Mix(vec![("key".to_owned(), 1)])
        }
        None => args.mix.clone(),
    };
    let sampler = Sampler::new(&plan, &mix).map_err(anyhow::Error::msg)?;
    let limit = match (args.duration, args.requests) {
        (_, Some(n)) => Limit::Requests(n),
        (Some(d), None) => Limit::Duration(d),
        (None, None) => Limit::Duration(Duration::from_secs(10)),
    };
    let options = Options {
        target,
        label: args.label.clone(),
        connections: args.connections,
        limit,
        warmup: args.warmup,
        unique: args.unique,
        seed: args.seed,
        write_every: args.write_every,
        progress: !args.json,
        get: args.get.clone(),
        headers: args.headers.clone(),
    };
    let report = runtime.block_on(client::run(Arc::new(plan), sampler, options))?;
    if let Some(path) = &args.chart {
        std::fs::write(path, chart::svg(std::slice::from_ref(&report)))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let cases = [
            ("10s", Ok(10_000)),
            ("250ms", Ok(250)),
            ("1m", Ok(60_000)),
            ("2", Ok(2_000)),
            ("0.5s", Ok(500)),
            ("soon", Err(())),
            ("-1s", Err(())),
        ];
        for (text, want) in cases {
            let got = parse_duration(text)
                .map(|d| d.as_millis() as u64)
                .map_err(|_| ());
            assert_eq!(got, want, "{text}");
        }
    }
}
