//! `hierad bench summary`: the table bench/run.sh prints from the reports
//! it saved: each figure with its baseline, the ratio (taken within each
//! round, then the median across rounds) and the target; and the one line
//! it prints after each run.

use super::load::Loaded;
use super::stats::Report;
use super::visible::Figures;
use anyhow::{Context, bail};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// A figure. A count stays whole: printed without decimals, however small.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Num {
    value: f64,
    whole: bool,
}

impl Num {
    fn float(value: f64) -> Num {
        Num {
            value,
            whole: false,
        }
    }

    fn count(value: u64) -> Num {
        Num {
            value: value as f64,
            whole: true,
        }
    }
}

/// Two decimals below 10, none from 10 up (and none for a count).
fn fmt(x: Num) -> String {
    if !x.whole && x.value.abs() < 10.0 {
        fixed(x.value, 2)
    } else {
        fixed(x.value, 0)
    }
}

/// `x` with `digits` decimals as Ruby's `format('%.Nf')` writes it: the
/// shortest decimal that reads back as `x`, rounded half to even (2.735,
/// stored as 2.73499…, gives 2.74 where Rust's `{:.2}` gives 2.73).
fn fixed(x: f64, digits: usize) -> String {
    if !x.is_finite() {
        return format!("{x:.digits$}");
    }
    // `d.ddde±x`: the shortest digits that read back as x.
    let text = format!("{:e}", x.abs());
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let all: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    // How many of them stand before the point, and how many are kept.
    let keep = exponent + 1 + digits as i64;
    let mut kept: Vec<u8> = (0..keep.max(0))
        .map(|i| all.get(i as usize).copied().unwrap_or(0))
        .collect();
    let rest: &[u8] = all.get(keep.max(0) as usize..).unwrap_or(&[]);
    let up = match rest.split_first() {
        Some((&first, after)) if keep >= 0 => {
            first > 5
                || (first == 5
                    && (after.iter().any(|&d| d != 0) || kept.last().is_some_and(|d| d % 2 == 1)))
        }
        _ => false,
    };
    if up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, 1);
                break;
            }
            i -= 1;
            if kept[i] == 9 {
                kept[i] = 0;
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    while kept.len() < digits + 1 {
        kept.insert(0, 0);
    }
    let point = kept.len() - digits;
    let text: String = kept.iter().map(|d| char::from(b'0' + d)).collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if digits == 0 {
        format!("{sign}{text}")
    } else {
        format!("{sign}{}.{}", &text[..point], &text[point..])
    }
}

/// The middle value, or the mean of the middle two; a mean is never whole.
fn median(xs: impl IntoIterator<Item = Num>) -> Option<Num> {
    let mut sorted: Vec<Num> = xs.into_iter().collect();
    sorted.sort_by(|a, b| a.value.total_cmp(&b.value));
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some(Num::float(
            (sorted[n / 2 - 1].value + sorted[n / 2].value) / 2.0,
        )),
    }
}

/// `(min..max)` of the per-round ratios.
fn spread(xs: &[Num]) -> String {
    let min = xs
        .iter()
        .copied()
        .min_by(|a, b| a.value.total_cmp(&b.value));
    let max = xs
        .iter()
        .copied()
        .max_by(|a, b| a.value.total_cmp(&b.value));
    match (min, max) {
        (Some(min), Some(max)) => format!("({}..{})", fmt(min), fmt(max)),
        _ => String::new(),
    }
}

/// A ratio with its spread: `0.47 (0.47..0.51)`.
fn ratio(xs: &[Num]) -> String {
    format!("{} {}", fmt(mid(xs)), spread(xs))
}

/// The median of a series with one figure per round (never empty: a
/// results directory has at least one round).
fn mid(xs: &[Num]) -> Num {
    median(xs.iter().copied()).unwrap_or(Num::float(f64::NAN))
}

fn read_json<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not what bench/run.sh writes", path.display()))
}

/// `memory.json`: the big server's resident memory after all runs.
#[derive(Deserialize)]
struct Memory {
    rss_bytes: u64,
    peak_rss_bytes: u64,
}

/// `startup.json`: from the process start to the first answer.
#[derive(Deserialize)]
struct Startup {
    startup_s: f64,
}

/// The reports of a results directory, by run name and round.
struct Results {
    dir: PathBuf,
    rounds: Vec<u32>,
}

impl Results {
    /// The rounds are those `baseline-rN.json` was saved for.
    fn open(dir: &Path) -> anyhow::Result<Results> {
        let entries =
            std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
        let mut rounds = Vec::new();
        for entry in entries {
            let name = entry?.file_name();
            let round = name
                .to_str()
                .and_then(|n| n.strip_prefix("baseline-r"))
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<u32>().ok());
            rounds.extend(round);
        }
        if rounds.is_empty() {
            bail!(
                "{} has no baseline-r1.json: not a results directory of bench/run.sh",
                dir.display()
            );
        }
        rounds.sort_unstable();
        Ok(Results {
            dir: dir.to_owned(),
            rounds,
        })
    }

    fn read<T: DeserializeOwned>(&self, file: &str) -> anyhow::Result<T> {
        read_json(&self.dir.join(file))
    }

    /// `f` of run `name` in each round.
    fn each(&self, name: &str, f: impl Fn(&Report) -> Num) -> anyhow::Result<Vec<Num>> {
        self.rounds
            .iter()
            .map(|round| Ok(f(&self.read::<Report>(&format!("{name}-r{round}.json"))?)))
            .collect()
    }

    /// `f` of run `a` over `f` of run `b`, round by round.
    fn per_round(&self, a: &str, b: &str, f: impl Fn(&Report) -> Num) -> anyhow::Result<Vec<Num>> {
        let over = self.each(a, &f)?;
        let under = self.each(b, &f)?;
        Ok(over
            .iter()
            .zip(&under)
            .map(|(a, b)| Num::float(a.value / b.value))
            .collect())
    }

    fn rps(&self, name: &str) -> anyhow::Result<Num> {
        Ok(mid(&self.each(name, rps_of)?))
    }

    /// The median p99 latency in milliseconds.
    fn p99(&self, name: &str) -> anyhow::Result<Num> {
        Ok(mid(&self.each(name, |r| {
            Num::float(r.latency_us.p99 as f64 / 1000.0)
        })?))
    }

    /// The median answer-cache hit ratio as a percentage, `0` without one.
    fn cache(&self, name: &str) -> anyhow::Result<String> {
        let mut ratios = Vec::new();
        for round in &self.rounds {
            let report: Report = self.read(&format!("{name}-r{round}.json"))?;
            ratios.extend(report.cache.map(|c| Num::float(c.hit_ratio)));
        }
        let ratio = median(ratios).map_or(0.0, |r| r.value);
        Ok(fixed(100.0 * ratio, 0))
    }
}

fn rps_of(r: &Report) -> Num {
    Num::float(r.lookups_per_s)
}

fn p99_of(r: &Report) -> Num {
    Num::count(r.latency_us.p99)
}

/// The table's rows: figure, hierad, baseline, ratio, target, verdict.
#[derive(Default)]
struct Table {
    rows: Vec<[String; 6]>,
}

impl Table {
    fn row(&mut self, cells: [&str; 5], met: Option<bool>) {
        let verdict = match met {
            None => "",
            Some(true) => "met",
            Some(false) => "MISSED",
        };
        let [figure, hierad, baseline, ratio, target] = cells.map(str::to_owned);
        self.rows
            .push([figure, hierad, baseline, ratio, target, verdict.to_owned()]);
    }

    /// Columns padded to their widest cell, two spaces apart.
    fn text(&self) -> String {
        let header =
            ["figure", "hierad", "baseline", "ratio", "target", "verdict"].map(str::to_owned);
        let lines: Vec<&[String; 6]> = std::iter::once(&header).chain(&self.rows).collect();
        let widths: Vec<usize> = (0..6)
            .map(|i| {
                lines
                    .iter()
                    .map(|r| r[i].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for line in lines {
            let cells: Vec<String> = line
                .iter()
                .zip(&widths)
                .map(|(cell, &width)| format!("{cell:<width$}"))
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out
    }
}

/// The table of bench/run.sh from the results directory it wrote.
///
/// # Errors
///
/// A report is missing or is not what bench/run.sh writes.
pub(crate) fn table(dir: &Path) -> anyhow::Result<String> {
    let r = Results::open(dir)?;
    let mut table = Table::default();
    throughput(&r, &mut table)?;
    scale(&r, &mut table)?;
    let w = r.per_round("writes", "idle", p99_of)?;
    let writes = r.each("writes", |r| {
        Num::count(r.writes.as_ref().map_or(0, |w| w.count))
    })?;
    table.row(
        [
            "4. p99 while writing",
            &format!(
                "{} ms ({} writes, cache {}% hits)",
                fmt(r.p99("writes")?),
                fmt(mid(&writes)),
                r.cache("writes")?
            ),
            &format!("idle {} ms", fmt(r.p99("idle")?)),
            &ratio(&w),
            "<= 1.5",
        ],
        Some(mid(&w).value <= 1.5),
    );
    visible_row(&r, &mut table)?;
    cli_rows(dir, &mut table)?;
    Ok(table.text())
}

/// Figures 1 and 2: hierad against the bare server.
fn throughput(r: &Results, table: &mut Table) -> anyhow::Result<()> {
    let t = r.per_round("hierad-big", "baseline", rps_of)?;
    table.row(
        [
            &format!("1. throughput, {} rounds", r.rounds.len()),
            &format!(
                "{}/s (cache {}% hits)",
                fmt(r.rps("hierad-big")?),
                r.cache("hierad-big")?
            ),
            &format!("bare hyper {}/s", fmt(r.rps("baseline")?)),
            &ratio(&t),
            ">= 0.70",
        ],
        Some(mid(&t).value >= 0.70),
    );
    let p99 = r.p99("hierad-big")?;
    table.row(
        [
            "   p99 latency",
            &format!("{} ms", fmt(p99)),
            &format!("bare hyper {} ms", fmt(r.p99("baseline")?)),
            &fmt(mid(&r.per_round("hierad-big", "baseline", p99_of)?)),
            "<= 5 ms",
        ],
        Some(p99.value <= 5.0),
    );
    let u = r.per_round("hierad-unique", "baseline", rps_of)?;
    table.row(
        [
            "   every lookup a cache miss",
            &format!(
                "{}/s, p99 {} ms",
                fmt(r.rps("hierad-unique")?),
                fmt(r.p99("hierad-unique")?)
            ),
            "bare hyper",
            &ratio(&u),
            "(no target)",
        ],
        None,
    );
    let l = r.per_round("large", "baseline", rps_of)?;
    let large = r.rps("large")?;
    table.row(
        [
            "2. large answers (55 KB hash)",
            &format!(
                "{}/s (cache {}% hits), p99 {} ms",
                fmt(large),
                r.cache("large")?,
                fmt(r.p99("large")?)
            ),
            "bare hyper",
            &ratio(&l),
            ">= 10,000/s",
        ],
        Some(large.value >= 10_000.0),
    );
    let lu = r.per_round("large-unique", "baseline", rps_of)?;
    table.row(
        [
            "   every one a full lookup",
            &format!(
                "{}/s, p99 {} ms",
                fmt(r.rps("large-unique")?),
                fmt(r.p99("large-unique")?)
            ),
            "bare hyper",
            &ratio(&lu),
            "(no target)",
        ],
        None,
    );
    let h = r.per_round("hierad-small", "baseline", rps_of)?;
    table.row(
        [
            "   answer cache hot (10 nodes)",
            &format!(
                "{}/s (cache {}% hits), p99 {} ms",
                fmt(r.rps("hierad-small")?),
                r.cache("hierad-small")?,
                fmt(r.p99("hierad-small")?)
            ),
            "bare hyper",
            &ratio(&h),
            "(no target)",
        ],
        None,
    );
    Ok(())
}

/// Figure 3: the big environment against the small one, memory, start-up
/// and import.
fn scale(r: &Results, table: &mut Table) -> anyhow::Result<()> {
    let big: Loaded = r.read("import-big.json")?;
    let small: Loaded = r.read("import-small.json")?;
    let s = r.per_round("hierad-unique", "hierad-small-unique", rps_of)?;
    table.row(
        [
            &format!(
                "3. scale: {} nodes vs {}, full lookups",
                big.levels.saturating_sub(1),
                small.levels.saturating_sub(1)
            ),
            &format!("{}/s", fmt(r.rps("hierad-unique")?)),
            &format!("{}/s", fmt(r.rps("hierad-small-unique")?)),
            &ratio(&s),
            ">= 0.80",
        ],
        Some(mid(&s).value >= 0.8),
    );
    let m = r.per_round("hierad-big", "hierad-small", rps_of)?;
    table.row(
        [
            "   same, the mix (cache included)",
            &format!("{}/s", fmt(r.rps("hierad-big")?)),
            &format!("{}/s", fmt(r.rps("hierad-small")?)),
            &ratio(&m),
            "(no target)",
        ],
        None,
    );
    let memory: Memory = r.read("memory.json")?;
    let mib = 1024.0 * 1024.0;
    let gib = 1024.0 * mib;
    let peak = memory.peak_rss_bytes as f64;
    table.row(
        [
            "   server RSS",
            &format!(
                "{} MiB (peak {} MiB)",
                fixed(memory.rss_bytes as f64 / mib, 0),
                fixed(peak / mib, 0)
            ),
            "1 GiB",
            &fmt(Num::float(peak / gib)),
            "<= 1 GiB",
        ],
        Some(peak <= gib),
    );
    let startup = r.read::<Startup>("startup.json")?.startup_s;
    table.row(
        [
            "   start-up to first answer",
            &format!("{} s", fixed(startup, 2)),
            "2 s",
            &fmt(Num::float(startup / 2.0)),
            "<= 2 s",
        ],
        Some(startup <= 2.0),
    );
    table.row(
        [
            "   import through the API",
            &format!(
                "{} s: {} docs/s, {} nodes/s, {} MB/s",
                fixed(big.seconds, 1),
                fixed(big.documents_per_s, 0),
                fixed(big.levels_per_s, 1),
                fixed(big.mb_per_s, 1)
            ),
            "",
            "",
            "(reported)",
        ],
        None,
    );
    Ok(())
}

/// Figure 6, when it ran: a write seen through another server, against
/// the same server.
fn visible_row(r: &Results, table: &mut Table) -> anyhow::Result<()> {
    if !r.dir.join("visible.json").exists() {
        return Ok(());
    }
    let other: Figures = r.read("visible.json")?;
    let same: Figures = r.read("visible-same.json")?;
    let ms = |us: u64| fmt(Num::float(us as f64 / 1000.0));
    table.row(
        [
            &format!(
                "6. write to visible on another server ({} writes)",
                other.writes
            ),
            &format!(
                "p50 {} ms, p99 {} ms",
                ms(other.visible_p50_us),
                ms(other.visible_p99_us)
            ),
            &format!("same server p99 {} ms", ms(same.visible_p99_us)),
            &fmt(Num::float(
                other.visible_p99_us as f64 / same.visible_p99_us as f64,
            )),
            "p99 < 50 ms",
        ],
        Some(other.visible_p99_us < 50_000),
    );
    Ok(())
}

/// Figure 5, when bench/lookup-cli.sh ran: its lines after the header,
/// `NAME HIERAD_MS HIERA_MS RATIO`.
fn cli_rows(dir: &Path, table: &mut Table) -> anyhow::Result<()> {
    let path = dir.join("cli.txt");
    if !path.exists() {
        return Ok(());
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    for line in text.lines().skip(1) {
        let [name, ours, theirs, _, ..] = line.split_whitespace().collect::<Vec<_>>()[..] else {
            continue;
        };
        let (Ok(ours_ms), Ok(theirs_ms)) = (ours.parse::<f64>(), theirs.parse::<f64>()) else {
            bail!(
                "{}: not a line of bench/lookup-cli.sh: {line:?}",
                path.display()
            );
        };
        table.row(
            [
                &format!("5. lookup per call: {name}"),
                &format!("{ours} ms"),
                &format!("hiera {theirs} ms"),
                &fixed(ours_ms / theirs_ms, 3),
                "(reported)",
            ],
            None,
        );
    }
    Ok(())
}

/// The line bench/run.sh prints after each run: label, lookups/s, p99,
/// errors.
///
/// # Errors
///
/// The report cannot be read.
pub(crate) fn run_line(path: &Path) -> anyhow::Result<String> {
    let r: Report = read_json(path)?;
    Ok(format!(
        "  {:<18} {:>9}/s  p99 {:>6} ms  errors {}\n",
        r.label,
        fixed(r.lookups_per_s, 0),
        fixed(r.latency_us.p99 as f64 / 1000.0, 2),
        r.errors.total
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/bench-summary")
            .join(name)
    }

    /// The fixtures' summary.txt files are what bench/summary.rb, the Ruby
    /// script this replaces, printed for them: three rounds (odd medians,
    /// a whole count of writes, figures 5 and 6) and two (means of the
    /// middle two, a count of writes that is not whole, neither figure).
    #[test]
    fn the_table_is_the_ruby_scripts() {
        for name in ["three-rounds", "two-rounds"] {
            let want = std::fs::read_to_string(fixture(name).join("summary.txt")).unwrap();
            assert_eq!(table(&fixture(name)).unwrap(), want, "{name}");
        }
    }

    #[test]
    fn medians_and_figures() {
        let n = |v: f64| Num::float(v);
        assert_eq!(median([n(3.0), n(1.0), n(2.0)]), Some(n(2.0)));
        assert_eq!(median([n(4.0), n(1.0)]), Some(n(2.5)));
        assert_eq!(median([Num::count(5), Num::count(6)]), Some(n(5.5)));
        assert_eq!(median([Num::count(5)]), Some(Num::count(5)));
        assert_eq!(median([]), None);
        assert_eq!(fmt(n(0.4049)), "0.40");
        assert_eq!(fmt(n(10.5)), "10");
        assert_eq!(fmt(Num::count(6)), "6");
        assert_eq!(spread(&[n(0.5), n(0.25), n(12.0)]), "(0.25..12)");
        assert_eq!(spread(&[]), "");
    }

    /// What Ruby's `format` printed for these.
    #[test]
    fn fixed_rounds_as_ruby() {
        let cases: &[(f64, usize, &str)] = &[
            (2.735, 2, "2.74"),
            (1.005, 2, "1.00"),
            (0.015, 2, "0.02"),
            (0.025, 2, "0.02"),
            (2.675, 2, "2.68"),
            (2.345, 2, "2.34"),
            (0.125, 2, "0.12"),
            (2.5, 0, "2"),
            (3.5, 0, "4"),
            (0.5, 0, "0"),
            (10.5, 0, "10"),
            (11.5, 0, "12"),
            (123456.5, 2, "123456.50"),
            (9.999, 2, "10.00"),
            (0.0004, 2, "0.00"),
            (0.0, 1, "0.0"),
            (58029.123, 0, "58029"),
            (1e-7, 3, "0.000"),
            (0.0235, 3, "0.024"),
        ];
        for &(x, digits, want) in cases {
            assert_eq!(fixed(x, digits), want, "{x} to {digits}");
        }
    }

    #[test]
    fn a_run_in_one_line() {
        let line = run_line(&fixture("three-rounds").join("hierad-big-r1.json")).unwrap();
        assert!(line.starts_with("  hierad-big "), "{line}");
        assert!(
            line.contains("/s  p99 ") && line.ends_with(" ms  errors 0\n"),
            "{line}"
        );
    }

    #[test]
    fn errors_name_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let err = table(dir.path()).unwrap_err().to_string();
        assert!(err.contains("has no baseline-r1.json"), "{err}");
        for file in ["baseline-r1.json", "hierad-big-r1.json"] {
            std::fs::copy(fixture("two-rounds").join(file), dir.path().join(file)).unwrap();
        }
        let err = format!("{:#}", table(dir.path()).unwrap_err());
        assert!(err.contains("hierad-unique-r1.json"), "{err}");
        std::fs::write(dir.path().join("hierad-unique-r1.json"), "{}").unwrap();
        let err = format!("{:#}", table(dir.path()).unwrap_err());
        assert!(err.contains("is not what bench/run.sh writes"), "{err}");
    }
}
