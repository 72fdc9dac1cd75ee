//! The immutable in-memory view of the whole ConfigDB that lookups read:
//! environments, components, the latest version of every document, and
//! effective documents computed on first use and cached.
//!
//! Sharing is the point. Effective documents are `Arc<Hash>`: a slot that
//! adds nothing to a resource hands back the `Arc` of the level below, so a
//! thousand nodes with no data of their own for `globals` all hold the
//! root's effective `globals`, and a node whose only layer is its own
//! `astute` values holds that very document (see
//! [`fold::merge_shared`](super::fold::merge_shared)). Only slots with data of their own get a cache
//! entry, so the cache grows with the stored data, never with the paths
//! clients happen to ask about.
//!
//! Lookups should read [`PathReader::effective_key`] (from
//! [`Snapshot::at`]): Hiera asks a datasource for one key, and folding
//! only that key costs microseconds and no memory, where a whole effective document is a deep copy as soon
//! as two layers both hold data (a node's own astute over a root astute:
//! about a millisecond and the size of the root document, per node).
//! [`Snapshot::effective`] is for whole-document reads (`config get`);
//! [`Snapshot::try_encoded`] is the same document as a response body
//! (`?effective`, Hiera 5's `data_hash`): its wire JSON and ETag, encoded
//! on first read and then kept for the snapshot's life, so the fold and
//! the encoding are work per write, not per read.
//!
//! A write is applied by [`Snapshot::with_document`], which returns a new
//! snapshot sharing every untouched environment and resource (and the
//! cached effective documents the write cannot affect) with the old one;
//! the server swaps it in. Structural changes (components, environments,
//! resources an import defined) and large imports rebuild from
//! [`Store::load_all`].
//!
//! [`Store::load_all`]: crate::store::Store::load_all

use super::error::{ConfigError, NotFound};
use super::fold::{deep_merge, merge_shared};
use super::level::{LevelPath, LevelValue};
use super::memo::AnswerMemo;
use super::model::{Component, DocKind, Environment, SnapshotData, UnreadableDocument, Version};
use super::registers::Registers;
use super::unparsed::UnparsedDocument;
use crate::hiera::lookup::is_final;
use crate::hiera::value::HashedKey;
use crate::hiera::{Hash, Value};
use bytes::Bytes;
use indexmap::IndexMap;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash as _, Hasher as _};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

/// One stored document as the snapshot holds it.
#[derive(Clone, Debug)]
pub(crate) struct StoredDoc {
    pub(crate) version: Version,
    pub(crate) content: Arc<Hash>,
    /// For each top-level entry of `content`, by position: whether Hiera
    /// hands its value out unchanged (see [`is_final`]). Worked out once
    /// per write, so lookups do not rescan a 55 KB value on every answer.
    finals: Arc<[bool]>,
    /// Whether every top-level key is a String (a key path can name it).
    pub(crate) string_keys: bool,
    /// `content` as a response body, made on its first read and shared by
    /// every later one (and by the snapshots a write derives): encoded
    /// per request, a reader that pipelined GETs of a large document and
    /// never read pinned a fresh copy per connection.
    encoded: Arc<OnceLock<Arc<Encoded>>>,
}

impl PartialEq for StoredDoc {
    fn eq(&self, other: &StoredDoc) -> bool {
        // `finals` and `encoded` follow from `content`.
        self.version == other.version && self.content == other.content
    }
}

impl StoredDoc {
    pub(crate) fn new(version: Version, content: Arc<Hash>) -> StoredDoc {
        let finals = content.values().map(is_final).collect();
        let string_keys = content.keys().all(|k| matches!(k, Value::String(_)));
        StoredDoc {
            version,
            content,
            finals,
            string_keys,
            encoded: Arc::default(),
        }
    }

    /// The document as a response body: encoded once, then shared.
    pub(crate) fn encoded(&self) -> Arc<Encoded> {
        Arc::clone(
            self.encoded
                .get_or_init(|| Arc::new(Encoded::of(&self.content))),
        )
    }

    /// Its body if a read has made it already ([`Self::encoded`]).
    pub(crate) fn encoded_made(&self) -> Option<Arc<Encoded>> {
        self.encoded.get().cloned()
    }

    /// The value of top-level `key`, and whether it is final.
    fn get(&self, key: &HashedKey<'_>) -> Option<(&Value, bool)> {
        let (at, value) = key.find_in(&self.content)?;
        Some((value, self.finals[at]))
    }
}

/// A whole effective document as a response sends it.
#[derive(Debug)]
pub(crate) struct Encoded {
    /// Its wire JSON ([`crate::wire::to_string`]).
    pub(crate) body: Bytes,
    /// A strong ETag of `body` (quoted): equal bytes, equal tag, whatever
    /// the snapshot or the process. Shared bytes, so that an answer's
    /// header takes them without a copy ([`Encoded::etag`] for the text).
    pub(crate) etag: Bytes,
}

impl Encoded {
    /// Its ETag's text (ASCII, as `written` makes it).
    pub(crate) fn etag(&self) -> &str {
        std::str::from_utf8(&self.etag).unwrap_or_default()
    }

    /// `doc`'s wire JSON and its tag (written from the borrowed Hash: a
    /// copy of a large document cost its tree's size again).
    pub(crate) fn of(doc: &Hash) -> Encoded {
        let mut out = Vec::new();
        crate::wire::write_hash(&mut out, doc);
        Encoded::written(out)
    }

    /// `value`'s wire JSON and its tag.
    pub(crate) fn of_value(value: &crate::hiera::Value) -> Encoded {
        let mut out = Vec::new();
        crate::wire::write_to(&mut out, value);
        Encoded::written(out)
    }

    fn written(out: Vec<u8>) -> Encoded {
        // Whole UTF-8 strings and ASCII are all that is written.
        let text = String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        // Fixed keys: the tag of the same bytes does not change with the
        // process (a restarted server answers 304 too).
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut hasher);
        Encoded {
            etag: Bytes::from(format!("\"{:016x}\"", hasher.finish())),
            body: Bytes::from(text),
        }
    }
}

/// One top-level key of an effective document: its value, and whether
/// Hiera hands it out unchanged.
pub(crate) type EffectiveKey<'s> = (Cow<'s, Value>, bool);

/// One environment's documents at one (checked) level path: what a
/// lookup reads from on every level of its hierarchy.
pub(crate) struct PathReader<'s, 'p> {
    env: &'s EnvData,
    pairs: &'p [LevelValue],
}

impl<'s> PathReader<'s, '_> {
    /// One top-level key of the effective document, folding only that
    /// key's layers: what a Hiera lookup needs (it asks a datasource for
    /// one key). `None` when the key is absent or, as for
    /// [`Snapshot::effective`], the resource cannot be reached. Borrowed
    /// when one layer decides the answer; nothing is cached, and no whole
    /// document is merged.
    pub(crate) fn effective_key(
        &self,
        resource: &str,
        key: &HashedKey<'_>,
    ) -> Option<EffectiveKey<'s>> {
        self.env
            .resources
            .get(resource)?
            .effective_key(self.pairs, key)
    }
}

/// An immutable view of the ConfigDB; cheap to clone, safe to share
/// between threads.
#[derive(Clone, Debug, Default)]
pub(crate) struct Snapshot {
    components: Arc<Vec<Component>>,
    envs: Arc<BTreeMap<i64, Arc<EnvData>>>,
    /// Stored documents that could not be read: requests that need one
    /// fail (500) instead of answering as if it were empty; a write of the
    /// document replaces it.
    unreadable: Arc<Vec<UnreadableDocument>>,
    /// Documents kept unparsed: reads of one fail with Hiera's error
    /// (`snapshot/unparsed.rs`).
    unparsed: Arc<Vec<UnparsedDocument>>,
    /// Answers made from this snapshot's final values (configdb/memo.rs);
    /// every new snapshot starts with an empty one.
    memo: Arc<AnswerMemo>,
    /// Every register, so a request checks its level path from memory
    /// ([`Snapshot::check_registered`]).
    registers: Arc<Registers>,
}

#[derive(Debug)]
struct EnvData {
    env: Environment,
    /// Every resource the environment's components define, with or
    /// without documents, sorted by name (built from a sorted map; writes
    /// only replace entries). Hashed: every level of every lookup finds
    /// its resource here.
    resources: IndexMap<String, Arc<ResourceData>, foldhash::fast::RandomState>,
}

#[derive(Clone, Debug, Default)]
struct SlotDocs {
    values: Option<StoredDoc>,
    overrides: Option<StoredDoc>,
}

impl SlotDocs {
    fn get(&self, kind: DocKind) -> Option<&StoredDoc> {
        match kind {
            DocKind::Values => self.values.as_ref(),
            DocKind::Overrides => self.overrides.as_ref(),
        }
    }

    fn set(&mut self, kind: DocKind, doc: Option<StoredDoc>) {
        match kind {
            DocKind::Values => self.values = doc,
            DocKind::Overrides => self.overrides = doc,
        }
    }

    fn is_empty(&self) -> bool {
        self.values.is_none() && self.overrides.is_none()
    }

    /// `base` with this slot's values, then overrides, merged over it.
    fn over(&self, base: &Arc<Hash>) -> Arc<Hash> {
        let mut out = Arc::clone(base);
        for doc in [&self.values, &self.overrides].into_iter().flatten() {
            out = merge_shared(&out, &doc.content);
        }
        out
    }

    /// Whether [`SlotDocs::over`] would merge for real rather than hand
    /// back one of its inputs (so its result is worth caching).
    fn merges_over(&self, base: &Hash) -> bool {
        let non_empty = [&self.values, &self.overrides]
            .into_iter()
            .flatten()
            .filter(|d| !d.content.is_empty())
            .count();
        non_empty + usize::from(!base.is_empty()) >= 2
    }
}

/// A node's (or any level value's) documents, found on every level of
/// every lookup: foldhash rather than SipHash.
type Slots = HashMap<LevelValue, SlotDocs, foldhash::fast::RandomState>;

/// One resource of one environment.
#[derive(Debug, Default)]
struct ResourceData {
    root: SlotDocs,
    slots: Slots,
    /// The root's effective document, computed at build time.
    root_effective: Arc<Hash>,
    /// Effective documents of paths whose last slot really merged, keyed
    /// by the path's pairs. A `RwLock` because lookups read it from many
    /// threads and write it only on the first use of a path.
    cache: RwLock<HashMap<Box<[LevelValue]>, Arc<Hash>>>,
    /// Encoded effective documents, keyed by their path's pairs that have
    /// a slot here (paths that fold the same slots share the bytes, and
    /// unknown node names add nothing). Only the bytes are kept, not the
    /// folded Hash (several times their size as a tree).
    encoded: RwLock<EncodedDocs>,
}

type EncodedDocs = HashMap<Box<[LevelValue]>, Arc<Encoded>, foldhash::fast::RandomState>;

impl ResourceData {
    fn new(root: SlotDocs, slots: Slots) -> Self {
        let root_effective = root.over(&Arc::new(Hash::default()));
        ResourceData {
            root,
            slots,
            root_effective,
            cache: RwLock::default(),
            encoded: RwLock::default(),
        }
    }

    /// [`ResourceData::effective`] encoded, once per snapshot and set of
    /// slots; the folded Hash is not kept for it.
    fn encoded(&self, pairs: &[LevelValue]) -> Arc<Encoded> {
        let key: Cow<'_, [LevelValue]> = if pairs.iter().all(|p| self.slots.contains_key(p)) {
            Cow::Borrowed(pairs)
        } else {
            Cow::Owned(
                pairs
                    .iter()
                    .filter(|p| self.slots.contains_key(*p))
                    .cloned()
                    .collect(),
            )
        };
        let cached = self
            .encoded
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&*key)
            .cloned();
        if let Some(hit) = cached {
            return hit;
        }
        let encoded = Arc::new(Encoded::of(&self.fold(&key, false)));
        let mut docs = self.encoded.write().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(docs.entry(key.into_owned().into()).or_insert(encoded))
    }

    fn slot(&self, slot: Option<&LevelValue>) -> Option<&SlotDocs> {
        match slot {
            None => Some(&self.root),
            Some(lv) => self.slots.get(lv),
        }
    }

    fn effective(&self, pairs: &[LevelValue]) -> Arc<Hash> {
        self.fold(pairs, true)
    }

    /// The effective document at `pairs`; a real merge is kept in `cache`
    /// when `keep`.
    fn fold(&self, pairs: &[LevelValue], keep: bool) -> Arc<Hash> {
        let Some((last, parent)) = pairs.split_last() else {
            return Arc::clone(&self.root_effective);
        };
        let base = self.fold(parent, keep);
        let Some(slot) = self.slots.get(last) else {
            return base;
        };
        if !slot.merges_over(&base) {
            return slot.over(&base);
        }
        let cached = self
            .cache
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(pairs)
            .cloned();
        if let Some(hit) = cached {
            return hit;
        }
        let merged = slot.over(&base);
        if !keep {
            return merged;
        }
        // Two threads may compute the same entry; the first one stored
        // wins, so every caller ends up sharing one Arc.
        let mut cache = self.cache.write().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(cache.entry(pairs.into()).or_insert(merged))
    }

    fn effective_key(&self, pairs: &[LevelValue], key: &HashedKey<'_>) -> Option<EffectiveKey<'_>> {
        // From the most specific layer down: Hashes merge, and the first
        // non-Hash either is the answer (nothing above it) or is replaced
        // by the Hashes above it, hiding everything below. Most keys live
        // in one layer: nothing is allocated for them.
        let layers = pairs
            .iter()
            .rev()
            .filter_map(|p| self.slots.get(p))
            .chain(std::iter::once(&self.root))
            .flat_map(|slot| [&slot.overrides, &slot.values])
            .flatten();
        let mut first: Option<&Value> = None;
        let mut hashes: Vec<&Value> = Vec::new();
        let mut all_final = true;
        for doc in layers {
            let found = doc.get(key);
            if let Some((Value::Hash(_), is_final)) = found {
                all_final &= is_final;
            }
            match (found, first) {
                (None, _) => {}
                (Some((v @ Value::Hash(_), _)), None) => first = Some(v),
                (Some((v @ Value::Hash(_), _)), Some(_)) => hashes.push(v),
                (Some((v, is_final)), None) => return Some((Cow::Borrowed(v), is_final)),
                (Some(_), Some(_)) => break,
            }
        }
        let first = first?;
        // `hashes` holds the Hashes below `first`, most specific first.
        let Some((Value::Hash(least), between)) = hashes.split_last() else {
            return Some((Cow::Borrowed(first), all_final));
        };
        let mut merged = least.clone();
        for upper in between.iter().rev().chain([&first]) {
            if let Value::Hash(h) = upper {
                deep_merge(&mut merged, h);
            }
        }
        Some((Cow::Owned(Value::Hash(merged)), all_final))
    }

    /// A copy with one document replaced (or removed with `None`), keeping
    /// the cached entries the change cannot affect.
    fn with(&self, slot: Option<&LevelValue>, kind: DocKind, doc: Option<StoredDoc>) -> Self {
        let mut root = self.root.clone();
        let mut slots = self.slots.clone();
        match slot {
            None => root.set(kind, doc),
            Some(lv) => {
                let entry = slots.entry(lv.clone()).or_default();
                entry.set(kind, doc);
                if entry.is_empty() {
                    slots.remove(lv);
                }
            }
        }
        let out = ResourceData::new(root, slots);
        if let Some(lv) = slot {
            // A root change affects every path; a slot change only the
            // paths that pass through that slot.
            let old = self.cache.read().unwrap_or_else(PoisonError::into_inner);
            let kept = old
                .iter()
                .filter(|(path, _)| !path.contains(lv))
                .map(|(path, doc)| (path.clone(), Arc::clone(doc)))
                .collect();
            *out.cache.write().unwrap_or_else(PoisonError::into_inner) = kept;
            // Likewise the encodings.
            let old = self.encoded.read().unwrap_or_else(PoisonError::into_inner);
            let encoded = old
                .iter()
                .filter(|(path, _)| !path.contains(lv))
                .map(|(path, doc)| (path.clone(), Arc::clone(doc)))
                .collect();
            *out.encoded.write().unwrap_or_else(PoisonError::into_inner) = encoded;
        }
        out
    }
}

impl Snapshot {
    /// Builds a snapshot from everything the store holds. Documents whose
    /// environment, resource or level is not (or no longer) defined are
    /// left out: no path can reach them.
    pub(crate) fn build(data: SnapshotData) -> Snapshot {
        let SnapshotData {
            components,
            environments,
            documents,
            unreadable,
            unparsed,
            registers,
        } = data;
        let by_id: HashMap<i64, &Component> = components.iter().map(|c| (c.id, c)).collect();
        // (env, resource) → (root docs, slot docs)
        type Pending = (SlotDocs, Slots);
        let mut pending: HashMap<i64, BTreeMap<String, Pending>> = HashMap::new();
        for env in &environments {
            let resources = env
                .components
                .iter()
                .filter_map(|id| by_id.get(id))
                .flat_map(|c| &c.resource_definitions)
                .map(|d| (d.name.clone(), Pending::default()))
                .collect();
            pending.insert(env.id, resources);
        }
        let levels: HashMap<i64, &[String]> = environments
            .iter()
            .map(|e| (e.id, e.hierarchy_levels.as_slice()))
            .collect();
        for doc in documents {
            let Some(resources) = pending.get_mut(&doc.env) else {
                continue;
            };
            let Some((root, slots)) = resources.get_mut(&doc.resource) else {
                continue;
            };
            let stored = StoredDoc::new(doc.version, Arc::new(doc.content));
            match doc.slot {
                None => root.set(doc.kind, Some(stored)),
                Some(lv) => {
                    if levels[&doc.env].contains(&lv.level) {
                        slots.entry(lv).or_default().set(doc.kind, Some(stored));
                    }
                }
            }
        }
        let envs = environments
            .into_iter()
            .map(|env| {
                let resources = pending
                    .remove(&env.id)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(name, (root, slots))| (name, Arc::new(ResourceData::new(root, slots))))
                    .collect();
                (env.id, Arc::new(EnvData { env, resources }))
            })
            .collect();
        Snapshot {
            components: Arc::new(components),
            envs: Arc::new(envs),
            unreadable: Arc::new(unreadable),
            unparsed: Arc::new(unparsed),
            memo: Arc::default(),
            registers: Arc::new(Registers::from_rows(registers)),
        }
    }

    /// This snapshot with an empty answer memo of `budget` bytes (0: no
    /// memo); the snapshots derived from it by writes get the same budget.
    pub(crate) fn with_memo_budget(mut self, budget: usize) -> Snapshot {
        self.memo = Arc::new(AnswerMemo::new(budget));
        self
    }

    /// What this snapshot remembers of the answers made from it.
    pub(crate) fn memo(&self) -> &AnswerMemo {
        &self.memo
    }

    /// The stored documents that could not be read.
    pub(crate) fn unreadable(&self) -> &[UnreadableDocument] {
        &self.unreadable
    }

    /// Fails when a document the request needs is unreadable: the one of
    /// `kind` at the path's slot, or (`None`: an effective document) any of
    /// the resource's documents on the path.
    fn check_readable(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
        kind: Option<DocKind>,
    ) -> Result<(), ConfigError> {
        let needed = |u: &&UnreadableDocument| unparsed::reads(&u.at, (env, path, resource), kind);
        match self.unreadable.iter().find(needed) {
            Some(u) => Err(ConfigError::Unreadable(Box::new(u.clone()))),
            None => self.check_parsed(env, path, resource, kind),
        }
    }

    /// Whether environment `env` has an unreadable document of one of
    /// `resources` (`None`: of any resource).
    pub(crate) fn unreadable_in(
        &self,
        env: i64,
        resources: Option<&[String]>,
    ) -> Option<&UnreadableDocument> {
        self.unreadable
            .iter()
            .find(|u| u.at.env == env && resources.is_none_or(|r| r.contains(&u.at.resource)))
    }

    /// All components, as loaded.
    pub(crate) fn components(&self) -> &[Component] {
        &self.components
    }

    /// All environments, by id.
    pub(crate) fn environments(&self) -> impl Iterator<Item = &Environment> {
        self.envs.values().map(|e| &e.env)
    }

    pub(crate) fn environment(&self, env: i64) -> Option<&Environment> {
        self.envs.get(&env).map(|e| &e.env)
    }

    /// The environment's level names, least to most specific.
    pub(crate) fn levels(&self, env: i64) -> Option<&[String]> {
        self.environment(env).map(|e| e.hierarchy_levels.as_slice())
    }

    /// The resource names the environment defines, sorted.
    pub(crate) fn resource_names(&self, env: i64) -> Option<impl Iterator<Item = &str>> {
        self.envs
            .get(&env)
            .map(|e| e.resources.keys().map(String::as_str))
    }

    /// Calls `f` with every stored document (values and overrides, at the
    /// root and at every slot) of `resource` in environment `env`.
    pub(crate) fn for_each_document(&self, env: i64, resource: &str, f: &mut dyn FnMut(&Value)) {
        let Some(data) = self.envs.get(&env).and_then(|e| e.resources.get(resource)) else {
            return;
        };
        for slot in std::iter::once(&data.root).chain(data.slots.values()) {
            for doc in [&slot.values, &slot.overrides].into_iter().flatten() {
                for (k, v) in doc.content.iter() {
                    f(k);
                    f(v);
                }
            }
        }
    }

    /// The effective document of `resource` at `path`: `None` when the
    /// environment does not exist, the path does not fit its levels, or it
    /// does not define the resource. A defined resource with no data is an
    /// empty Hash. This is the lookup path: it builds no error.
    pub(crate) fn effective(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
    ) -> Option<Arc<Hash>> {
        let env = self.envs.get(&env)?;
        if !path.fits(&env.env.hierarchy_levels) {
            return None;
        }
        let data = env.resources.get(resource)?;
        Some(data.effective(path.pairs()))
    }

    /// The documents of environment `env` at `path`, for reading key after
    /// key ([`PathReader::effective_key`], with the environment found and
    /// the path checked once): `None` when either cannot be reached.
    pub(crate) fn at<'s, 'p>(
        &'s self,
        env: i64,
        path: &'p LevelPath,
    ) -> Option<PathReader<'s, 'p>> {
        let env = self.envs.get(&env)?;
        path.fits(&env.env.hierarchy_levels).then_some(PathReader {
            env,
            pairs: path.pairs(),
        })
    }

    /// [`Snapshot::effective`], saying why when there is nothing.
    ///
    /// # Errors
    ///
    /// NotFound for the environment, a level or the resource; Invalid for
    /// a path out of the environment's order.
    pub(crate) fn try_effective(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
    ) -> Result<Arc<Hash>, ConfigError> {
        let data = self.resource(env, path, resource)?;
        self.check_readable(env, path, resource, None)?;
        Ok(data.effective(path.pairs()))
    }

    /// [`Snapshot::try_effective`] as a response body, encoded on the
    /// first read of this snapshot and shared by every later one.
    ///
    /// # Errors
    ///
    /// As [`Snapshot::try_effective`].
    pub(crate) fn try_encoded(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
    ) -> Result<Arc<Encoded>, ConfigError> {
        let data = self.resource(env, path, resource)?;
        self.check_readable(env, path, resource, None)?;
        Ok(data.encoded(path.pairs()))
    }

    /// The latest stored (not deleted) version of one document; the path's
    /// slot decides which.
    ///
    /// # Errors
    ///
    /// As [`Snapshot::try_effective`]; a document never written is
    /// `Ok(None)`.
    pub(crate) fn stored(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
        kind: DocKind,
    ) -> Result<Option<&StoredDoc>, ConfigError> {
        let data = self.resource(env, path, resource)?;
        self.check_readable(env, path, resource, Some(kind))?;
        Ok(data.slot(path.slot()).and_then(|s| s.get(kind)))
    }

    /// A new snapshot with one document replaced by `doc` (its new latest
    /// version), or removed with `None`, sharing everything else.
    ///
    /// # Errors
    ///
    /// As [`Snapshot::try_effective`].
    pub(crate) fn with_document(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
        kind: DocKind,
        doc: Option<StoredDoc>,
    ) -> Result<Snapshot, ConfigError> {
        let data = self.resource(env, path, resource)?;
        let updated = Arc::new(data.with(path.slot(), kind, doc));
        let old_env = &self.envs[&env];
        let mut resources = old_env.resources.clone();
        resources.insert(resource.to_owned(), updated);
        let mut envs = BTreeMap::clone(&self.envs);
        envs.insert(
            env,
            Arc::new(EnvData {
                env: old_env.env.clone(),
                resources,
            }),
        );
        let unreadable = if self.check_readable(env, path, resource, Some(kind)).is_ok() {
            Arc::clone(&self.unreadable)
        } else {
            // The write replaced it.
            let rest = self.unreadable.iter().filter(|u| {
                !(u.at.env == env
                    && u.at.resource == resource
                    && u.at.kind == kind
                    && u.at.path.slot() == path.slot())
            });
            Arc::new(rest.cloned().collect())
        };
        Ok(Snapshot {
            components: Arc::clone(&self.components),
            envs: Arc::new(envs),
            unreadable,
            unparsed: self.unparsed_without(env, path, resource, kind),
            memo: Arc::new(AnswerMemo::new(self.memo.budget())),
            registers: Arc::clone(&self.registers),
        })
    }

    /// Checks every level value of `path` against environment `env`'s
    /// registers, from memory (the rule: [`super::registers::check`]).
    ///
    /// # Errors
    ///
    /// [`NotFound::Unregistered`] or [`NotFound::NotAssigned`].
    pub(crate) fn check_registered(&self, env: i64, path: &LevelPath) -> Result<(), NotFound> {
        self.registers
            .check(env, path, |e| self.envs.contains_key(&e))
    }

    /// The values registered for `level` in `env`, sorted; `None`: no
    /// such register.
    pub(crate) fn register(&self, env: i64, level: &str) -> Option<Vec<String>> {
        self.registers.values(env, level)
    }

    /// A new snapshot with the register of `level` in `env` replaced by
    /// `values` (`None`: removed), sharing everything else. Documents and
    /// their cached effective forms stay: a register decides which paths
    /// may be asked for, not what they hold. The answer memo is kept too:
    /// lookups do not read registers.
    pub(crate) fn with_register(
        &self,
        env: i64,
        level: &str,
        values: Option<Vec<String>>,
    ) -> Snapshot {
        Snapshot {
            registers: Arc::new(self.registers.with(env, level, values)),
            ..self.clone()
        }
    }

    fn resource(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
    ) -> Result<&ResourceData, ConfigError> {
        let data = self.envs.get(&env).ok_or(NotFound::Environment(env))?;
        path.check(&data.env)?;
        data.resources.get(resource).map(|r| &**r).ok_or_else(|| {
            NotFound::Resource {
                env,
                resource: resource.to_owned(),
                defined: data.resources.len(),
            }
            .into()
        })
    }
}

pub(crate) mod compare;
#[cfg(test)]
mod tests;
mod unparsed;
