//! `hierad bench visible`: how long a write through one server takes to
//! be served by another (issue 11). Each round writes a key of a document
//! through the writing server, then reads it back through the reading
//! server, without a pause, until it answers the new value; the time from
//! sending the write to the first read that shows it is one sample.

use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// What to measure.
pub(crate) struct Options {
    pub(crate) write: String,
    pub(crate) read: String,
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

/// Runs the rounds.
///
/// # Errors
///
/// A server refuses or cannot be reached, or a write stays invisible
/// for `patience`.
pub(crate) fn run(options: &Options) -> Result<Figures, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let key = format!(
        "/api/v1/config/environments/{}/resources/{}/values/keys/bench_visible",
        options.env, options.resource
    );
    let (write_url, read_url) = (
        format!("{}{key}", options.write),
        format!("{}{key}", options.read),
    );
    // 1 µs to 100 s; `saturating_record` clamps to these bounds.
    let new_histogram =
        || Histogram::<u64>::new_with_bounds(1, 100_000_000, 3).map_err(|e| e.to_string());
    let (mut visible, mut ack) = (new_histogram()?, new_histogram()?);
    let mut reads = 0_u64;
    let stamp = Instant::now().elapsed().as_nanos();
    for i in 0..options.writes {
        let value = format!("{stamp}-{i}");
        let body = serde_json::to_string(&value).map_err(|e| e.to_string())?;
        let start = Instant::now();
        let response = agent
            .put(&write_url)
            .header("content-type", "application/json")
            .send(body.as_str())
            .map_err(|e| format!("write {i} to {write_url}: {e}"))?;
        if response.status() != 204 {
            return Err(format!("write {i}: HTTP {}", response.status()));
        }
        ack.saturating_record(micros(start.elapsed()));
        loop {
            reads += 1;
            let mut response = agent
                .get(&read_url)
                .call()
                .map_err(|e| format!("read of write {i} from {read_url}: {e}"))?;
            let text = response
                .body_mut()
                .read_to_string()
                .map_err(|e| e.to_string())?;
            if response.status() == 200 && text == body {
                break;
            }
            if start.elapsed() > options.patience {
                return Err(format!(
                    "write {i} not visible on {} after {:?}",
                    options.read, options.patience
                ));
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
