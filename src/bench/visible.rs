//! `hierad bench visible`: how long a write through one server takes to
//! be served by another. Each round writes a key of a document
//! through the writing server, then reads it back through the reading
//! server, without a pause, until it answers the new value; the time from
//! sending the write to the first read that shows it is one sample.

use crate::configdb::{DocAddress, DocKind, LevelPath};
use crate::hiera::Value;
use crate::ops::client_auth::ClientAuth;
use crate::ops::remote::{Remote, Timeouts};
use anyhow::{Context, bail};
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// The key each round writes, in the resource's root values.
const KEY: &str = "bench_visible";

/// What to measure.
pub(crate) struct Options {
    pub(crate) write: String,
    pub(crate) read: String,
    /// Credentials and TLS settings, the same for both servers.
    pub(crate) auth: ClientAuth,
    pub(crate) env: i64,
    pub(crate) resource: String,
    pub(crate) writes: u64,
    /// A round whose write is not visible by then fails the run.
    pub(crate) patience: Duration,
}

/// Percentiles of one run, in microseconds.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Figures {
    pub(crate) writes: u64,
    pub(crate) visible_p50_us: u64,
    pub(crate) visible_p99_us: u64,
    pub(crate) visible_max_us: u64,
    pub(crate) ack_p50_us: u64,
    pub(crate) ack_p99_us: u64,
    pub(crate) reads_per_write: f64,
}

/// Runs the rounds, through the CLI's own client (plain or TLS, any
/// credentials).
///
/// # Errors
///
/// A server refuses or cannot be reached, or a write stays invisible
/// for `patience`.
pub(crate) fn run(options: &Options) -> anyhow::Result<Figures> {
    let writer = Remote::connect(&options.write, Timeouts::default(), options.auth.clone())?;
    let reader = Remote::connect(&options.read, Timeouts::default(), options.auth.clone())?;
    let at = DocAddress::new(
        options.env,
        LevelPath::root(),
        options.resource.clone(),
        DocKind::Values,
    );
    // 1 µs to 100 s; `saturating_record` clamps to these bounds.
    let new_histogram = || Histogram::<u64>::new_with_bounds(1, 100_000_000, 3);
    let (mut visible, mut ack) = (new_histogram()?, new_histogram()?);
    let mut reads = 0_u64;
    let stamp = Instant::now().elapsed().as_nanos();
    for i in 0..options.writes {
        let value = Value::String(format!("{stamp}-{i}"));
        let start = Instant::now();
        writer
            .put_key(&at, KEY, &value)
            .with_context(|| format!("write {i} through {}", options.write))?;
        ack.saturating_record(micros(start.elapsed()));
        loop {
            reads += 1;
            let seen = reader
                .get_key(&at, KEY)
                .with_context(|| format!("read of write {i} through {}", options.read))?;
            if seen.as_ref() == Some(&value) {
                break;
            }
            if start.elapsed() > options.patience {
                bail!(
                    "write {i} not visible on {} after {:?}",
                    options.read,
                    options.patience
                );
            }
        }
        visible.saturating_record(micros(start.elapsed()));
    }
    Ok(Figures {
        writes: options.writes,
        visible_p50_us: visible.value_at_quantile(0.5),
        visible_p99_us: visible.value_at_quantile(0.99),
        visible_max_us: visible.max(),
        ack_p50_us: ack.value_at_quantile(0.5),
        ack_p99_us: ack.value_at_quantile(0.99),
        reads_per_write: reads as f64 / options.writes.max(1) as f64,
    })
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
