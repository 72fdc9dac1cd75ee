//! The snapshot's documents kept unparsed ([`crate::configdb::unparsed`]):
//! a read that needs one fails with Hiera's error for the file, as Hiera
//! fails only the lookups that read a broken file; every other read
//! answers.

use super::Snapshot;
use crate::configdb::error::ConfigError;
use crate::configdb::level::LevelPath;
use crate::configdb::model::{DocAddress, DocKind};
use crate::configdb::unparsed::UnparsedDocument;
use std::sync::Arc;

/// Whether a read of `resource` at `path` in `env` needs the document at
/// `at`: the one of `kind` at the path's slot, or (`None`: an effective
/// document) any of the resource's documents on the path.
pub(super) fn reads(
    at: &DocAddress,
    (env, path, resource): (i64, &LevelPath, &str),
    kind: Option<DocKind>,
) -> bool {
    at.env == env
        && at.resource == resource
        && match kind {
            Some(kind) => at.kind == kind && at.path.slot() == path.slot(),
            None => at.path.slot().is_none_or(|lv| path.pairs().contains(lv)),
        }
}

impl Snapshot {
    /// Fails when the read (as [`reads`] names it) needs a document kept
    /// unparsed.
    pub(super) fn check_parsed(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
        kind: Option<DocKind>,
    ) -> Result<(), ConfigError> {
        match self
            .unparsed
            .iter()
            .find(|u| reads(&u.at, (env, path, resource), kind))
        {
            Some(u) => Err(ConfigError::Unparsed(Box::new(u.clone()))),
            None => Ok(()),
        }
    }

    /// The documents kept unparsed, less the one of `kind` at `path`'s slot
    /// (a write replaced it).
    pub(super) fn unparsed_without(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
        kind: DocKind,
    ) -> Arc<Vec<UnparsedDocument>> {
        let replaced = |u: &UnparsedDocument| reads(&u.at, (env, path, resource), Some(kind));
        if !self.unparsed.iter().any(replaced) {
            return Arc::clone(&self.unparsed);
        }
        Arc::new(
            self.unparsed
                .iter()
                .filter(|u| !replaced(u))
                .cloned()
                .collect(),
        )
    }

    /// The documents kept unparsed that a lookup in `env` at `path` may
    /// read: at the root or at one of the path's slots (usually none).
    pub(crate) fn unparsed_on(&self, env: i64, path: &LevelPath) -> Vec<&UnparsedDocument> {
        if self.unparsed.is_empty() {
            return Vec::new();
        }
        self.unparsed
            .iter()
            .filter(|u| {
                u.at.env == env && u.at.path.slot().is_none_or(|lv| path.pairs().contains(lv))
            })
            .collect()
    }
}
