//! Reloading the auth file (with the Keystone password and CA files it
//! names) and the TLS files while `hierad serve` runs: on SIGHUP, and
//! when they change on disk (looked at every [`POLL`]), so a `hierad auth
//! revoke-token`, a new service password or a renewed certificate takes
//! effect without anyone having to signal every server that reads them.
//! What fails to load is logged and the old one kept, and so is an
//! auth file found empty (a truncation, `> auth.toml`, or a write caught
//! half-way), which would let nobody in; connections open go on.

use crate::auth::Authenticator;
use crate::auth::pool::PasswordPool;
use crate::config_file::Seen;
use crate::server::AppState;
use crate::server::http::tls::{Tls, TlsFiles};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How often the files are looked at.
pub(crate) const POLL: Duration = Duration::from_secs(2);

/// What the watched files were when the server read them at start: the
/// watch compares with this, so a change made while the server was still
/// starting (opening its database, binding) is reloaded at the first look.
#[derive(Debug, Default)]
pub(crate) struct Baseline {
    pub(crate) auth: Seen,
    pub(crate) tls: Seen,
}

/// [`load_authenticator`], and what its files were when read: the auth
/// file stamped before it is read, the Keystone files it names (password,
/// CA) right after (their names are known only then).
///
/// # Errors
///
/// As [`load_authenticator`].
pub(crate) fn load_auth(
    path: &Path,
    request_timeout: Duration,
    pool: Arc<PasswordPool>,
) -> anyhow::Result<(Authenticator, Seen)> {
    let seen = Seen::of(&[path.to_owned()]);
    let authenticator = load_authenticator(path, request_timeout, pool)?;
    let named: Vec<PathBuf> = authenticator
        .keystone_files()
        .into_iter()
        .map(Path::to_owned)
        .collect();
    Ok((authenticator, seen.and(Seen::of(&named))))
}

/// The TLS files loaded, and what they were, stamped before being read.
///
/// # Errors
///
/// As [`Tls::load`].
pub(crate) fn load_tls(files: TlsFiles) -> anyhow::Result<(Tls, Seen)> {
    let seen = Seen::of(&files.paths());
    Ok((Tls::load(files)?, seen))
}

/// Reads the auth file into an authenticator for a server whose requests
/// get `request_timeout`, checking passwords on `pool`; warns if a
/// Keystone validation can outlast it.
///
/// # Errors
///
/// The file cannot be read or holds something wrong.
pub(crate) fn load_authenticator(
    path: &Path,
    request_timeout: Duration,
    pool: Arc<PasswordPool>,
) -> anyhow::Result<Authenticator> {
    let (file, authenticator) = Authenticator::load_on(path, pool)?;
    // At start and at every reload: a file that lets nobody in locks
    // everyone out with no other sign.
    for warning in file.warnings() {
        tracing::warn!(target: "hierad::cli::reload", file = %path.display(), "{warning}");
    }
    if let Some(warning) = outlasts(authenticator.keystone_longest_validation(), request_timeout) {
        tracing::warn!(target: "hierad::cli::reload", file = %path.display(), "{warning}");
    }
    Ok(authenticator)
}

/// Why a Keystone that takes `validation` at most would be cut short by
/// the request time limit: its client would get a bare 408 where it
/// should get the 503 that names Keystone and what it did.
fn outlasts(validation: Option<Duration>, request_timeout: Duration) -> Option<String> {
    let validation = validation?;
    (validation >= request_timeout).then(|| {
        format!(
            "a Keystone validation may take up to 4 × keystone.timeout_secs = {} s (a login and a validation, twice if Keystone refuses the service token), \
             not less than --request-timeout ({} s): when Keystone is slow, clients get 408 instead of a 503 naming Keystone; \
             lower keystone.timeout_secs or raise --request-timeout",
            validation.as_secs(),
            request_timeout.as_secs_f64()
        )
    })
}

/// The files the auth file in force was read from: itself, and the
/// Keystone files it names (password, CA). Derived from what `state`
/// holds, so a reload that failed leaves the old file's ones watched.
fn auth_files(state: &AppState, path: &Path) -> Vec<PathBuf> {
    let authenticator = state.authenticator();
    let named = authenticator
        .as_deref()
        .map(Authenticator::keystone_files)
        .unwrap_or_default();
    std::iter::once(path)
        .chain(named)
        .map(Path::to_owned)
        .collect()
}

/// Reloads on SIGHUP, and each of the auth file and the TLS files when it
/// changes on disk; runs until the server stops.
pub(crate) async fn run(
    state: AppState,
    auth: Option<PathBuf>,
    tls: Option<Arc<Tls>>,
    baseline: Baseline,
) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangups = signal(SignalKind::hangup())
        .inspect_err(|_| {
            tracing::warn!(target: "hierad::cli::reload", "cannot listen for SIGHUP; changes of the files are still seen")
        })
        .ok();
    let mut auth_paths = auth
        .as_deref()
        .map(|path| auth_files(&state, path))
        .unwrap_or_default();
    let tls_paths = tls.as_ref().map(|tls| tls.paths()).unwrap_or_default();
    let (mut auth_seen, mut tls_seen) = (baseline.auth, baseline.tls);
    let mut poll = tokio::time::interval(POLL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let hangup = async {
            match hangups.as_mut() {
                Some(hangups) => hangups.recv().await,
                None => std::future::pending().await,
            }
        };
        let (reload_auth, reload_tls, why) = tokio::select! {
            received = hangup => {
                if received.is_none() {
                    hangups = None;
                    continue;
                }
                // Stamped before they are read, as at start: the next
                // look does not load again what this reload reads (a
                // reload empties the caches of verified passwords and
                // Keystone validations), only a change made since.
                (auth_seen, tls_seen) = (Seen::of(&auth_paths), Seen::of(&tls_paths));
                (true, true, "SIGHUP")
            }
            _ = poll.tick() => {
                let (auth_now, tls_now) = (Seen::of(&auth_paths), Seen::of(&tls_paths));
                let changed = (auth_now != auth_seen, tls_now != tls_seen);
                (auth_seen, tls_seen) = (auth_now, tls_now);
                (changed.0, changed.1, "changed on disk")
            }
        };
        if let (true, Some(path)) = (reload_auth, &auth) {
            reload_auth_file(&state, path, why).await;
            let files = auth_files(&state, path);
            if files != auth_paths {
                // Other Keystone files: looked at from now on, and the
                // next look reloads once more, in case they changed since
                // this reload read them.
                auth_paths = files;
                auth_seen = Seen::default();
            }
        }
        if let (true, Some(tls)) = (reload_tls, &tls) {
            match tls.reload() {
                Ok(()) => {
                    tracing::info!(target: "hierad::cli::reload", why, "reloaded the TLS certificate and key")
                }
                Err(e) => {
                    tracing::error!(target: "hierad::cli::reload", why, error = %e, "the TLS files were not reloaded; the old ones stay");
                }
            }
        }
    }
}

/// Whether the file at `path` holds nothing but white space (unreadable:
/// not known to be empty; its load says why).
fn is_empty(path: &Path) -> bool {
    crate::config_file::read_to_string(path).is_ok_and(|text| text.trim().is_empty())
}

async fn reload_auth_file(state: &AppState, path: &Path, why: &str) {
    let Some(pool) = state.authenticator().map(|a| Arc::clone(a.pool())) else {
        return;
    };
    let file = path.to_owned();
    let request_timeout = state.settings().request_timeout;
    let loaded = tokio::task::spawn_blocking(move || {
        // Refused before it is parsed: an empty file is valid TOML, an
        // auth file with no one in it.
        (!is_empty(&file)).then(|| load_authenticator(&file, request_timeout, pool))
    });
    match loaded.await {
        Ok(None) => {
            tracing::warn!(target: "hierad::cli::reload",
                why,
                file = %path.display(),
                "the auth file is empty (truncated, or caught half-written?); the old one stays in force, \
                 since an empty one would let nobody in. To refuse everyone on purpose, leave a comment in it"
            );
        }
        Ok(Some(Ok(authenticator))) => {
            state.set_authenticator(Arc::new(authenticator));
            tracing::info!(target: "hierad::cli::reload", why, "reloaded the auth file");
        }
        Ok(Some(Err(e))) => {
            tracing::error!(target: "hierad::cli::reload", why, error = %format!("{e:#}"), "the auth file was not reloaded; the old one stays");
        }
        Err(e) => {
            tracing::error!(target: "hierad::cli::reload", why, error = %e, "the auth file was not reloaded")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keystone_slower_than_the_request_limit_is_named() {
        let s = Duration::from_secs;
        assert_eq!(outlasts(None, s(1)), None);
        assert_eq!(outlasts(Some(s(20)), s(30)), None);
        let warning = outlasts(Some(s(40)), s(30)).unwrap();
        assert!(
            warning.contains("40 s") && warning.contains("--request-timeout (30 s)"),
            "{warning}"
        );
        assert!(outlasts(Some(s(4)), Duration::from_millis(3500)).is_some());
    }

    #[test]
    fn the_keystone_password_file_is_looked_at_too() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.toml");
        let password = dir.path().join("k.pw");
        std::fs::write(&password, "pw\n").unwrap();
        let store = Arc::new(crate::store::SqliteStore::open_in_memory().unwrap());
        let state = AppState::new(store, crate::settings::Settings::default()).unwrap();
        assert_eq!(
            auth_files(&state, &file),
            vec![file.clone()],
            "none loaded: itself"
        );
        std::fs::write(
            &file,
            format!(
                "[keystone]\nurl = \"http://k/v3\"\nuser = \"u\"\npassword_file = {:?}\n\
                 project = \"p\"\n[keystone.roles]\nreader = \"read\"\n",
                password.display().to_string()
            ),
        )
        .unwrap();
        state.set_authenticator(Arc::new(
            load_authenticator(&file, Duration::from_secs(30), Arc::default()).unwrap(),
        ));
        assert_eq!(auth_files(&state, &file), [file.clone(), password]);
    }
}
