//! How old versions of a document are kept small: the latest version of
//! every document is stored as plain wire JSON (so `load_all` reads it
//! without unpacking), and when a newer version replaces it, it is packed
//! with zstd, as a delta against the version written after it.
//!
//! Why deltas against the *next* version (reverse deltas): the newest text
//! is always at hand when a version is packed (it is being written), the
//! oldest versions depend on newer ones and never the other way round, so
//! pruning the oldest never breaks a chain, and a typical write changes a
//! few keys of a large document: the delta costs about the size of the
//! change (bench/LOG.md, "History storage", has the figures).
//!
//! A chain of deltas is read from the head down, so every
//! [`KEYFRAME_EVERY`]th version is packed alone instead: reading any old
//! version unpacks at most that many.

use super::{Result, StoreError};
use zstd::zstd_safe::{self, CCtx, CParameter, DCtx, DParameter};

/// How a stored version's bytes are kept (the `packing` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Packing {
    /// `content` holds the wire JSON (every head; versions written before
    /// packing existed; deletion markers, whose content is empty).
    Plain = 0,
    /// `packed` holds the wire JSON compressed alone.
    Alone = 1,
    /// `packed` holds the wire JSON compressed against the text of the
    /// next version (number + 1), which holds content.
    Delta = 2,
}

impl Packing {
    pub(crate) fn from_column(n: i64) -> Option<Packing> {
        match n {
            0 => Some(Packing::Plain),
            1 => Some(Packing::Alone),
            2 => Some(Packing::Delta),
            _ => None,
        }
    }
}

/// Every this-many versions (by number) one is packed alone, which bounds
/// how many deltas a read of an old version unpacks.
pub(crate) const KEYFRAME_EVERY: u64 = 16;

/// zstd's level: 3 (its default) packed Fuel documents within a few
/// percent of level 9 at a fifth of the time (bench/LOG.md, "History storage").
const LEVEL: i32 = 3;

/// A base at least this large turns on long-distance matching, which
/// finds the unchanged stretches of a large document far back in it.
const LONG_DISTANCE_FROM: usize = 1 << 20;

/// How `text`, version `number`, is packed when version `number + 1`
/// with text `next` (None: a deletion marker) replaces it.
pub(crate) fn pack(number: u64, text: &str, next: Option<&str>) -> Result<(Packing, Vec<u8>)> {
    match next {
        Some(base) if number % KEYFRAME_EVERY != 0 => {
            Ok((Packing::Delta, compress(text.as_bytes(), base.as_bytes())?))
        }
        _ => Ok((Packing::Alone, compress(text.as_bytes(), &[])?)),
    }
}

/// The text packed as `packing` (`base`: the next version's text, for a
/// delta). `what` names the version for the error of a corrupt row.
pub(crate) fn unpack(
    what: impl FnOnce() -> String,
    packing: Packing,
    bytes: &[u8],
    base: Option<&str>,
) -> Result<String> {
    let base = match (packing, base) {
        (Packing::Alone, _) => &[][..],
        (Packing::Delta, Some(base)) => base.as_bytes(),
        (Packing::Delta, None) | (Packing::Plain, _) => {
            return Err(StoreError::Corrupt {
                what: what(),
                reason: "a delta without the version it was packed against".to_owned(),
            });
        }
    };
    decompress(bytes, base)
        .and_then(|raw| String::from_utf8(raw).map_err(|e| e.to_string()))
        .map_err(|reason| StoreError::Corrupt {
            what: what(),
            reason,
        })
}

fn zstd_error(code: usize) -> StoreError {
    StoreError::Database(zstd_safe::get_error_name(code).into())
}

/// The window must reach back over the whole base (the "prefix") and the
/// text itself, or matches in the base are not found.
fn window_log(len: usize) -> u32 {
    let bits = usize::BITS - len.max(1).leading_zeros();
    bits.clamp(10, 31)
}

fn compress(text: &[u8], base: &[u8]) -> Result<Vec<u8>> {
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::CompressionLevel(LEVEL))
        .map_err(zstd_error)?;
    if !base.is_empty() {
        cctx.set_parameter(CParameter::WindowLog(window_log(base.len() + text.len())))
            .map_err(zstd_error)?;
        if base.len() >= LONG_DISTANCE_FROM {
            cctx.set_parameter(CParameter::EnableLongDistanceMatching(true))
                .map_err(zstd_error)?;
        }
        cctx.ref_prefix(base).map_err(zstd_error)?;
    }
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(text.len()));
    cctx.compress2(&mut out, text).map_err(zstd_error)?;
    Ok(out)
}

/// The most a packed frame may unpack to: far over any document a
/// server parses (a body's tree is 20 to 70 times its text), and under
/// what a corrupt frame's claimed size could make the reservation below
/// take (it aborted the process on a size of petabytes).
const MAX_UNPACKED: u64 = 1 << 30;

fn decompress(bytes: &[u8], base: &[u8]) -> Result<Vec<u8>, String> {
    let size = match zstd_safe::get_frame_content_size(bytes) {
        Ok(Some(size)) if size > MAX_UNPACKED => {
            return Err(format!(
                "the packed frame claims {size} bytes, more than any document ({MAX_UNPACKED})"
            ));
        }
        Ok(Some(size)) => usize::try_from(size).map_err(|_| "too large".to_owned())?,
        Ok(None) => return Err("the packed frame does not say its size".to_owned()),
        Err(_) => return Err("not a zstd frame".to_owned()),
    };
    let name = |code| zstd_safe::get_error_name(code).to_owned();
    let mut dctx = DCtx::create();
    dctx.set_parameter(DParameter::WindowLogMax(31))
        .map_err(name)?;
    if !base.is_empty() {
        dctx.ref_prefix(base).map_err(name)?;
    }
    let mut out = Vec::with_capacity(size);
    dctx.decompress(&mut out, bytes).map_err(name)?;
    if out.len() != size {
        return Err(format!(
            "unpacked {} bytes, the frame says {size}",
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hiera::{Hash, Value};
    use std::time::Instant;

    fn doc(keys: usize, changed: usize) -> String {
        let mut s = String::from("{");
        for i in 0..keys {
            let v = if i == changed {
                999_999
            } else {
                i * 7919 % 10_007
            };
            s.push_str(&format!(
                "\"key{i}\":{{\"host\":\"node-{i}.domain.tld\",\"n\":{v}}},"
            ));
        }
        s.push_str("\"end\":true}");
        s
    }

    #[test]
    fn packs_and_unpacks_alone_and_as_deltas() {
        let old = doc(20_000, 5);
        let new = doc(20_000, 10_000);
        for (number, next) in [(1, Some(new.as_str())), (16, Some(new.as_str())), (3, None)] {
            let (packing, bytes) = pack(number, &old, next).unwrap();
            let want = if next.is_some() && number != 16 {
                Packing::Delta
            } else {
                Packing::Alone
            };
            assert_eq!(packing, want, "version {number}");
            assert_eq!(unpack(String::new, packing, &bytes, next).unwrap(), old);
            if packing == Packing::Delta {
                // A one-key change of a ~700 KB document packs to bytes.
                assert!(bytes.len() < 200, "{} bytes", bytes.len());
            }
        }
    }

    #[test]
    fn a_corrupt_or_baseless_row_is_an_error() {
        let text = doc(100, 1);
        let (_, bytes) = pack(1, &text, Some(&doc(100, 2))).unwrap();
        for (packing, bytes, base) in [
            (Packing::Delta, &bytes[..], None),
            (Packing::Alone, &b"not zstd"[..], None),
            (Packing::Delta, &bytes[..bytes.len() - 3], Some("{}")),
        ] {
            let err = unpack(|| "version 1".to_owned(), packing, bytes, base).unwrap_err();
            assert!(
                matches!(&err, StoreError::Corrupt { what, .. } if what == "version 1"),
                "{err:?}"
            );
        }
    }

    /// A frame whose header claims a petabyte: refused before anything is
    /// reserved (the reservation aborted the process).
    #[test]
    fn a_frame_claiming_more_than_any_document_is_refused() {
        // Magic number, then a single-segment header with an 8-byte size.
        let mut frame = vec![0x28, 0xB5, 0x2F, 0xFD, 0xE0];
        frame.extend_from_slice(&(1u64 << 50).to_le_bytes());
        let err = decompress(&frame, &[]).unwrap_err();
        assert!(err.contains("claims 1125899906842624 bytes"), "{err}");
    }

    /// A generator of `n` base64 characters, the same every run.
    fn random_strings() -> impl FnMut(usize) -> String {
        let mut seed: u64 = 42;
        move |n| {
            (0..n)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    char::from(
                        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                            [(seed >> 58) as usize],
                    )
                })
                .collect()
        }
    }

    /// The documents measured: a Fuel astute, 16 MiB of its copies, 16 MiB
    /// of random strings.
    fn measured_documents(random: &mut dyn FnMut(usize) -> String) -> Vec<(&'static str, Hash)> {
        let astute =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/data/astute.yaml"))
                .unwrap();
        let Value::Hash(fuel) = crate::hiera::yaml::load(&astute).unwrap() else {
            panic!()
        };
        let mut random_doc = Hash::default();
        let mut copies = Hash::default();
        let mut i = 0;
        while crate::wire::to_string(&Value::Hash(random_doc.clone())).len() < 16 << 20 {
            for _ in 0..50_000 {
                random_doc.insert(Value::str(format!("key{i}")), Value::str(random(40)));
                i += 1;
            }
        }
        let one = crate::wire::to_string(&Value::Hash(fuel.clone())).len();
        for node in 0..(16 << 20) / one + 1 {
            let mut doc = fuel.clone();
            doc.insert(
                Value::str("fqdn"),
                Value::str(format!("node-{node}.domain.tld")),
            );
            copies.insert(Value::str(format!("node-{node}")), Value::Hash(doc));
        }
        vec![
            ("Fuel astute (data/astute.yaml)", fuel),
            ("16 MiB, Fuel copies", copies),
            ("16 MiB, random strings", random_doc),
        ]
    }

    /// One row of the table: what, bytes kept, ms to pack and to unpack
    /// one version.
    type Row = (String, usize, f64, f64);

    /// Each old version compressed alone at zstd `level`.
    fn zstd_alone(old: &[String], level: i32) -> Row {
        let started = Instant::now();
        let mut total = 0;
        let mut packed_all = Vec::new();
        for text in old {
            let mut c = CCtx::create();
            c.set_parameter(CParameter::CompressionLevel(level))
                .unwrap();
            let mut out = Vec::with_capacity(zstd_safe::compress_bound(text.len()));
            c.compress2(&mut out, text.as_bytes()).unwrap();
            total += out.len();
            packed_all.push(out);
        }
        let pack_ms = per_version_ms(started, old);
        let started = Instant::now();
        for p in &packed_all {
            decompress(p, &[]).unwrap();
        }
        let read_ms = per_version_ms(started, old);
        let what = format!("zstd -{level}, each version alone");
        (what, total, pack_ms, read_ms)
    }

    /// The chosen packing: each old version a delta against the next.
    fn delta_against_next(versions: &[String]) -> Row {
        let old = &versions[..versions.len() - 1];
        let started = Instant::now();
        let mut total = 0;
        let mut packed_all = Vec::new();
        for (n, text) in old.iter().enumerate() {
            let (_, bytes) = pack(n as u64 + 1, text, Some(&versions[n + 1])).unwrap();
            total += bytes.len();
            packed_all.push(bytes);
        }
        let pack_ms = per_version_ms(started, old);
        let started = Instant::now();
        for (n, p) in packed_all.iter().enumerate() {
            let packing = if (n as u64 + 1) % KEYFRAME_EVERY == 0 {
                Packing::Alone
            } else {
                Packing::Delta
            };
            assert_eq!(
                unpack(String::new, packing, p, Some(&versions[n + 1])).unwrap(),
                old[n]
            );
        }
        let read_ms = per_version_ms(started, old);
        let what = format!("zstd -{LEVEL} delta vs next, alone every {KEYFRAME_EVERY} (chosen)");
        (what, total, pack_ms, read_ms)
    }

    fn per_version_ms(started: Instant, old: &[String]) -> f64 {
        started.elapsed().as_secs_f64() * 1000.0 / old.len() as f64
    }

    /// The figures of bench/LOG.md's "History storage": bytes kept for
    /// 20 one-key writes under each way of storing old versions.
    /// `cargo test --lib store::packing::tests::measure -- --ignored --nocapture`
    #[test]
    #[ignore = "a measurement, not a check"]
    fn measure_history_options() {
        let mut random = random_strings();
        for (name, base) in measured_documents(&mut random) {
            // Version 1 and 20 one-key writes.
            let mut versions = vec![crate::wire::to_string(&Value::Hash(base.clone()))];
            let mut doc = base;
            for w in 0..20 {
                doc.insert(Value::str(format!("written_{w}")), Value::str(random(16)));
                versions.push(crate::wire::to_string(&Value::Hash(doc.clone())));
            }
            let old = &versions[..versions.len() - 1];
            let full: usize = old.iter().map(String::len).sum();
            let mut rows: Vec<Row> = vec![("full copies (before)".into(), full, 0.0, 0.0)];
            rows.extend([1, 3, 9].map(|level| zstd_alone(old, level)));
            rows.push(delta_against_next(&versions));
            println!("\n{name}: {} bytes per version", versions[0].len());
            println!(
                "| storage of the 20 old versions | bytes | vs full | pack ms/version | unpack ms/version (one step) |"
            );
            println!("| --- | ---: | ---: | ---: | ---: |");
            for (what, bytes, p, r) in rows {
                println!(
                    "| {what} | {bytes} | {:.4} | {p:.1} | {r:.1} |",
                    bytes as f64 / full as f64
                );
            }
        }
    }
}
