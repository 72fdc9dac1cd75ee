//! The server's shared state: the store, the published snapshot, the
//! answer cache, the loaded Hiera configurations and the metrics. Cheap
//! to clone (an `Arc` inside).

use super::error::ApiError;
use super::metrics::Metrics;
use crate::cache::{AnswerCache, Configs};
use crate::configdb::{DocAddress, Snapshot, StoredDoc};
use crate::settings::Settings;
use crate::store::Store;
use arc_swap::ArcSwap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A handle on the server's state; clones share it.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    /// What lookups read: swapped whole by writers, never locked by readers.
    snapshot: ArcSwap<Snapshot>,
    /// Bumped after every published write; part of every cache key, so a
    /// write invalidates all cached answers at once.
    generation: AtomicU64,
    cache: AnswerCache,
    /// Keyed by generation too: a write may change an environment's
    /// `hiera` resource.
    configs: Configs,
    metrics: Arc<Metrics>,
    /// Serializes writers, so each derives its snapshot from the last one
    /// published (readers never take it).
    writes: tokio::sync::Mutex<()>,
    /// Turns to run a costly lookup off the async workers (see
    /// `Settings::lookup_workers`).
    lookup_turns: Arc<tokio::sync::Semaphore>,
    settings: Settings,
}

impl AppState {
    /// State over `store`, publishing its current content.
    ///
    /// # Errors
    ///
    /// The store cannot be read.
    pub fn new(store: Arc<dyn Store>, settings: Settings) -> Result<AppState, ApiError> {
        let snapshot = Snapshot::build(store.load_all()?);
        // Served all the same: requests that need one answer 500.
        for doc in snapshot.unreadable() {
            tracing::error!(document = %doc, "a stored document is unreadable; serving everything else (`hierad doctor` lists and repairs)");
        }
        let metrics = Arc::new(Metrics::new());
        metrics.set_unreadable(snapshot.unreadable().len());
        let cache = AnswerCache::new(settings.cache_bytes);
        let lookup_turns = Arc::new(tokio::sync::Semaphore::new(settings.lookup_workers.max(1)));
        Ok(AppState {
            inner: Arc::new(Inner {
                store,
                snapshot: ArcSwap::from_pointee(snapshot),
                generation: AtomicU64::new(1),
                cache,
                configs: Configs::new(),
                metrics,
                writes: tokio::sync::Mutex::new(()),
                lookup_turns,
                settings,
            }),
        })
    }

    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.inner.snapshot.load_full()
    }

    pub fn generation(&self) -> u64 {
        self.inner.generation.load(Ordering::Acquire)
    }

    pub fn cache(&self) -> &AnswerCache {
        &self.inner.cache
    }

    pub fn configs(&self) -> &Configs {
        &self.inner.configs
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.inner.metrics
    }

    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// Runs a costly lookup `f` on the blocking pool once one of the
    /// `lookup_workers` turns is free. The turn is held until `f` ends,
    /// even if the client gives up waiting (the request time limit drops
    /// this future): the budget bounds how long that is.
    ///
    /// # Errors
    ///
    /// What `f` returns; `Internal` if it panicked.
    pub async fn costly_lookup<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let turn = Arc::clone(&self.inner.lookup_turns)
            .acquire_owned()
            .await
            .map_err(|e| ApiError::Internal(format!("lookup turns closed: {e}")))?;
        let running = self.inner.metrics.costly_lookup();
        tokio::task::spawn_blocking(move || {
            let _turn = (turn, running);
            f()
        })
        .await
        .map_err(|e| ApiError::Internal(format!("lookup task failed: {e}")))?
    }

    /// Reads the store off the async runtime.
    ///
    /// # Errors
    ///
    /// What `f` returns.
    pub async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let store = Arc::clone(&self.inner.store);
        tokio::task::spawn_blocking(move || f(store.as_ref()))
            .await
            .map_err(|e| ApiError::Internal(format!("store task failed: {e}")))?
    }

    /// Runs a write against the store off the async runtime, then publishes
    /// the snapshot `publish` derives from the last one. Writers queue;
    /// readers keep answering from the previous snapshot meanwhile.
    ///
    /// # Errors
    ///
    /// What the write returns; nothing is published then.
    pub async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T, ApiError> + Send + 'static,
        publish: Publish,
    ) -> Result<T, ApiError> {
        self.write_then(f, move |_| publish).await
    }

    /// [`AppState::write`], choosing how to publish from what the write
    /// returned (an import knows which documents it changed only after).
    ///
    /// # Errors
    ///
    /// What the write returns; nothing is published then.
    pub async fn write_then<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T, ApiError> + Send + 'static,
        publish: impl FnOnce(&T) -> Publish + Send + 'static,
    ) -> Result<T, ApiError> {
        // The commit and its publish run in a task of their own: hyper drops
        // a handler whose client hung up (and the time limit drops one that
        // took too long), and a write committed but never published would
        // stay invisible until a restart. Once started, the task finishes.
        let state = self.clone();
        tokio::spawn(async move { state.commit_and_publish(f, publish).await })
            .await
            .map_err(|e| ApiError::Internal(format!("write task failed: {e}")))?
    }

    async fn commit_and_publish<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T, ApiError> + Send + 'static,
        publish: impl FnOnce(&T) -> Publish + Send + 'static,
    ) -> Result<T, ApiError> {
        let _turn = self.inner.writes.lock().await;
        let store = Arc::clone(&self.inner.store);
        let base = self.snapshot();
        let (result, snapshot) = tokio::task::spawn_blocking(move || {
            let result = f(store.as_ref())?;
            let snapshot = match publish(&result) {
                Publish::Rebuild => Snapshot::build(store.load_all()?),
                Publish::Document(at) => {
                    let doc = store
                        .get(&at, None)?
                        .filter(|(version, _)| !version.deleted)
                        .map(|(version, content)| StoredDoc::new(version, Arc::new(content)));
                    base.with_document(at.env, &at.path, &at.resource, at.kind, doc)?
                }
                Publish::Documents(docs) => {
                    let mut snapshot = (*base).clone();
                    for (at, doc) in docs {
                        snapshot =
                            snapshot.with_document(at.env, &at.path, &at.resource, at.kind, doc)?;
                    }
                    snapshot
                }
            };
            Ok::<_, ApiError>((result, snapshot))
        })
        .await
        .map_err(|e| ApiError::Internal(format!("store task failed: {e}")))??;
        self.inner
            .metrics
            .set_unreadable(snapshot.unreadable().len());
        self.inner.snapshot.store(Arc::new(snapshot));
        let generation = self.inner.generation.fetch_add(1, Ordering::AcqRel) + 1;
        self.inner.cache.clear();
        self.inner.metrics.set_generation(generation);
        Ok(result)
    }
}

/// How a write changes the published snapshot.
pub enum Publish {
    /// One document changed: derive the new snapshot, sharing the rest.
    Document(DocAddress),
    /// Structure changed (components, environments, imports): rebuild.
    Rebuild,
    /// These documents now hold this content (`None`: deleted), in
    /// resources the snapshot already has: derive, sharing the rest.
    Documents(Vec<(DocAddress, Option<StoredDoc>)>),
}

impl Publish {
    pub fn document(at: &DocAddress) -> Publish {
        Publish::Document(at.clone())
    }
}
