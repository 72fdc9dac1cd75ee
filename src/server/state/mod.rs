//! The server's shared state: the store, the published snapshot, the
//! answer cache, the loaded Hiera configurations and the metrics. Cheap
//! to clone (an `Arc` inside).

pub(crate) mod consistency;
pub(crate) mod feed;
pub(crate) mod listen;
pub(crate) mod metrics;
pub(crate) mod pinned;
pub(crate) mod retention;
pub(crate) mod sync;
pub(crate) mod unread;
pub(crate) mod versions;

use crate::auth::Authenticator;
use crate::cache::{AnswerCache, Configs};
use crate::configdb::Snapshot;
use crate::server::http::error::ApiError;
use crate::server::http::throttle::Throttle;
use crate::server::routes::hierarchies::Hierarchies;
use crate::server::state::metrics::Metrics;
use crate::settings::Settings;
use crate::store::{Changes, Store};
use arc_swap::{ArcSwap, ArcSwapOption};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A handle on the server's state; clones share it.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("generation", &self.generation())
            .finish_non_exhaustive()
    }
}

struct Inner {
    store: Arc<dyn Store>,
    /// What lookups read: swapped whole by writers, never locked by readers.
    snapshot: ArcSwap<Snapshot>,
    /// The store generation the snapshot holds (see `store::changes`),
    /// set after every publish; part of every cache key, so a write
    /// invalidates all cached answers at once.
    generation: AtomicU64,
    /// The same generation for requests that wait for one (see
    /// [`AppState::wait_for`]).
    published: tokio::sync::watch::Sender<u64>,
    /// When this server last confirmed that it serves the database's
    /// newest generation (milliseconds since `started`).
    synced_ms: AtomicU64,
    /// Since when catching up has failed, and its latest error (`None`
    /// while it works).
    failure: std::sync::Mutex<Option<Failure>>,
    /// The newest generation this server has heard of (a read of the
    /// store's, or an announcement), for the lag in generations.
    newest: AtomicU64,
    /// Wakes the catch-up task before its next poll (a write announced).
    wake: tokio::sync::Notify,
    started: Instant,
    cache: AnswerCache,
    /// Keyed by generation too: a write may change an environment's
    /// `hiera` resource.
    configs: Configs,
    metrics: Arc<Metrics>,
    /// Serializes writers and catch-ups, so each derives its snapshot from
    /// the last one published (readers never take it).
    writes: tokio::sync::Mutex<()>,
    /// Turns to run a costly lookup off the async workers (see
    /// `Settings::lookup_workers`).
    lookup_turns: Arc<tokio::sync::Semaphore>,
    /// KiB of lookup bodies admitted to wait for (or run in) a
    /// `lookup_turns` turn (`Settings::lookup_queue_bytes`).
    lookup_queue: Arc<tokio::sync::Semaphore>,
    /// Encoded old versions of documents, shared by their readers.
    versions: crate::server::state::versions::Versions,
    /// The bound on answers made but not read yet (`unread.rs`).
    unread: Arc<crate::server::state::unread::Unread>,
    /// The one turn of request bodies over `body::BIG_BODY` bytes.
    big_bodies: Arc<tokio::sync::Semaphore>,
    settings: Settings,
    /// The loaded auth file (swapped whole on a reload); none: every
    /// request is anonymous (a loopback-only server).
    authenticator: ArcSwapOption<Authenticator>,
    throttle: Throttle,
    /// Hierarchies registered for lookups to name by id.
    hierarchies: Hierarchies,
    /// The eyaml keys in force (`server/secrets.rs`).
    secrets: crate::server::secrets::Secrets,
    /// Snapshots of past generations (`pinned.rs`).
    pinned: pinned::Pinned,
    /// Turns to wait for changes (`Settings::change_waiters`).
    change_waiters: Arc<tokio::sync::Semaphore>,
    /// The change log's recent pages, shared by the change feed's
    /// requests (`feed.rs`).
    feed: feed::Feed,
    /// Set once the server stops accepting: waiters answer at once.
    closing: tokio::sync::watch::Sender<bool>,
}

impl AppState {
    /// State over `store`, publishing its current content.
    ///
    /// # Errors
    ///
    /// The store cannot be read.
    pub(crate) fn new(store: Arc<dyn Store>, settings: Settings) -> Result<AppState, ApiError> {
        let (snapshot, generation) = match store.changes_since(0)? {
            Changes::Everything { generation, data } => (
                Snapshot::build(data).with_memo_budget(settings.memo_bytes),
                generation,
            ),
            _ => {
                return Err(ApiError::Internal(
                    "the store did not answer its whole content to a first load".to_owned(),
                ));
            }
        };
        // Served all the same: requests that need one answer 500.
        for doc in snapshot.unreadable() {
            tracing::error!(target: "hierad::server::state", document = %doc, "a stored document is unreadable; serving everything else (`hierad doctor` lists and repairs)");
        }
        let metrics = Arc::new(Metrics::new());
        metrics.set_unreadable(snapshot.unreadable().len());
        metrics.set_generation(generation);
        let unread = Arc::new(crate::server::state::unread::Unread::new(
            settings.unread_answers_bytes,
            metrics.busy_refusals("unread_answers"),
        ));
        let cache = AnswerCache::new(settings.cache_bytes);
        let lookup_turns = Arc::new(tokio::sync::Semaphore::new(settings.lookup_workers.max(1)));
        let change_waiters = Arc::new(tokio::sync::Semaphore::new(
            settings
                .change_waiters
                .min(tokio::sync::Semaphore::MAX_PERMITS),
        ));
        Ok(AppState {
            inner: Arc::new(Inner {
                store,
                snapshot: ArcSwap::from_pointee(snapshot),
                generation: AtomicU64::new(generation),
                published: tokio::sync::watch::Sender::new(generation),
                synced_ms: AtomicU64::new(0),
                failure: std::sync::Mutex::new(None),
                newest: AtomicU64::new(generation),
                wake: tokio::sync::Notify::new(),
                started: Instant::now(),
                cache,
                configs: Configs::new(),
                metrics,
                writes: tokio::sync::Mutex::new(()),
                lookup_turns,
                lookup_queue: Arc::new(tokio::sync::Semaphore::new(
                    usize::try_from(settings.lookup_queue_bytes / 1024)
                        .unwrap_or(usize::MAX)
                        .clamp(1, tokio::sync::Semaphore::MAX_PERMITS),
                )),
                versions: crate::server::state::versions::Versions::default(),
                unread,
                big_bodies: Arc::new(tokio::sync::Semaphore::new(1)),
                settings,
                authenticator: ArcSwapOption::empty(),
                throttle: Throttle::default(),
                hierarchies: Hierarchies::default(),
                secrets: crate::server::secrets::Secrets::default(),
                pinned: pinned::Pinned::default(),
                change_waiters,
                feed: feed::Feed::default(),
                closing: tokio::sync::watch::Sender::new(false),
            }),
        })
    }

    /// State over a fresh in-memory SQLite store: what the in-process API
    /// tests (tests/it/api.rs) drive, without naming the store's types.
    ///
    /// # Errors
    ///
    /// The store cannot be opened or read.
    pub fn in_memory(settings: Settings) -> anyhow::Result<AppState> {
        let store = crate::store::SqliteStore::open_in_memory()?;
        AppState::new(Arc::new(store), settings).map_err(|e| anyhow::anyhow!("{e:?}"))
    }

    /// Snapshots of past generations (`pinned.rs`).
    pub(crate) fn pinned(&self) -> &pinned::Pinned {
        &self.inner.pinned
    }

    /// A turn to wait for changes, held until dropped (the handler's end,
    /// or its client hanging up).
    ///
    /// # Errors
    ///
    /// [`ApiError::Busy`]: every turn is taken.
    pub(crate) fn change_waiter(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        Arc::clone(&self.inner.change_waiters)
            .try_acquire_owned()
            .map_err(|_| {
                self.inner.metrics.busy_refusals("change_waiters").inc();
                ApiError::Busy(crate::server::http::error::Busy::ChangeWaiters(
                    u64::try_from(self.inner.settings.change_waiters).unwrap_or(u64::MAX),
                ))
            })
    }

    /// How many clients wait for changes now.
    pub fn change_waiters(&self) -> usize {
        self.inner
            .settings
            .change_waiters
            .min(tokio::sync::Semaphore::MAX_PERMITS)
            - self.inner.change_waiters.available_permits()
    }

    /// Tells every waiter for changes to answer now: the server is
    /// shutting down, and its drain should not wait for them.
    pub(crate) fn close(&self) {
        self.inner.closing.send_replace(true);
    }

    /// Resolves once [`AppState::close`] was called.
    pub(crate) async fn closed(&self) {
        let mut closing = self.inner.closing.subscribe();
        let _ = closing.wait_for(|closed| *closed).await;
    }

    /// The change log past `since` (one page), read once per `(since,
    /// published generation)` however many requests ask (`feed.rs`).
    ///
    /// # Errors
    ///
    /// The store cannot be read.
    pub(crate) async fn logged_since(&self, since: u64) -> Result<feed::Page, ApiError> {
        let published = *self.inner.published.borrow();
        self.inner
            .feed
            .page(since, published, || {
                self.read(move |store| Ok(store.logged_since(since, feed::PAGE)?))
            })
            .await
    }

    /// Wakes at each generation published.
    pub(crate) fn published(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.published.subscribe()
    }

    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.inner.snapshot.load_full()
    }

    pub(crate) fn generation(&self) -> u64 {
        self.inner.generation.load(Ordering::Acquire)
    }

    pub(crate) fn cache(&self) -> &AnswerCache {
        &self.inner.cache
    }

    pub(crate) fn configs(&self) -> &Configs {
        &self.inner.configs
    }

    pub(crate) fn metrics(&self) -> &Arc<Metrics> {
        &self.inner.metrics
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The credentials requests are checked against; `None` until
    /// [`AppState::set_authenticator`] (no auth file).
    pub fn authenticator(&self) -> Option<Arc<Authenticator>> {
        self.inner.authenticator.load_full()
    }

    /// Checks requests against `authenticator` from now on (a reloaded
    /// auth file replaces the old one whole).
    pub fn set_authenticator(&self, authenticator: Arc<Authenticator>) {
        self.inner.authenticator.store(Some(authenticator));
    }

    pub fn throttle(&self) -> &Throttle {
        &self.inner.throttle
    }

    /// The turn of big request bodies (`body::BigTurn`).
    pub(crate) fn big_bodies(&self) -> &Arc<tokio::sync::Semaphore> {
        &self.inner.big_bodies
    }

    pub(crate) fn secrets(&self) -> &crate::server::secrets::Secrets {
        &self.inner.secrets
    }

    pub(crate) fn hierarchies(&self) -> &Hierarchies {
        &self.inner.hierarchies
    }

    /// Runs a costly lookup `f` on the blocking pool once one of the
    /// `lookup_workers` turns is free. The turn is held until `f` ends,
    /// even if the client gives up waiting (the request time limit drops
    /// this future): the budget bounds how long that is.
    ///
    /// # Errors
    ///
    /// What `f` returns; `Internal` if it panicked.
    pub(crate) async fn costly_lookup<T: Send + 'static>(
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

    /// A place among the lookups waiting for a `lookup_workers` turn for
    /// a body of `bytes` bytes (counted in KiB, at least one), held until
    /// dropped.
    ///
    /// # Errors
    ///
    /// [`ApiError::Busy`] when `Settings::lookup_queue_bytes` are taken.
    pub(crate) fn queue_lookup(
        &self,
        bytes: usize,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        // A body larger than the whole queue waits alone.
        let all = self.inner.settings.lookup_queue_bytes / 1024;
        let kib = (bytes.div_ceil(1024).max(1) as u64).min(all.max(1));
        let kib = u32::try_from(kib).unwrap_or(u32::MAX);
        Arc::clone(&self.inner.lookup_queue)
            .try_acquire_many_owned(kib)
            .map_err(|_| {
                self.inner.metrics.busy_refusals("lookup_queue").inc();
                ApiError::Busy(crate::server::http::error::Busy::LookupQueue(
                    self.inner.settings.lookup_queue_bytes,
                ))
            })
    }

    /// The bound on unread answers (`unread.rs`).
    pub(crate) fn unread(&self) -> &Arc<crate::server::state::unread::Unread> {
        &self.inner.unread
    }

    /// Encoded old versions of documents (`versions.rs`).
    pub(crate) fn versions(&self) -> &crate::server::state::versions::Versions {
        &self.inner.versions
    }

    /// The store, for work already off the async workers (a lookup
    /// naming a node reads its scope on a lookup worker).
    pub(crate) fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    /// Reads the store off the async runtime.
    ///
    /// # Errors
    ///
    /// What `f` returns.
    pub(crate) async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let store = Arc::clone(&self.inner.store);
        tokio::task::spawn_blocking(move || f(store.as_ref()))
            .await
            .map_err(|e| ApiError::Internal(format!("store task failed: {e}")))?
    }

    /// Runs a write against the store off the async runtime, then publishes
    /// what changed since the last published generation (this write, and
    /// any other process's before it) through the same path as
    /// [`AppState::catch_up`]. Writers queue; readers keep answering from
    /// the previous snapshot meanwhile. Once it returns, the snapshot holds
    /// the write and [`AppState::generation`] is at or past the write's.
    ///
    /// # Errors
    ///
    /// What the write returns; nothing is published then.
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        // The commit and its publish run in a task of their own: hyper drops
        // a handler whose client hung up (and the time limit drops one that
        // took too long), and a write committed but never published would
        // stay invisible until the next catch-up. Once started, the task
        // finishes.
        let state = self.clone();
        tokio::spawn(async move { state.commit_and_publish(f).await })
            .await
            .map_err(|e| ApiError::Internal(format!("write task failed: {e}")))?
    }

    async fn commit_and_publish<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let _turn = self.inner.writes.lock().await;
        let store = Arc::clone(&self.inner.store);
        let (since, base) = (self.generation(), self.snapshot());
        let (result, update) = tokio::task::spawn_blocking(move || {
            let result = f(store.as_ref())?;
            let update = derive(store.as_ref(), &base, since)?;
            Ok::<_, ApiError>((result, update))
        })
        .await
        .map_err(|e| ApiError::Internal(format!("store task failed: {e}")))??;
        self.install(update);
        Ok(result)
    }

    /// Publishes what other processes (the CLI with `--db`, other
    /// servers) committed past the published generation, if anything;
    /// returns the generation published. Cheap when nothing changed: one
    /// read of the store's generation.
    ///
    /// # Errors
    ///
    /// The store cannot be read; the published snapshot stays.
    pub(crate) async fn catch_up(&self) -> Result<u64, ApiError> {
        let outcome = self.try_catch_up().await;
        let mut failure = self
            .inner
            .failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match &outcome {
            Ok(_) => *failure = None,
            Err(e) => {
                let error = e.detail();
                let since = failure
                    .as_ref()
                    .map_or_else(jiff::Timestamp::now, |f| f.since);
                *failure = Some(Failure { since, error });
            }
        }
        self.inner
            .metrics
            .set_database_down_since(failure.as_ref().map(|f| f.since));
        outcome
    }

    async fn try_catch_up(&self) -> Result<u64, ApiError> {
        let asked = Instant::now();
        let newest = self.read(|store| Ok(store.generation()?)).await?;
        self.announced(newest);
        if newest == self.generation() {
            self.synced(asked);
            return Ok(newest);
        }
        let _turn = self.inner.writes.lock().await;
        let store = Arc::clone(&self.inner.store);
        let (since, base) = (self.generation(), self.snapshot());
        let update = tokio::task::spawn_blocking(move || derive(store.as_ref(), &base, since))
            .await
            .map_err(|e| ApiError::Internal(format!("store task failed: {e}")))??;
        self.install(update);
        self.synced(asked);
        Ok(self.generation())
    }

    /// Records that at `at` this server served the newest generation.
    fn synced(&self, at: Instant) {
        let ms =
            u64::try_from(at.duration_since(self.inner.started).as_millis()).unwrap_or(u64::MAX);
        self.inner.synced_ms.fetch_max(ms, Ordering::AcqRel);
    }

    /// How long ago this server last confirmed that it serves the
    /// database's newest generation.
    pub(crate) fn sync_age(&self) -> Duration {
        let synced = Duration::from_millis(self.inner.synced_ms.load(Ordering::Acquire));
        self.inner.started.elapsed().saturating_sub(synced)
    }

    /// Where the store announces its commits, if it does (PostgreSQL).
    pub(crate) fn change_feed(&self) -> Option<crate::store::ChangeFeed> {
        self.inner.store.change_feed()
    }

    /// Records that the database has reached generation `generation`.
    pub(crate) fn announced(&self, generation: u64) {
        self.inner.newest.fetch_max(generation, Ordering::AcqRel);
    }

    /// How many generations the database has that this server does not
    /// serve yet, as far as it knows.
    pub(crate) fn lag_generations(&self) -> u64 {
        self.inner
            .newest
            .load(Ordering::Acquire)
            .saturating_sub(self.generation())
    }

    /// Makes the catch-up task catch up now rather than at its next poll.
    pub(crate) fn wake(&self) {
        self.inner.wake.notify_one();
    }

    /// Returns after `pause`, or sooner once [`AppState::wake`] is called
    /// (a call while nobody waits is kept for the next wait).
    pub(crate) async fn pause_or_wake(&self, pause: std::time::Duration) {
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = self.inner.wake.notified() => {}
        }
    }

    /// Since when catching up with the database has failed, and its latest
    /// error; `None` while it works.
    pub(crate) fn failure(&self) -> Option<Failure> {
        self.inner
            .failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Why this server should not get requests from a balancer, if it
    /// should not: it has not confirmed for longer than `--max-lag` that
    /// it serves the database's newest generation.
    pub(crate) fn stale(&self) -> Option<String> {
        let age = self.sync_age();
        let limit = self.inner.settings.max_lag;
        (age > limit).then(|| {
            format!(
                "stale: serving generation {} from its last snapshot ({} behind the newest it knows of); it last caught up with the database {:.1} s ago (hierad serve --max-lag {} ms); see its log",
                self.generation(),
                self.lag_generations(),
                age.as_secs_f64(),
                limit.as_millis()
            )
        })
    }

    /// Returns once this replica has published generation `wanted` (at
    /// once if it has): it catches up first, then waits for the catch-up
    /// task, at most `--min-generation-wait` in all.
    ///
    /// # Errors
    ///
    /// `BadRequest` at once when the database has not reached `wanted`
    /// (no write has made it: waiting would only hold a connection);
    /// `Behind` when the wait ran out.
    pub(crate) async fn wait_for(&self, wanted: u64) -> Result<(), ApiError> {
        if self.generation() >= wanted {
            return Ok(());
        }
        let limit = self.inner.settings.min_generation_wait;
        let mut published = self.inner.published.subscribe();
        let wait = async {
            // A failure is the catch-up task's to log; keep waiting. The
            // catch-up read the database's generation, and a client names
            // one a committed write answered, so one past it was not made.
            if self.catch_up().await.is_ok() {
                let newest = self.inner.newest.load(Ordering::Acquire);
                if wanted > newest {
                    return Err(ApiError::BadRequest(format!(
                        "no write has made generation {wanted} yet: the database's newest is {newest}; \
                         name a generation that X-Hierad-Generation answered"
                    )));
                }
            }
            let _ = published.wait_for(|g| *g >= wanted).await;
            Ok(())
        };
        match tokio::time::timeout(limit, wait).await {
            Ok(Err(unmade)) => Err(unmade),
            Ok(Ok(())) if self.generation() >= wanted => Ok(()),
            _ => Err(ApiError::Behind {
                at: self.generation(),
                wanted,
                waited: limit,
            }),
        }
    }

    /// Publishes a derived snapshot and its generation (hold `writes`).
    fn install(&self, update: Option<(Snapshot, u64)>) {
        let Some((snapshot, generation)) = update else {
            return;
        };
        let snapshot = snapshot.with_memo_budget(self.inner.settings.memo_bytes);
        self.inner
            .metrics
            .set_unreadable(snapshot.unreadable().len());
        // Snapshot first: a lookup reads the generation, then the snapshot
        // (see routes/lookup.rs), so it never files a new answer under an old
        // generation that later lookups read.
        self.inner.snapshot.store(Arc::new(snapshot));
        self.inner.generation.store(generation, Ordering::Release);
        self.inner.published.send_replace(generation);
        // Emptied off the async workers: a full cache takes milliseconds
        // (16 ms for 70,000 answers), and its answers, under an older
        // generation, can never be asked for again, whenever they go.
        let state = self.clone();
        tokio::task::spawn_blocking(move || state.inner.cache.clear());
        self.inner.metrics.set_generation(generation);
    }
}

/// A run of failed catch-ups.
#[derive(Clone, Debug)]
pub(crate) struct Failure {
    /// When the first one failed.
    pub(crate) since: jiff::Timestamp,
    /// What the latest one said (the database's error: no document
    /// content, which never reaches the store's errors).
    pub(crate) error: String,
}

/// The snapshot after what the store committed past `since`, derived from
/// `base` (`None`: nothing changed). Runs on a blocking thread.
fn derive(
    store: &dyn Store,
    base: &Snapshot,
    since: u64,
) -> Result<Option<(Snapshot, u64)>, ApiError> {
    Ok(match store.changes_since(since)? {
        Changes::None { .. } => None,
        Changes::Everything { generation, data } => Some((Snapshot::build(data), generation)),
        Changes::Documents {
            generation,
            documents,
            registers,
        } => {
            let mut snapshot = base.clone();
            for (at, doc) in documents {
                snapshot = snapshot.with_document(at.env, &at.path, &at.resource, at.kind, doc)?;
            }
            for (env, level, values) in registers {
                snapshot = snapshot.with_register(env, &level, values);
            }
            Some((snapshot, generation))
        }
    })
}
