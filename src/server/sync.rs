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

use super::state::AppState;

/// Runs the catch-up task on the current runtime until the runtime stops.
pub(crate) fn spawn(state: AppState) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(state.settings().sync_every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // Logged once per run of failures, not on every tick.
        let mut failing = false;
        loop {
            ticks.tick().await;
            match state.catch_up().await {
                Ok(_) if failing => {
                    failing = false;
                    tracing::info!("catching up with the database works again");
                }
                Ok(_) => {}
                Err(e) if !failing => {
                    failing = true;
                    tracing::error!(error = ?e, "cannot catch up with the database; serving the last snapshot");
                }
                Err(_) => {}
            }
        }
    });
}
