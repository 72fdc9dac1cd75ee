//! The lookup-answer cache: answer bodies keyed by the data generation and
//! the request body, so a write invalidates every answer at once.
//!
//! An answer is admitted on its second miss, not its first. A deployment's
//! first wave is mostly one-off requests (each node asks each key once per
//! compile); caching them all cost a quarter of the server's CPU in table
//! growth, page faults and eviction, and pushed repeated answers out.

use super::Doorkeeper;
use bytes::Bytes;
use std::hash::BuildHasher;

/// Fingerprints remembered by the doorkeeper (8 bytes each).
const DOORKEEPER_SLOTS: usize = 1 << 16;

type Key = (u64, Bytes);

/// The least budget of each of the cache's shards (see [`AnswerCache::new`]).
const SHARD_BYTES: u64 = 4 << 20;

/// An answer body, and whether it holds a tag (src/wire.rs) as its
/// `X-Hierad-Tagged` header says: found once, when the answer is made,
/// not searched for again at every hit (a third of a microsecond for a
/// 2 KB answer, 2 % of a cached lookup).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Answer {
    pub(crate) body: Bytes,
    pub(crate) tagged: bool,
    /// The environment its request named: a hit, answered before its
    /// request is parsed, is checked against the principal's limits.
    pub(crate) env: i64,
}

/// Weighs an answer by its request and answer bodies' bytes.
#[derive(Clone, Copy)]
struct Bodies;

impl quick_cache::Weighter<Key, Answer> for Bodies {
    fn weight(&self, key: &Key, answer: &Answer) -> u64 {
        // Never zero (quick_cache keeps zero-weight entries forever).
        u64::try_from(key.1.len() + answer.body.len())
            .unwrap_or(u64::MAX)
            .max(1)
    }
}

type Answers = quick_cache::sync::Cache<
    Key,
    Answer,
    Bodies,
    foldhash::fast::RandomState,
    quick_cache::sync::DefaultLifecycle<Key, Answer>,
>;

/// Lookup answers for repeated requests. Disabled with a budget of 0.
pub(crate) struct AnswerCache {
    answers: Option<Answers>,
    doorkeeper: Doorkeeper,
    hasher: foldhash::fast::RandomState,
}

/// A request that missed: what [`AnswerCache::admit`] needs to keep its
/// answer.
pub(crate) struct Miss {
    key: Key,
}

impl AnswerCache {
    /// A cache holding at most `budget` bytes of request and answer bodies.
    pub(crate) fn new(budget: u64) -> AnswerCache {
        let hasher = foldhash::fast::RandomState::default();
        let answers = (budget > 0).then(|| {
            // quick_cache splits the budget between shards and never
            // keeps an answer over a shard's share: shards of 4 MiB at
            // least (one for a smaller budget), 16 at most, where its
            // default (four per core) left a 256 MiB cache on 64 cores
            // unable to keep a 1 MiB answer.
            let shards = usize::try_from(budget / SHARD_BYTES)
                .unwrap_or(usize::MAX)
                .clamp(1, 16);
            let options = quick_cache::OptionsBuilder::new()
                // Sized for a deployment's first wave: growing the table
                // by rehashing cost 7% of the server's CPU (perf, under
                // moka).
                .estimated_items_capacity(1 << 16)
                .weight_capacity(budget)
                .shards(shards)
                .build()
                .expect("every option is set");
            Answers::with_options(
                options,
                Bodies,
                hasher.clone(),
                quick_cache::sync::DefaultLifecycle::default(),
            )
        });
        AnswerCache {
            answers,
            doorkeeper: Doorkeeper::new(DOORKEEPER_SLOTS),
            hasher,
        }
    }

    /// The cached answer to `body` at `generation`, or the miss to admit
    /// its answer with. `body` may be a view into a larger buffer: it is
    /// copied only if its answer is admitted.
    ///
    /// # Errors
    ///
    /// The miss, when nothing is cached.
    pub(crate) fn get(&self, generation: u64, body: &Bytes) -> Result<Answer, Miss> {
        let key = (generation, body.clone());
        match &self.answers {
            Some(answers) => answers.get(&key).ok_or(Miss { key }),
            None => Err(Miss { key }),
        }
    }

    /// Drops every answer: after a write they can never be asked for again
    /// (their generation is gone), and left in place they would hold the
    /// budget until evicted, and make the admission policy turn new
    /// answers away in their favour.
    pub(crate) fn clear(&self) {
        if let Some(answers) = &self.answers {
            answers.clear();
        }
    }

    /// Keeps `answer` if this request missed before (recently enough to
    /// be remembered); otherwise remembers that it was asked.
    pub(crate) fn admit(&self, miss: Miss, answer: &Answer) {
        let Some(answers) = &self.answers else {
            return;
        };
        // Fingerprinted only here, on a miss: a hit hashes the body once.
        if !self
            .doorkeeper
            .missed_before(self.hasher.hash_one(&miss.key))
        {
            return;
        }
        // The body was a view into hyper's read buffer: a key holding it
        // would keep that whole buffer alive (about 14 KB of RSS per
        // cached answer under load), so the key gets its own copy.
        let (generation, body) = miss.key;
        answers.insert((generation, Bytes::copy_from_slice(&body)), answer.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_on_the_second_miss() {
        let cache = AnswerCache::new(1 << 20);
        let body = Bytes::from_static(b"{\"key\":\"a\"}");
        let answer = Answer {
            body: Bytes::from_static(b"{\"found\":true}"),
            tagged: false,
            env: 1,
        };
        let first = cache.get(1, &body).expect_err("empty cache");
        cache.admit(first, &answer);
        let second = cache.get(1, &body).expect_err("one miss is not admitted");
        cache.admit(second, &answer);
        assert_eq!(cache.get(1, &body).ok(), Some(answer.clone()));
        // Another generation is another key.
        assert!(cache.get(2, &body).is_err());
        cache.clear();
        assert!(cache.get(1, &body).is_err());
    }

    /// An answer of a few megabytes is kept by a 16 MiB cache, however
    /// many cores there are (quick_cache's default shards, four per core,
    /// would each hold 2 MiB on two); one over the whole budget is not.
    #[test]
    fn a_large_answer_is_kept() {
        let cache = AnswerCache::new(16 << 20);
        let body = Bytes::from_static(b"{\"key\":\"network_metadata\"}");
        let answer = Answer {
            body: Bytes::from(vec![b' '; 3 << 20]),
            tagged: false,
            env: 1,
        };
        for _ in 0..2 {
            let miss = cache.get(1, &body).expect_err("not kept yet");
            cache.admit(miss, &answer);
        }
        assert_eq!(cache.get(1, &body).ok(), Some(answer));
        let small = AnswerCache::new(1 << 20);
        let too_large = Answer {
            body: Bytes::from(vec![b' '; 2 << 20]),
            tagged: false,
            env: 1,
        };
        for _ in 0..3 {
            let miss = small.get(1, &body).expect_err("never kept");
            small.admit(miss, &too_large);
        }
    }

    #[test]
    fn a_zero_budget_caches_nothing() {
        let cache = AnswerCache::new(0);
        let body = Bytes::from_static(b"{}");
        for _ in 0..3 {
            let miss = cache.get(1, &body).expect_err("disabled");
            let answer = Answer {
                body: Bytes::from_static(b"x"),
                tagged: false,
                env: 1,
            };
            cache.admit(miss, &answer);
        }
        assert!(cache.get(1, &body).is_err());
    }
}
