//! The latency chart for people: an SVG, written by hand, of one or more
//! bench runs: latency by percentile (log scales, the HDR way), then p99
//! and throughput over time, with the writes of `--write-every` marked.

use super::stats::Report;
use std::fmt::Write as _;

const WIDTH: f64 = 860.0;
const PANEL: f64 = 250.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const GAP: f64 = 60.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Percentile → x in decades of 1/(1-p): 90 → 1, 99 → 2, 99.9 → 3.
fn nines(p: f64) -> f64 {
    let q = (1.0 - p / 100.0).max(1e-5);
    -q.log10()
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn human_us(us: f64) -> String {
    let (v, unit) = if us >= 1e6 {
        (us / 1e6, "s")
    } else if us >= 1e3 {
        (us / 1e3, "ms")
    } else {
        (us, "µs")
    };
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {unit}")
}

fn human_rate(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v >= 1000.0 {
        format!("{:.1}k", v / 1000.0)
    } else {
        format!("{v:.0}")
    }
}

struct Panel {
    y0: f64,
    x_max: f64,
    y_lo: f64,
    y_hi: f64,
    log_y: bool,
}

impl Panel {
    fn plot_w() -> f64 {
        WIDTH - LEFT - RIGHT
    }

    fn x(&self, v: f64) -> f64 {
        LEFT + Self::plot_w() * (v / self.x_max).clamp(0.0, 1.0)
    }

    fn y(&self, v: f64) -> f64 {
        let (v, lo, hi) = if self.log_y {
            (v.max(1.0).log10(), self.y_lo.log10(), self.y_hi.log10())
        } else {
            (v, self.y_lo, self.y_hi)
        };
        let f = if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
        self.y0 + PANEL * (1.0 - f.clamp(0.0, 1.0))
    }

    fn frame(&self, out: &mut String, title: &str) {
        let _ = write!(
            out,
            r##"<rect x="{LEFT}" y="{}" width="{}" height="{PANEL}" fill="none" stroke="#999"/><text x="{LEFT}" y="{}" font-weight="bold">{}</text>"##,
            self.y0,
            Self::plot_w(),
            self.y0 - 8.0,
            esc(title)
        );
    }

    fn y_tick(&self, out: &mut String, v: f64, label: &str) {
        let y = self.y(v);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + Self::plot_w(),
            LEFT - 6.0,
            y + 4.0,
            esc(label)
        );
    }

    fn x_tick(&self, out: &mut String, v: f64, label: &str) {
        let x = self.x(v);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{}" y2="{}" stroke="#eee"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            self.y0,
            self.y0 + PANEL,
            self.y0 + PANEL + 16.0,
            esc(label)
        );
    }

    fn log_ticks(&self, out: &mut String) {
        let mut v = 10f64.powf(self.y_lo.log10().floor());
        while v <= self.y_hi * 1.0001 {
            if v >= self.y_lo * 0.9999 {
                self.y_tick(out, v, &human_us(v));
            }
            v *= 10.0;
        }
    }

    fn polyline(&self, out: &mut String, points: &[(f64, f64)], color: &str) {
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", self.x(*x), self.y(*y)))
            .collect();
        let _ = write!(
            out,
            r##"<polyline fill="none" stroke="{color}" stroke-width="1.6" points="{}"/>"##,
            pts.join(" ")
        );
    }
}

/// The chart of `reports` (one line each, in the legend by label).
pub(crate) fn svg(reports: &[Report]) -> String {
    let height = TOP + 3.0 * (PANEL + GAP) + 20.0;
    let mut out = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>"##
    );
    let (lo, hi) = latency_range(reports);
    let duration = reports
        .iter()
        .map(|r| r.duration_s)
        .fold(0.0f64, f64::max)
        .max(0.1);
    percentiles(&mut out, reports, lo, hi);
    p99_over_time(&mut out, reports, lo, hi, duration);
    throughput(&mut out, reports, duration);
    legend(&mut out, reports);
    out.push_str("</svg>\n");
    out
}

/// The latency axis of both latency panels: whole decades around every
/// latency shown.
fn latency_range(reports: &[Report]) -> (f64, f64) {
    let all_us = reports
        .iter()
        .flat_map(|r| r.curve.iter().map(|(_, us)| *us as f64))
        .chain(
            reports
                .iter()
                .flat_map(|r| r.timeline.iter().map(|i| i.p99_us as f64)),
        );
    let (mut lo, mut hi) = (f64::MAX, 1.0f64);
    for v in all_us {
        lo = lo.min(v.max(1.0));
        hi = hi.max(v);
    }
    if lo > hi {
        lo = 1.0;
    }
    (
        10f64.powf(lo.log10().floor()),
        10f64.powf(hi.log10().ceil().max(lo.log10().floor() + 1.0)),
    )
}

/// Panel 1: latency by percentile.
fn percentiles(out: &mut String, reports: &[Report], lo: f64, hi: f64) {
    let p = Panel {
        y0: TOP,
        x_max: 4.0,
        y_lo: lo,
        y_hi: hi,
        log_y: true,
    };
    p.frame(out, "Latency by percentile");
    p.log_ticks(out);
    for (v, label) in [
        (0.0, "0"),
        (1.0, "90"),
        (2.0, "99"),
        (3.0, "99.9"),
        (4.0, "99.99"),
    ] {
        p.x_tick(out, v, label);
    }
    for (i, r) in reports.iter().enumerate() {
        let points: Vec<(f64, f64)> = r
            .curve
            .iter()
            .map(|(pct, us)| (nines(*pct).min(4.0), *us as f64))
            .collect();
        p.polyline(out, &points, COLORS[i % COLORS.len()]);
    }
}

/// Panel 2: p99 over time.
fn p99_over_time(out: &mut String, reports: &[Report], lo: f64, hi: f64, duration: f64) {
    let p2 = Panel {
        y0: TOP + PANEL + GAP,
        x_max: duration,
        y_lo: lo,
        y_hi: hi,
        log_y: true,
    };
    p2.frame(out, "p99 latency per 100 ms");
    p2.log_ticks(out);
    time_ticks(&p2, out, duration);
    for (i, r) in reports.iter().enumerate() {
        let points: Vec<(f64, f64)> = r
            .timeline
            .iter()
            .filter(|t| t.requests > 0)
            .map(|t| (t.t_s, t.p99_us as f64))
            .collect();
        p2.polyline(out, &points, COLORS[i % COLORS.len()]);
        write_marks(&p2, out, r, COLORS[i % COLORS.len()]);
    }
}

/// Panel 3: throughput over time.
fn throughput(out: &mut String, reports: &[Report], duration: f64) {
    let peak = reports
        .iter()
        .flat_map(|r| r.timeline.iter().map(|t| t.per_s))
        .fold(1.0f64, f64::max);
    let p3 = Panel {
        y0: TOP + 2.0 * (PANEL + GAP),
        x_max: duration,
        y_lo: 0.0,
        y_hi: peak * 1.1,
        log_y: false,
    };
    p3.frame(out, "Lookups per second (per 100 ms)");
    for k in 0..=4 {
        let v = peak * 1.1 * f64::from(k) / 4.0;
        p3.y_tick(out, v, &human_rate(v));
    }
    time_ticks(&p3, out, duration);
    for (i, r) in reports.iter().enumerate() {
        let points: Vec<(f64, f64)> = r.timeline.iter().map(|t| (t.t_s, t.per_s)).collect();
        p3.polyline(out, &points, COLORS[i % COLORS.len()]);
        write_marks(&p3, out, r, COLORS[i % COLORS.len()]);
    }
}

/// The legend: each report's colour, name, rate and p99.
fn legend(out: &mut String, reports: &[Report]) {
    for (i, r) in reports.iter().enumerate() {
        let y = TOP + 10.0 + 34.0 * i as f64;
        let x = WIDTH - RIGHT + 12.0;
        let name = if r.label.is_empty() {
            &r.server
        } else {
            &r.label
        };
        let _ = write!(
            out,
            r##"<rect x="{x}" y="{}" width="12" height="12" fill="{}"/><text x="{}" y="{}">{}</text><text x="{}" y="{}" fill="#555">{:.0}/s, p99 {}</text>"##,
            y - 10.0,
            COLORS[i % COLORS.len()],
            x + 18.0,
            y,
            esc(name),
            x + 18.0,
            y + 14.0,
            r.lookups_per_s,
            human_us(r.latency_us.p99 as f64)
        );
    }
}

fn time_ticks(p: &Panel, out: &mut String, duration: f64) {
    let step = [0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0]
        .into_iter()
        .find(|s| duration / s <= 10.0)
        .unwrap_or(120.0);
    let mut t = 0.0;
    while t <= duration + 1e-9 {
        p.x_tick(out, t, &format!("{t} s"));
        t += step;
    }
}

fn write_marks(p: &Panel, out: &mut String, r: &Report, color: &str) {
    let Some(writes) = &r.writes else { return };
    for at in &writes.at_s {
        let x = p.x(*at);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{}" y2="{}" stroke="{color}" stroke-opacity="0.35" stroke-dasharray="2,3"/>"##,
            p.y0,
            p.y0 + PANEL
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::stats::{Measured, Sample, Writes};

    fn report(label: &str, scale: u32) -> Report {
        let samples = (0..2000u32)
            .map(|i| Sample {
                at_us: i * 500,
                latency_us: (i % 100 + 1) * scale,
                class: 0,
            })
            .collect();
        let m = Measured {
            samples,
            elapsed_us: 1_000_000,
            ..Measured::default()
        };
        Report::new("http://127.0.0.1:1", label, 2, m, &["priority".to_owned()])
    }

    #[test]
    fn human_units() {
        let cases = [
            (1.0, "1 µs"),
            (250.0, "250 µs"),
            (1000.0, "1 ms"),
            (179_967.0, "179.97 ms"),
            (2.5e6, "2.5 s"),
        ];
        for (us, want) in cases {
            assert_eq!(human_us(us), want);
        }
        let cases = [
            (0.0, "0"),
            (950.0, "950"),
            (1500.0, "1.5k"),
            (123_456.0, "123k"),
        ];
        for (v, want) in cases {
            assert_eq!(human_rate(v), want);
        }
    }

    #[test]
    fn percentile_axis() {
        let cases = [
            (0.0, 0.0),
            (90.0, 1.0),
            (99.0, 2.0),
            (99.9, 3.0),
            (100.0, 5.0),
        ];
        for (p, want) in cases {
            assert!((nines(p) - want).abs() < 1e-9, "{p}: {}", nines(p));
        }
    }

    #[test]
    fn draws_every_run_and_the_writes() {
        let mut b = report("hierad <1000 nodes>", 10);
        b.writes = Some(Writes {
            count: 2,
            at_s: vec![0.25, 0.5],
            ..Writes::default()
        });
        let svg = svg(&[report("baseline", 1), b]);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        // Three panels, one line per run and panel.
        assert_eq!(svg.matches("<polyline").count(), 6);
        assert_eq!(svg.matches("stroke-dasharray").count(), 4);
        assert!(svg.contains("hierad &lt;1000 nodes&gt;"));
        assert!(svg.contains(">1 ms<"), "log ticks in human units");
        // Empty runs still make a valid chart.
        let empty = Report::new("u", "", 1, Measured::default(), &[]);
        assert!(svg_is_balanced(&super::svg(&[empty])));
    }

    fn svg_is_balanced(svg: &str) -> bool {
        svg.matches("<svg").count() == 1 && svg.contains("</svg>") && !svg.contains("NaN")
    }
}
