//! The statistics of a bench run: every timed request is a [`Sample`];
//! the report's percentiles come from an HDR histogram of them, its
//! timeline from the samples of each interval. Pure: no clock, no I/O.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One timed request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Sample {
    /// When it started, in µs since the measurement began.
    pub(crate) at_us: u32,
    pub(crate) latency_us: u32,
    /// Index of its key class in the plan (`u8::MAX`: none).
    pub(crate) class: u8,
}

/// Latency percentiles, in µs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Latency {
    pub(crate) count: u64,
    pub(crate) mean: f64,
    pub(crate) p50: u64,
    pub(crate) p90: u64,
    pub(crate) p99: u64,
    pub(crate) p99_9: u64,
    pub(crate) max: u64,
}

/// The percentiles the latency-by-percentile curve is drawn through.
pub(crate) const CURVE: [f64; 14] = [
    0.0, 25.0, 50.0, 75.0, 90.0, 95.0, 98.0, 99.0, 99.5, 99.8, 99.9, 99.95, 99.99, 100.0,
];

/// A histogram of latencies in µs: 1 µs to 100 s, 3 significant digits.
pub(crate) fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100_000_000, 3).expect("valid histogram bounds")
}

/// Records a latency, clamped into the histogram's range.
pub(crate) fn record(h: &mut Histogram<u64>, latency_us: u64) {
    let _ = h.record(latency_us.clamp(1, h.high()));
}

/// The summary of a histogram (all zero when it is empty).
pub(crate) fn latency(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    Latency {
        count: h.len(),
        mean: (h.mean() * 10.0).round() / 10.0,
        p50: h.value_at_quantile(0.5),
        p90: h.value_at_quantile(0.9),
        p99: h.value_at_quantile(0.99),
        p99_9: h.value_at_quantile(0.999),
        max: h.max(),
    }
}

/// (percentile, µs) pairs through [`CURVE`].
pub(crate) fn curve(h: &Histogram<u64>) -> Vec<(f64, u64)> {
    if h.is_empty() {
        return Vec::new();
    }
    CURVE
        .iter()
        .map(|p| (*p, h.value_at_quantile(p / 100.0)))
        .collect()
}

/// One interval of the timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Interval {
    /// Start of the interval, in s since the measurement began.
    pub(crate) t_s: f64,
    pub(crate) requests: u64,
    /// Requests started in the interval, per second.
    pub(crate) per_s: f64,
    pub(crate) p50_us: u64,
    pub(crate) p99_us: u64,
    pub(crate) max_us: u64,
}

/// The samples cut into intervals of `interval_us` over `span_us`.
pub(crate) fn timeline(samples: &[Sample], interval_us: u32, span_us: u32) -> Vec<Interval> {
    let interval_us = interval_us.max(1);
    let n = span_us.div_ceil(interval_us).max(1) as usize;
    let mut buckets: Vec<Histogram<u64>> = (0..n).map(|_| histogram()).collect();
    for s in samples {
        let i = ((s.at_us / interval_us) as usize).min(n - 1);
        record(&mut buckets[i], u64::from(s.latency_us));
    }
    buckets
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let l = latency(h);
            // The last interval may be cut short by the end of the run.
            let start = u64::from(interval_us) * i as u64;
            let width = (u64::from(span_us).saturating_sub(start)).clamp(1, u64::from(interval_us));
            Interval {
                t_s: f64::from(interval_us) * i as f64 / 1e6,
                requests: l.count,
                per_s: l.count as f64 * 1e6 / width as f64,
                p50_us: l.p50,
                p99_us: l.p99,
                max_us: l.max,
            }
        })
        .collect()
}

/// Errors by kind: transport failures (connect, reset, timeout) and
/// responses whose status is not 2xx, by status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Errors {
    pub(crate) total: u64,
    pub(crate) transport: u64,
    pub(crate) status: BTreeMap<String, u64>,
}

/// How the lookups were answered (by the body's `found`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Answers {
    pub(crate) found: u64,
    pub(crate) not_found: u64,
    pub(crate) other: u64,
}

/// The server's answer cache over the measurement, from `/metrics`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Cache {
    pub(crate) hits: u64,
    pub(crate) misses: u64,
    pub(crate) hit_ratio: f64,
}

impl Cache {
    pub(crate) fn new(hits: u64, misses: u64) -> Cache {
        let total = hits + misses;
        Cache {
            hits,
            misses,
            hit_ratio: if total == 0 {
                0.0
            } else {
                hits as f64 / total as f64
            },
        }
    }
}

/// Writes published while the bench ran (`--write-every`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Writes {
    pub(crate) count: u64,
    pub(crate) errors: u64,
    pub(crate) latency_us: Latency,
    /// When each write was sent, in s since the measurement began.
    pub(crate) at_s: Vec<f64>,
}

/// Per key class: how many, and how fast.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ClassStats {
    pub(crate) requests: u64,
    pub(crate) p50_us: u64,
    pub(crate) p99_us: u64,
}

/// A bench run's report (`--json` prints it as is).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Report {
    pub(crate) server: String,
    /// A name for the run (`--label`), for tables and charts.
    pub(crate) label: String,
    pub(crate) connections: usize,
    pub(crate) duration_s: f64,
    pub(crate) requests: u64,
    pub(crate) lookups_per_s: f64,
    pub(crate) latency_us: Latency,
    pub(crate) curve: Vec<(f64, u64)>,
    pub(crate) errors: Errors,
    pub(crate) answers: Answers,
    pub(crate) classes: BTreeMap<String, ClassStats>,
    pub(crate) bytes_received: u64,
    pub(crate) cache: Option<Cache>,
    pub(crate) writes: Option<Writes>,
    pub(crate) timeline: Vec<Interval>,
}

/// What the load loop measured, before it is summarised.
#[derive(Debug, Default)]
pub(crate) struct Measured {
    pub(crate) samples: Vec<Sample>,
    pub(crate) errors: Errors,
    pub(crate) answers: Answers,
    pub(crate) bytes_received: u64,
    pub(crate) elapsed_us: u64,
}

/// Timeline resolution: fine enough to see a write's effect.
pub(crate) const INTERVAL_US: u32 = 100_000;

impl Report {
    /// Summarises a measurement; `class_names` name the samples' classes.
    pub(crate) fn new(
        server: &str,
        label: &str,
        connections: usize,
        m: Measured,
        class_names: &[String],
    ) -> Report {
        let mut all = histogram();
        let mut per_class: BTreeMap<u8, Histogram<u64>> = BTreeMap::new();
        for s in &m.samples {
            record(&mut all, u64::from(s.latency_us));
            record(
                per_class.entry(s.class).or_insert_with(histogram),
                u64::from(s.latency_us),
            );
        }
        let classes = per_class
            .iter()
            .map(|(i, h)| {
                let name = class_names
                    .get(usize::from(*i))
                    .cloned()
                    .unwrap_or_else(|| "other".to_owned());
                let l = latency(h);
                (
                    name,
                    ClassStats {
                        requests: l.count,
                        p50_us: l.p50,
                        p99_us: l.p99,
                    },
                )
            })
            .collect();
        let duration_s = m.elapsed_us as f64 / 1e6;
        let span = u32::try_from(m.elapsed_us).unwrap_or(u32::MAX);
        Report {
            server: server.to_owned(),
            label: label.to_owned(),
            connections,
            duration_s: (duration_s * 1000.0).round() / 1000.0,
            requests: all.len(),
            lookups_per_s: if duration_s > 0.0 {
                (all.len() as f64 / duration_s).round()
            } else {
                0.0
            },
            latency_us: latency(&all),
            curve: curve(&all),
            errors: m.errors,
            answers: m.answers,
            classes,
            bytes_received: m.bytes_received,
            cache: None,
            writes: None,
            timeline: timeline(&m.samples, INTERVAL_US, span),
        }
    }

    /// The report for people.
    pub(crate) fn text(&self) -> String {
        let ms = |us: u64| format!("{:.2} ms", us as f64 / 1000.0);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}: {} requests in {:.1} s over {} connections",
            if self.label.is_empty() {
                &self.server
            } else {
                &self.label
            },
            self.requests,
            self.duration_s,
            self.connections
        );
        let _ = writeln!(out, "  lookups/s   {:.0}", self.lookups_per_s);
        let l = &self.latency_us;
        let _ = writeln!(
            out,
            "  latency     p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
            ms(l.p50),
            ms(l.p90),
            ms(l.p99),
            ms(l.p99_9),
            ms(l.max)
        );
        let _ = writeln!(
            out,
            "  answers     found {}  not found {}  other {}  ({:.1} KB/answer)",
            self.answers.found,
            self.answers.not_found,
            self.answers.other,
            self.bytes_received as f64 / self.requests.max(1) as f64 / 1024.0
        );
        let mut errors = format!("{} ({} transport", self.errors.total, self.errors.transport);
        for (status, n) in &self.errors.status {
            let _ = write!(errors, ", {n} × {status}");
        }
        errors.push(')');
        let _ = writeln!(out, "  errors      {errors}");
        match &self.cache {
            Some(c) => {
                let _ = writeln!(
                    out,
                    "  cache       {:.1}% hits ({} hits, {} misses)",
                    c.hit_ratio * 100.0,
                    c.hits,
                    c.misses
                );
            }
            None => {
                let _ = writeln!(out, "  cache       (the server has no hierad metrics)");
            }
        }
        if let Some(w) = &self.writes {
            let _ = writeln!(
                out,
                "  writes      {} published ({} failed), p50 {}, max {}",
                w.count,
                w.errors,
                ms(w.latency_us.p50),
                ms(w.latency_us.max)
            );
        }
        for (name, c) in &self.classes {
            let _ = writeln!(
                out,
                "  {name:<12}{:>8} requests  p50 {}  p99 {}",
                c.requests,
                ms(c.p50_us),
                ms(c.p99_us)
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(latencies: &[(u32, u32, u8)]) -> Vec<Sample> {
        latencies
            .iter()
            .map(|&(at_us, latency_us, class)| Sample {
                at_us,
                latency_us,
                class,
            })
            .collect()
    }

    #[test]
    fn percentiles_of_known_distributions() {
        // (values, p50, p90, p99, max); 3 significant digits.
        let uniform: Vec<u64> = (1..=1000).collect();
        let mut tail: Vec<u64> = vec![100; 990];
        tail.extend([50_000; 10]);
        let cases: [(&[u64], u64, u64, u64, u64); 3] = [
            (&uniform, 500, 900, 990, 1000),
            (&tail, 100, 100, 100, 50_015),
            (&[7], 7, 7, 7, 7),
        ];
        for (values, p50, p90, p99, max) in cases {
            let mut h = histogram();
            for v in values {
                record(&mut h, *v);
            }
            let l = latency(&h);
            assert_eq!(
                (l.p50, l.p90, l.p99, l.max),
                (p50, p90, p99, max),
                "{values:?}"
            );
            assert_eq!(l.count, values.len() as u64);
        }
        assert_eq!(latency(&histogram()), Latency::default());
        let mut h = histogram();
        record(&mut h, 0);
        assert_eq!(latency(&h).max, 1, "0 µs is clamped to the lowest bucket");
    }

    #[test]
    fn curve_rises_through_the_percentiles() {
        let mut h = histogram();
        for v in 1..=10_000u64 {
            record(&mut h, v);
        }
        let c = curve(&h);
        assert_eq!(c.len(), CURVE.len());
        assert!(c.windows(2).all(|w| w[0].1 <= w[1].1));
        assert_eq!(c.last().unwrap(), &(100.0, latency(&h).max));
        assert!(curve(&histogram()).is_empty());
    }

    #[test]
    fn timeline_buckets_by_start_time() {
        let s = samples(&[
            (0, 10, 0),
            (50, 20, 0),
            (150, 30, 0),
            (999, 40, 0),
            (5000, 1, 0),
        ]);
        let t = timeline(&s, 100, 300);
        let got: Vec<(u64, u64, f64)> = t.iter().map(|i| (i.requests, i.max_us, i.t_s)).collect();
        // The late sample lands in the last interval.
        assert_eq!(got, [(2, 20, 0.0), (1, 30, 0.0001), (2, 40, 0.0002)]);
        assert_eq!(t[0].per_s, 20_000.0);
        // A last interval cut short counts its own width.
        let t = timeline(&samples(&[(0, 1, 0), (100, 1, 0), (110, 1, 0)]), 100, 120);
        assert_eq!((t[1].requests, t[1].per_s), (2, 100_000.0));
    }

    #[test]
    fn report_counts_and_rates() {
        let m = Measured {
            samples: samples(&[(0, 100, 0), (10, 200, 1), (20, 300, 1), (30, 400, 9)]),
            errors: Errors::default(),
            answers: Answers {
                found: 3,
                not_found: 1,
                other: 0,
            },
            bytes_received: 4096,
            elapsed_us: 2_000_000,
        };
        let names = vec!["priority".to_owned(), "hash".to_owned()];
        let r = Report::new("http://x", "run", 4, m, &names);
        assert_eq!(r.requests, 4);
        assert_eq!(r.lookups_per_s, 2.0);
        assert_eq!(r.latency_us.max, 400);
        let classes: Vec<(&str, u64)> = r
            .classes
            .iter()
            .map(|(k, v)| (k.as_str(), v.requests))
            .collect();
        assert_eq!(classes, [("hash", 2), ("other", 1), ("priority", 1)]);
        assert_eq!(r.timeline.len(), 20);
        let text = r.text();
        assert!(text.contains("lookups/s   2"), "{text}");
        assert!(text.contains("p99 0.40 ms"), "{text}");
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<Report>(&json).unwrap(), r);
        assert_eq!(Cache::new(3, 1).hit_ratio, 0.75);
        assert_eq!(Cache::new(0, 0).hit_ratio, 0.0);
    }
}
