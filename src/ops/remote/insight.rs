//! The remote client's calls for "why and what changed" (docs/api.md):
//! provenance (`show_lookup`), document and effective diffs, node scopes.

use super::{Method, Remote, Result, doc_url};
use crate::api;
use crate::api::paths;
use crate::api::paths::encode;
use crate::configdb::unparsed::{Content, Unparsed};
use crate::configdb::{ConfigError, keypath};
use crate::configdb::{DocAddress, DocKind, LevelPath, Version};
use crate::hiera::Value;
use crate::ops::Write;
use crate::ops::diffs::{Point, Range};
use crate::wire;

impl Remote {
    /// [`crate::ops::ConfigOps::dry_run`]: [`Remote::dry_run`], except
    /// that a key with a `/`, which cannot travel in a URL segment, is
    /// previewed as `set_key` writes it: the whole document, changed.
    pub(super) fn dry_run_of(
        &self,
        at: &DocAddress,
        write: Write<'_>,
    ) -> crate::ops::Result<api::impact::DryRun> {
        if let Write::Key(key, value) = write {
            if key.as_str().contains('/') {
                let mut doc = Remote::stored(self, at, None)?;
                keypath::set(&mut doc, key, value.clone()).map_err(ConfigError::from)?;
                return Ok(Remote::dry_run(self, at, Write::Put(&doc))?);
            }
        }
        Ok(Remote::dry_run(self, at, write)?)
    }

    /// `POST …/import?dry_run=true` of one level's files: what the
    /// import would change.
    ///
    /// # Errors
    ///
    /// As the import itself.
    pub(crate) fn dry_run_import(
        &self,
        env: i64,
        (level, files): (&LevelPath, &[crate::tree::TreeFile]),
        kind: DocKind,
        (replace, register): (bool, bool),
    ) -> Result<api::impact::DryRun> {
        let body = import_request(level, kind, replace, register, files);
        let path = paths::fill(paths::IMPORT, &[&env.to_string()]);
        self.typed(Method::Post, &format!("{path}?dry_run=true"), Some(&body))
    }

    /// The write `write` to `at` with `?dry_run=true`: what it would
    /// change, nothing written.
    ///
    /// # Errors
    ///
    /// As the write itself.
    pub(crate) fn dry_run(&self, at: &DocAddress, write: Write<'_>) -> Result<api::impact::DryRun> {
        let url = doc_url(at.env, &at.path, &at.resource, at.kind);
        let (method, url, body) = match write {
            Write::Put(doc) => (Method::Put, url, Some(Value::Hash(doc.clone()))),
            Write::Key(key, value) => (
                Method::Put,
                format!("{url}/keys/{}", encode(key.as_str(), false)),
                Some(value.clone()),
            ),
            Write::Delete => (Method::Delete, url, None),
            Write::Restore(n) => (Method::Post, format!("{url}/restore?version={n}"), None),
        };
        let url = match url.contains('?') {
            true => format!("{url}&dry_run=true"),
            false => format!("{url}?dry_run=true"),
        };
        let text = self.call(method, &url, body.as_ref().map(wire::to_string))?;
        self.decode(&url, &text)
    }

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

    fn scope_url(env: i64, node: &str) -> String {
        paths::fill(paths::NODE_SCOPE, &[&env.to_string(), node])
    }

    /// `GET …/nodes/{node}/scope`.
    ///
    /// # Errors
    ///
    /// 404: the node, or no stored scope; transport.
    pub(crate) fn scope(&self, env: i64, node: &str) -> Result<api::NodeScope> {
        self.typed(Method::Get, &Self::scope_url(env, node), None::<&()>)
    }

    /// `PUT …/nodes/{node}/scope`.
    ///
    /// # Errors
    ///
    /// 404: the node; transport.
    pub(crate) fn put_scope(
        &self,
        env: i64,
        node: &str,
        scope: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<()> {
        let body = serde_json::Value::Object(scope.clone()).to_string();
        self.call(Method::Put, &Self::scope_url(env, node), Some(body))?;
        Ok(())
    }

    /// `DELETE …/nodes/{node}/scope`.
    ///
    /// # Errors
    ///
    /// 404: the node, or no scope to delete; transport.
    pub(crate) fn delete_scope(&self, env: i64, node: &str) -> Result<()> {
        self.call(Method::Delete, &Self::scope_url(env, node), None)?;
        Ok(())
    }

    /// `GET …/nodes/{node}/scope/history`.
    ///
    /// # Errors
    ///
    /// 404: the node; transport.
    pub(crate) fn scope_history(&self, env: i64, node: &str) -> Result<Vec<Version>> {
        let url = paths::fill(paths::NODE_SCOPE_HISTORY, &[&env.to_string(), node]);
        let versions: Vec<api::Version> = self.typed(Method::Get, &url, None::<&()>)?;
        Ok(versions.into_iter().map(Version::from).collect())
    }
}

/// `GET …/values?unparsed`: the data file the document keeps unparsed.
pub(super) fn kept_file(remote: &Remote, at: &DocAddress) -> Result<Option<Unparsed>> {
    let url = format!(
        "{}?unparsed",
        doc_url(at.env, &at.path, &at.resource, at.kind)
    );
    let file: Option<api::UnparsedFile> = remote.typed(Method::Get, &url, None::<&()>)?;
    file.map(api::UnparsedFile::into_file)
        .transpose()
        .map_err(|reason| super::RemoteError::BadAnswer {
            url,
            status: 200,
            reason,
        })
}

/// The body of `POST /environments/{env}/import`: one level's documents.
pub(super) fn import_request(
    level: &LevelPath,
    kind: DocKind,
    replace: bool,
    register: bool,
    files: &[crate::tree::TreeFile],
) -> api::ImportRequest {
    let mut data = indexmap::IndexMap::new();
    let mut unparsed = std::collections::BTreeMap::new();
    for f in files {
        match &f.content {
            Content::Data(doc) => {
                data.insert(f.resource.clone(), Value::Hash(doc.clone()));
            }
            Content::File(file) => {
                unparsed.insert(f.resource.clone(), api::UnparsedFile::of(file));
            }
        }
    }
    api::ImportRequest {
        level: Some(level.to_string()),
        replace,
        kind: Some(kind.as_str().to_owned()),
        register,
        documents: api::WireDocuments(data),
        unparsed,
    }
}
