//! `GET …/resources/{r}/values?effective&show_lookup`: the effective
//! document with each top-level key's origin (level, kind, version,
//! author, time), from the published snapshot's stored documents and the
//! one rule in [`crate::configdb::provenance`].

use crate::api;
use crate::configdb::provenance::{self, Layer};
use crate::configdb::{DocAddress, DocKind, LevelPath, Snapshot};
use crate::server::http::error::ApiError;
use axum::Json;
use axum::response::{IntoResponse, Response};

/// The answer to `show_lookup` for the document at `at`.
///
/// # Errors
///
/// `at` names overrides (effective folds values and overrides); the
/// environment, a level or the resource does not exist.
pub(super) fn show_lookup(snapshot: &Snapshot, at: &DocAddress) -> Result<Response, ApiError> {
    if at.kind != DocKind::Values {
        return Err(ApiError::BadRequest(
            "show_lookup applies to the effective values (…/values?effective&show_lookup)"
                .to_owned(),
        ));
    }
    let effective = snapshot.try_effective(at.env, &at.path, &at.resource)?;
    let pairs = at.path.pairs();
    let prefixes: Vec<LevelPath> = (0..=pairs.len())
        .map(|depth| LevelPath::new(pairs[..depth].to_vec()))
        .collect();
    let mut stored = Vec::with_capacity(2 * prefixes.len());
    for prefix in &prefixes {
        for kind in [DocKind::Values, DocKind::Overrides] {
            if let Some(doc) = snapshot.stored(at.env, prefix, &at.resource, kind)? {
                stored.push((prefix, kind, doc));
            }
        }
    }
    let layers: Vec<Layer<'_>> = stored
        .iter()
        .map(|(path, kind, doc)| Layer {
            path,
            kind: *kind,
            version: &doc.version,
            content: &doc.content,
        })
        .collect();
    let origins = provenance::origins(&layers);
    let answer = api::ShowLookup::new(effective.as_ref().clone(), &origins);
    Ok(Json(answer).into_response())
}

#[cfg(test)]
mod tests;
