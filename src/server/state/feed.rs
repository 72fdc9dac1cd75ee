//! The change log's recent pages, read once and shared by every change
//! feed request (`routes/changes.rs`). Without it each waiter reads the
//! log itself on connect and after every publish: N blocking reads per
//! write for N waiters. A page is keyed by what it answers, `(since,
//! published generation)`; the first request for a key reads it while
//! the others wait on the same lock and then find it.

use crate::server::http::error::ApiError;
use crate::store::Logged;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// The newest generation and the log entries past `since` (at most one
/// page), as `Store::logged_since` answers them.
pub(crate) type Page = Arc<(u64, Vec<Logged>)>;

/// Log entries read per page: a client far behind pages through.
pub(crate) const PAGE: usize = 1000;

/// Pages kept: enough for waiters a few generations apart; a key of an
/// older published generation is dropped first.
const KEPT: usize = 16;

/// The shared pages, keyed by `(since, published generation)`.
#[derive(Default)]
pub(crate) struct Feed {
    pages: tokio::sync::Mutex<HashMap<(u64, u64), Page>>,
}

impl Feed {
    /// The page for `since` as of `published`, read by `load` only if no
    /// request has read it yet. Reads are serialized: concurrent requests
    /// for one key cost one read.
    ///
    /// # Errors
    ///
    /// What `load` returns (nothing is kept then).
    pub(crate) async fn page<F, Fut>(
        &self,
        since: u64,
        published: u64,
        load: F,
    ) -> Result<Page, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(u64, Vec<Logged>), ApiError>>,
    {
        let mut pages = self.pages.lock().await;
        if let Some(page) = pages.get(&(since, published)) {
            return Ok(Arc::clone(page));
        }
        let page: Page = Arc::new(load().await?);
        if pages.len() >= KEPT {
            // Pages of older publishes first: their waiters have moved on.
            pages.retain(|&(_, p), _| p >= published);
            if pages.len() >= KEPT {
                pages.clear();
            }
        }
        pages.insert((since, published), Arc::clone(&page));
        Ok(page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn entry(generation: u64) -> Logged {
        Logged {
            generation,
            env: 1,
            level: String::new(),
            value: String::new(),
            resource: Some("r".to_owned()),
            kind: "values".to_owned(),
            version: Some(1),
            author: None,
            created_at: None,
        }
    }

    #[tokio::test]
    async fn concurrent_requests_for_one_key_read_the_log_once() {
        let feed = Arc::new(Feed::default());
        let reads = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..500 {
            let (feed, reads) = (Arc::clone(&feed), Arc::clone(&reads));
            tasks.push(tokio::spawn(async move {
                feed.page(4, 5, || async {
                    reads.fetch_add(1, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                    Ok((5, vec![entry(5)]))
                })
                .await
            }));
        }
        for t in tasks {
            let page = t.await.unwrap().unwrap();
            assert_eq!(page.1, vec![entry(5)]);
        }
        assert_eq!(reads.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_new_publish_or_since_reads_again() {
        let feed = Feed::default();
        let reads = AtomicUsize::new(0);
        let load = |g: u64| {
            let reads = &reads;
            move || async move {
                reads.fetch_add(1, Ordering::SeqCst);
                Ok((g, vec![entry(g)]))
            }
        };
        feed.page(4, 5, load(5)).await.unwrap();
        feed.page(4, 5, load(5)).await.unwrap();
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        let newer = feed.page(4, 6, load(6)).await.unwrap();
        assert_eq!(newer.0, 6);
        feed.page(5, 6, load(6)).await.unwrap();
        assert_eq!(reads.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_failed_read_is_not_kept() {
        let feed = Feed::default();
        let failed = feed
            .page(1, 2, || async {
                Err(ApiError::Internal("down".to_owned()))
            })
            .await;
        assert!(failed.is_err());
        let page = feed.page(1, 2, || async { Ok((2, vec![entry(2)])) }).await;
        assert_eq!(page.unwrap().0, 2);
    }

    #[tokio::test]
    async fn pages_stay_bounded() {
        let feed = Feed::default();
        for p in 0..100 {
            feed.page(p, p, || async move { Ok((p, Vec::new())) })
                .await
                .unwrap();
        }
        assert!(feed.pages.lock().await.len() <= KEPT);
    }
}
