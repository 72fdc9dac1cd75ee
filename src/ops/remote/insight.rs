//! The remote client's calls for issue 33's "why and what changed":
//! provenance (`show_lookup`), document and effective diffs, node scopes.

use super::{Method, Remote, Result, doc_url};
use crate::api;
use crate::configdb::{DocKind, LevelPath};

impl Remote {
    /// `GET …/values?effective&show_lookup`.
    ///
    /// # Errors
    ///
    /// As [`Remote::effective`].
    pub(crate) fn show_lookup(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
    ) -> Result<api::ShowLookup> {
        let url = doc_url(env, path, resource, DocKind::Values);
        self.typed(
            Method::Get,
            &format!("{url}?effective&show_lookup"),
            None::<&()>,
        )
    }
}
