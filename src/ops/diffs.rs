//! Diffs (see docs/api.md, "Diffs"): between two versions of one stored
//! document, and between a resource's effective document at two
//! generations (or tags). Written once over a [`Store`], used by the
//! server's route and by `hierad config diff --db`; the comparison itself
//! is [`crate::configdb::diff`].

use super::{OpsError, Result};
use crate::api::DiffAnswer;
use crate::configdb::{DocAddress, DocKind, NotFound, Snapshot};
use crate::hiera::Hash;
use crate::store::Store;

/// A point in the change log: a generation, or a tag naming one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Point {
    Generation(u64),
    Tag(String),
}

impl Point {
    /// The generation this point names. NotFound: an unknown tag.
    fn generation(&self, store: &dyn Store) -> Result<u64> {
        match self {
            Point::Generation(g) => Ok(*g),
            Point::Tag(name) => Ok(store.tag(name)?.generation),
        }
    }
}

/// Which two states a diff compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Range {
    /// Two versions of the stored document (`None`: the latest, and the
    /// one before `to`). Version 0 is the empty document before the first.
    Versions { from: Option<u64>, to: Option<u64> },
    /// The effective document at two points (`to`: `None` is the newest).
    Effective { from: Point, to: Option<Point> },
}

/// The diff of the document at `at` over `range`.
///
/// # Errors
///
/// NotFound: the environment, level, resource, a version or a tag;
/// Invalid: an effective diff of overrides, a generation not reached
/// yet; Gone: a generation retention pruned.
pub(crate) fn diff(store: &dyn Store, at: &DocAddress, range: &Range) -> Result<DiffAnswer> {
    store.check_registered(at.env, &at.path)?;
    match range {
        Range::Versions { from, to } => {
            let to = match to {
                Some(n) => *n,
                None => store.history(at)?.last().map_or(0, |v| v.number),
            };
            let from = from.unwrap_or(to.saturating_sub(1));
            // `to` first: a missing one is named, not the `from` it implied.
            let b = version(store, at, to)?;
            let a = version(store, at, from)?;
            Ok(DiffAnswer::new(from, to, &a, &b))
        }
        Range::Effective { from, to } => {
            if at.kind != DocKind::Values {
                return Err(OpsError::Refused(
                    "an effective diff folds values and overrides: name the values".to_owned(),
                ));
            }
            let from = from.generation(store)?;
            let to = match to {
                Some(point) => point.generation(store)?,
                None => store.generation()?,
            };
            let a = effective_at(store, at, from)?;
            let b = effective_at(store, at, to)?;
            Ok(DiffAnswer::new(from, to, &a, &b))
        }
    }
}

/// Version `number` of the stored document (0: the empty document before
/// the first; a deletion marker reads as empty).
fn version(store: &dyn Store, at: &DocAddress, number: u64) -> Result<Hash> {
    if number == 0 {
        return Ok(Hash::default());
    }
    match store.get(at, Some(number))? {
        Some((_, doc)) => Ok(doc),
        None => {
            let latest = store.history(at)?.last().map(|v| v.number);
            Err(crate::configdb::ConfigError::from(NotFound::Version {
                doc: at.clone(),
                version: number,
                latest,
            })
            .into())
        }
    }
}

/// The effective document of `at`'s resource at `at.path` as of
/// `generation`.
fn effective_at(store: &dyn Store, at: &DocAddress, generation: u64) -> Result<Hash> {
    let snapshot = Snapshot::build(store.load_at(generation, Some(at.env))?);
    let doc = snapshot.try_effective(at.env, &at.path, &at.resource)?;
    Ok(Hash::clone(&doc))
}
