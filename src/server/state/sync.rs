//! The catch-up task: every `--sync-every`, reads the store's generation
//! and publishes what other processes committed past the one served (the
//! CLI with `--db`, a second server on the same file), through the same
//! path as the server's own writes ([`AppState::catch_up`]).
//!
//! Polling the generation row rather than SQLite's `PRAGMA data_version`:
//! one read of one cached page either way, but the row also says how far
//! behind the server is, counts this process's own commits too, and
//! changes only for writes a snapshot can see (pruning and retention
//! settings leave it alone).

//!
//! The LISTEN task (PostgreSQL) wakes it before its pause ends when a
//! write is announced ([`AppState::wake`]).
//!
//! While catching up fails (the database down), the pause between tries
//! doubles from `--sync-every` up to [`MAX_BACKOFF`], so a replica does not
//! hammer a database that is restarting, and recovers within that bound of
//! its return. One log line when it breaks, one when it recovers.

use crate::server::state::AppState;
use std::time::Duration;

/// The longest pause between two tries while catching up fails.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Runs the catch-up task on the current runtime until the runtime stops.
pub(crate) fn spawn(state: AppState) {
    tokio::spawn(async move {
        let every = state.settings().sync_every;
        let mut pause = every;
        // Logged once per run of failures, not on every try.
        let mut failing = false;
        loop {
            state.pause_or_wake(pause).await;
            match state.catch_up().await {
                Ok(_) => {
                    if failing {
                        failing = false;
                        tracing::info!(target: "hierad::server::sync", "catching up with the database works again");
                    }
                    pause = every;
                }
                Err(e) => {
                    if !failing {
                        failing = true;
                        tracing::error!(target: "hierad::server::sync", error = %e.detail(), "cannot catch up with the database; serving the last snapshot, retrying with backoff");
                    }
                    pause = next_pause(pause, every);
                }
            }
        }
    });
}

/// The pause after a failed try that followed a pause of `last`.
fn next_pause(last: Duration, every: Duration) -> Duration {
    last.saturating_mul(2).min(MAX_BACKOFF.max(every))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_doubles_up_to_the_bound_and_never_below_sync_every() {
        let every = Duration::from_millis(20);
        let mut pause = every;
        let mut seen = Vec::new();
        for _ in 0..10 {
            pause = next_pause(pause, every);
            seen.push(pause.as_millis());
        }
        assert_eq!(seen, [40, 80, 160, 320, 640, 1000, 1000, 1000, 1000, 1000]);
        let slow = Duration::from_secs(3600);
        assert_eq!(next_pause(slow, slow), slow);
    }

    /// A wake (what the LISTEN task does for an announced write) makes
    /// the catch-up task publish another process's write at once, long
    /// before its hourly poll; the lag in generations says what is known
    /// and not yet served.
    #[test]
    fn a_wake_catches_up_before_the_next_poll() {
        use crate::configdb::{ComponentRef, NewComponent, NewEnvironment};
        use crate::settings::Settings;
        use crate::store::{SqliteStore, Store};
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("hierad.db");
        let other = SqliteStore::open(&db).unwrap();
        let settings = Settings {
            sync_every: Duration::from_secs(3600),
            ..Settings::default()
        };
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let state = AppState::new(Arc::new(SqliteStore::open(&db).unwrap()), settings).unwrap();
        let _guard = runtime.enter();
        spawn(state.clone());
        other
            .create_component(&NewComponent {
                id: None,
                name: "fuel".into(),
                resource_definitions: vec!["globals".into()],
            })
            .unwrap();
        other
            .create_environment(&NewEnvironment {
                hiera: Default::default(),
                id: Some(1),
                components: vec![ComponentRef::Name("fuel".into())],
                hierarchy_levels: vec![],
            })
            .unwrap();
        let newest = other.generation().unwrap();
        assert_eq!(state.generation(), 0, "an hourly poll has not run yet");
        state.announced(newest);
        assert_eq!(state.lag_generations(), newest);
        state.wake();
        let start = std::time::Instant::now();
        while state.generation() < newest {
            assert!(start.elapsed() < Duration::from_secs(10), "never woke");
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(state.lag_generations(), 0);
        assert_eq!(state.snapshot().environments().count(), 1);
    }
}
