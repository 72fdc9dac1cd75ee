//! The change log's recent pages, read once and shared by every change
//! feed request (`routes/changes.rs`). Without it each waiter reads the
//! log itself on connect and after every publish: N blocking reads per
//! write for N waiters. A page is keyed by what it answers, `(since,
//! published generation)`; the first request for a key reads it while
//! the others wait on that key alone (a `OnceCell`, so a publish wakes
//! every waiter at once when the read is done, not one after another
//! through a lock), and each answer made from a page is encoded once for
//! everyone who sees the same part of it.

use crate::server::http::error::ApiError;
use crate::store::Logged;
use bytes::Bytes;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::OnceCell;

/// One read of the log: the newest generation and the entries past
/// `since` (at most one page), as `Store::logged_since` answers them,
/// with the answers made from it.
pub(crate) struct LogPage {
    pub(crate) newest: u64,
    pub(crate) logged: Vec<Logged>,
    answers: Mutex<HashMap<Seen, Arc<Answer>>>,
}

/// A shared page.
pub(crate) type Page = Arc<LogPage>;

/// Which part of a page a request sees: its `env=` and the environments
/// its principal may use (`None`: all).
pub(crate) type Seen = (Option<i64>, Option<Arc<[i64]>>);

/// An answer made from a page, as its response body.
pub(crate) struct Answer {
    /// The generation to ask from next.
    pub(crate) generation: u64,
    /// Whether it lists no change.
    pub(crate) empty: bool,
    /// Its JSON.
    pub(crate) body: Bytes,
}

/// Log entries read per page: a client far behind pages through.
pub(crate) const PAGE: usize = 1000;

/// Pages kept: enough for waiters a few generations apart; a key of an
/// older published generation is dropped first.
const KEPT: usize = 16;

/// Answers kept per page: distinct views (principals limited to other
/// environments, `env=` filters) past these are made per request.
const VIEWS: usize = 64;

impl LogPage {
    pub(crate) fn new((newest, logged): (u64, Vec<Logged>)) -> LogPage {
        LogPage {
            newest,
            logged,
            answers: Mutex::default(),
        }
    }

    /// The answer for `seen`, made by `make` only if no request with the
    /// same view has made it.
    pub(crate) fn answer(&self, seen: Seen, make: impl FnOnce(&LogPage) -> Answer) -> Arc<Answer> {
        let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(made) = answers.get(&seen) {
            return Arc::clone(made);
        }
        let made = Arc::new(make(self));
        if answers.len() < VIEWS {
            answers.insert(seen, Arc::clone(&made));
        }
        made
    }
}

/// A page being read, or read: every request for its key waits on it.
type Reading = Arc<OnceCell<Page>>;

/// The shared pages, keyed by `(since, published generation)`.
#[derive(Default)]
pub(crate) struct Feed {
    pages: Mutex<HashMap<(u64, u64), Reading>>,
}

impl Feed {
    /// The page for `since` as of `published`, read by `load` only if no
    /// request has read it yet: concurrent requests for one key cost one
    /// read, and wait for it together.
    ///
    /// # Errors
    ///
    /// What `load` returns (nothing is kept then: the next request reads).
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
        let cell = {
            let mut pages = self.pages.lock().unwrap_or_else(PoisonError::into_inner);
            if !pages.contains_key(&(since, published)) && pages.len() >= KEPT {
                // Pages of older publishes first: their waiters have moved on.
                pages.retain(|&(_, p), _| p >= published);
                if pages.len() >= KEPT {
                    pages.clear();
                }
            }
            Arc::clone(pages.entry((since, published)).or_default())
        };
        let page = cell
            .get_or_try_init(|| async { Ok::<_, ApiError>(Arc::new(LogPage::new(load().await?))) })
            .await?;
        Ok(Arc::clone(page))
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
            assert_eq!(page.logged, vec![entry(5)]);
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
        assert_eq!(newer.newest, 6);
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
        assert_eq!(page.unwrap().newest, 2);
    }

    #[tokio::test]
    async fn a_read_in_progress_holds_up_only_its_own_key() {
        use futures_util::FutureExt;
        let feed = Arc::new(Feed::default());
        let (started, is_started) = tokio::sync::oneshot::channel();
        let (finish, finished) = tokio::sync::oneshot::channel::<()>();
        let slow = {
            let feed = Arc::clone(&feed);
            tokio::spawn(async move {
                feed.page(1, 9, || async move {
                    let _ = started.send(());
                    let _ = finished.await;
                    Ok((9, vec![entry(9)]))
                })
                .await
            })
        };
        is_started.await.unwrap();
        // Another key's page is read at once, not after the slow one.
        let other = feed.page(2, 9, || async { Ok((9, Vec::new())) });
        let page = other.now_or_never().expect("not held up").unwrap();
        assert_eq!(page.newest, 9);
        finish.send(()).unwrap();
        assert_eq!(slow.await.unwrap().unwrap().logged, vec![entry(9)]);
    }

    #[tokio::test]
    async fn an_answer_is_made_once_per_view() {
        let feed = Feed::default();
        let page = feed
            .page(4, 5, || async { Ok((5, vec![entry(5)])) })
            .await
            .unwrap();
        let made = AtomicUsize::new(0);
        let make = |_: &LogPage| {
            made.fetch_add(1, Ordering::SeqCst);
            Answer {
                generation: 5,
                empty: false,
                body: Bytes::from_static(b"{}"),
            }
        };
        let everyone = page.answer((None, None), make);
        let again = page.answer((None, None), make);
        assert!(Arc::ptr_eq(&everyone, &again));
        assert_eq!(made.load(Ordering::SeqCst), 1);
        page.answer((Some(1), None), make);
        page.answer((None, Some(Arc::from(vec![2]))), make);
        assert_eq!(made.load(Ordering::SeqCst), 3);
        for e in 0..2 * VIEWS as i64 {
            page.answer((Some(e), None), make);
        }
        assert!(page.answers.lock().unwrap().len() <= VIEWS);
    }

    #[tokio::test]
    async fn pages_stay_bounded() {
        let feed = Feed::default();
        for p in 0..100 {
            feed.page(p, p, || async move { Ok((p, Vec::new())) })
                .await
                .unwrap();
        }
        assert!(feed.pages.lock().unwrap().len() <= KEPT);
    }
}
