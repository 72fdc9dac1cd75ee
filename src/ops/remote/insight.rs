//! The remote client's calls for issue 33's "why and what changed":
//! provenance (`show_lookup`), document and effective diffs, node scopes.

use super::{Method, Remote, Result, doc_url};
use crate::api;
use crate::api::paths::encode;
use crate::configdb::{DocAddress, DocKind, LevelPath};
use crate::ops::diffs::{Point, Range};

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

    /// `GET …/diff` with the query `range` names.
    ///
    /// # Errors
    ///
    /// As [`Remote::effective`]; 404 for a missing version or tag, 410
    /// for a generation no longer readable.
    pub(crate) fn diff(&self, at: &DocAddress, range: &Range) -> Result<api::DiffAnswer> {
        let url = doc_url(at.env, &at.path, &at.resource, at.kind);
        let mut query = Vec::new();
        let point = |side: &str, p: &Point| match p {
            Point::Generation(g) => format!("{side}_generation={g}"),
            Point::Tag(t) => format!("{side}_tag={}", encode(t, false)),
        };
        match range {
            Range::Versions { from, to } => {
                query.extend(from.map(|n| format!("from={n}")));
                query.extend(to.map(|n| format!("to={n}")));
            }
            Range::Effective { from, to } => {
                query.push("effective".to_owned());
                query.push(point("from", from));
                query.extend(to.as_ref().map(|p| point("to", p)));
            }
        }
        let query = if query.is_empty() {
            String::new()
        } else {
            format!("?{}", query.join("&"))
        };
        self.typed(Method::Get, &format!("{url}/diff{query}"), None::<&()>)
    }
}
