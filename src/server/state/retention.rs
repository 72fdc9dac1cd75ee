//! The pruning task: every `--prune-every`, prunes the versions that the
//! retention policies no longer keep, in small batches off the request
//! path, and measures the database for `hierad_database_bytes`.

use crate::server::state::AppState;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Versions pruned per store call: each call is a few short transactions,
/// and writers get the store between calls.
const BATCH: usize = 500;

/// Pause between batches, so a long backlog never holds writers off.
const BETWEEN_BATCHES: Duration = Duration::from_millis(20);

/// Runs the pruning task on the current runtime until the runtime stops.
pub(crate) fn spawn(state: AppState) {
    tokio::spawn(async move {
        let every = state.settings().prune_every;
        loop {
            round(&state).await;
            tokio::time::sleep(every).await;
        }
    });
}

/// One round: prune until nothing is due, then measure. Failures are
/// logged and retried next round; they never stop the server.
pub(crate) async fn round(state: &AppState) {
    let default = state.settings().retention;
    loop {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let report = state
            .read(move |store| Ok(store.prune(&default, now, BATCH)?))
            .await;
        match report {
            Ok(report) => {
                state.metrics().versions_pruned(report.pruned);
                if report.pruned > 0 {
                    tracing::info!(target: "hierad::server::retention", pruned = report.pruned, "pruned old versions");
                }
                if !report.more {
                    break;
                }
            }
            Err(e) => {
                tracing::error!(target: "hierad::server::retention", error = %e.detail(), "pruning old versions failed");
                break;
            }
        }
        tokio::time::sleep(BETWEEN_BATCHES).await;
    }
    match state.read(|store| Ok(store.database_size()?)).await {
        Ok(size) => state.metrics().set_database_size(&size),
        Err(e) => {
            tracing::error!(target: "hierad::server::retention", error = %e.detail(), "cannot measure the database")
        }
    }
}
