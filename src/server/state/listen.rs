//! The LISTEN task: on PostgreSQL every committed write is
//! announced at its commit (`NOTIFY hierad_changes, '<generation>'`, see
//! [`crate::store::ChangeFeed`]); this task keeps one connection listening
//! there and wakes the catch-up task ([`crate::server::sync`]) at once, so every
//! replica serves a write within a round trip of its commit instead of
//! within a poll.
//!
//! Polling stays, as the safety net: PostgreSQL keeps no notification for
//! a listener that is not connected, so one sent while this connection is
//! down is lost; after every (re)connect the task wakes the catch-up once,
//! which reads the change log past the generation served and so misses
//! nothing. And the poll is what confirms, every `--sync-every`, that the
//! replica serves the newest generation when nothing is written (`/readyz`,
//! the sync age), for one read of one row.
//!
//! A lost connection is reopened with a pause doubling from
//! [`FIRST_PAUSE`] to [`crate::server::state::sync::MAX_BACKOFF`]; one log line when it
//! is lost, one when it listens again.

use crate::server::state::AppState;
use crate::store::ChangeFeed;
use std::time::Duration;
use tokio_postgres::AsyncMessage;

/// The pause before the first reconnection.
const FIRST_PAUSE: Duration = Duration::from_millis(50);

/// Runs the LISTEN task on the current runtime until the runtime stops.
pub(crate) fn spawn(state: AppState, feed: ChangeFeed) {
    tokio::spawn(async move {
        let mut pause = FIRST_PAUSE;
        let mut lost = false;
        loop {
            let outcome = listen(&state, &feed, || {
                if lost {
                    tracing::info!(target: "hierad::server::listen", channel = feed.channel, "listening for writes again");
                }
                lost = false;
                pause = FIRST_PAUSE;
            })
            .await;
            if !lost {
                lost = true;
                match outcome {
                    Ok(()) => tracing::warn!(target: "hierad::server::listen",
                        channel = feed.channel,
                        "the LISTEN connection closed; reconnecting (polling meanwhile)"
                    ),
                    Err(e) => {
                        tracing::warn!(target: "hierad::server::listen", channel = feed.channel, error = %e, "the LISTEN connection failed; reconnecting (polling meanwhile)")
                    }
                }
            }
            tokio::time::sleep(pause).await;
            pause = pause
                .saturating_mul(2)
                .min(crate::server::state::sync::MAX_BACKOFF);
        }
    });
}

/// Connects, listens, and wakes the catch-up for each notification until
/// the connection ends. `listening` runs once the LISTEN is in place.
async fn listen(
    state: &AppState,
    feed: &ChangeFeed,
    listening: impl FnOnce(),
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = feed.config.connect(feed.tls.clone()).await?;
    let announced = state.clone();
    // The connection delivers notifications only while it is polled; its
    // task also carries the LISTEN below.
    let messages = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if let Ok(generation) = n.payload().parse::<u64>() {
                        announced.announced(generation);
                    }
                    announced.wake();
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN {}", feed.channel))
        .await?;
    // What committed while nobody listened is in the change log.
    state.wake();
    listening();
    let ended = messages.await;
    drop(client);
    match ended {
        Ok(outcome) => outcome,
        // Only a panic ends the task otherwise: reconnect all the same.
        Err(_) => Ok(()),
    }
}
