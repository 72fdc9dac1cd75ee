//! The ConfigDB writes over a [`Store`], written once for every caller:
//! [`Local`](super::Local) (the CLI's `--db`, `serve --import`, the bench's
//! loader) and the server's handlers, which only parse the request, call
//! one of these and encode the answer. Each write is one store
//! transaction, its register check included (see
//! [`Store::write_document`] and [`ImportBatch::register`]).

use super::ImportSummary;
use crate::api::KeptFile;
use crate::auth::Principal;
use crate::configdb::unparsed::Content;
use crate::configdb::{
    ComponentRef, ConfigError, DocAddress, Environment, KeyPath, NotFound, Version, keypath,
};
use crate::hiera::{Hash, Value};
use crate::store::{DocWrite, ImportBatch, Store, StoreError, WriteCtx};

/// Writes `batch` (registering its level values first when it says so,
/// defining the resources it names that the environment lacks in
/// `batch.define_missing_in`) and counts what it did.
///
/// # Errors
///
/// As [`Store::import`].
pub(crate) fn import(store: &dyn Store, batch: &ImportBatch) -> Result<ImportSummary, StoreError> {
    let report = store.import(batch)?;
    Ok(ImportSummary {
        written: report.written.len(),
        unchanged: report.unchanged.len(),
        deleted: report.deleted.len(),
        defined: report.defined,
        unparsed: kept_files(batch),
    })
}

/// The files `batch` keeps unparsed, with Hiera's error for each.
fn kept_files(batch: &ImportBatch) -> Vec<KeptFile> {
    batch
        .documents
        .iter()
        .filter_map(|d| match &d.content {
            Content::File(file) => {
                let error = file.parse().err()?;
                Some(KeptFile {
                    resource: d.resource.clone(),
                    path: file.path.clone(),
                    class: error.class.ruby_name().to_owned(),
                    message: error.message,
                })
            }
            Content::Data(_) => None,
        })
        .collect()
}

/// Where an import defines the resources `env` lacks: its first
/// component (`None`: it uses none).
pub(crate) fn defines_in(env: &Environment) -> Option<ComponentRef> {
    env.components.first().copied().map(ComponentRef::Id)
}

/// Sets key `key` of the stored document at `at` to `value`, keeping the
/// rest: read, edited and written in one transaction, so a concurrent
/// writer's change to another key is kept.
///
/// # Errors
///
/// As [`Store::write_document`]; a key path the document cannot take.
pub(crate) fn set_key(
    store: &dyn Store,
    at: &DocAddress,
    key: &KeyPath,
    value: Value,
    ctx: WriteCtx<'_>,
) -> Result<Version, StoreError> {
    let mut value = Some(value);
    let mut edit = |doc: &mut Hash| {
        keypath::set(doc, key, value.take().unwrap_or(Value::Nil)).map_err(ConfigError::from)
    };
    store.write_document(at, DocWrite::Update(&mut edit), ctx)
}

/// `e`, naming as registering the value only the environments `who` may
/// use: a principal limited to some would otherwise learn which other
/// environment holds a node. Registered only where `who` may not look,
/// the value is answered as unknown, the same 404 word for word: "not
/// assigned" alone would say that some other environment holds it.
pub(crate) fn seen_by(e: ConfigError, who: &Principal) -> ConfigError {
    match e {
        ConfigError::NotFound(NotFound::NotAssigned {
            env,
            level,
            value,
            mut elsewhere,
        }) => {
            elsewhere.retain(|env| who.may_use(*env));
            NotFound::unregistered(env, level, value, elsewhere).into()
        }
        e => e,
    }
}

/// [`seen_by`] for a store's error.
pub(crate) fn store_error_seen_by(e: StoreError, who: &Principal) -> StoreError {
    match e {
        StoreError::Config(e) => StoreError::Config(seen_by(e, who)),
        other => other,
    }
}
