//! The one place the server is assembled from its settings: the store
//! opened (with its quotas, and the sample loaded into an empty
//! database), the state, the auth and TLS files, the background tasks
//! (retention, catch-up, LISTEN, reloading the files) and the accept
//! loop. `hierad serve` parses its flags into [`Settings`] and
//! [`SecurityFiles`] and calls [`run`]; tests call [`run_on`] with a
//! socket of their own and their own shutdown (`cli::serve_in_process`).

use super::AppState;
use super::http::signal;
use super::http::tls::{Tls, TlsFiles};
use super::reload::{self, Baseline};
use crate::auth::Authenticator;
use crate::auth::pool::PasswordPool;
use crate::configdb::{DocKind, LevelPath};
use crate::ops::{self, Local, NewEnv, TreeImport};
use crate::settings::{Sample, Settings};
use crate::store::{Quotas, Store};
use crate::tree::read_tree;
use anyhow::Context;
use std::future::Future;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The files and flags that decide who may use the server: `--auth`,
/// `--tls-*`, `--insecure` and the password checks' pool.
#[derive(Clone, Debug, Default)]
pub(crate) struct SecurityFiles {
    pub(crate) auth: Option<PathBuf>,
    pub(crate) tls_cert: Option<PathBuf>,
    pub(crate) tls_key: Option<PathBuf>,
    pub(crate) tls_client_ca: Option<PathBuf>,
    pub(crate) insecure: bool,
    pub(crate) password_threads: Option<NonZeroUsize>,
    pub(crate) password_queue: usize,
}

/// Serves as `settings` say until SIGTERM or SIGINT, then drains.
///
/// # Errors
///
/// A file or the database that cannot be used, a server anyone on the
/// network could use without `--insecure`, an address it cannot listen on.
pub(crate) fn run(
    settings: Settings,
    security: &SecurityFiles,
    quotas: Quotas,
) -> anyhow::Result<ExitCode> {
    let listen = settings.listen;
    run_on(
        settings,
        security,
        quotas,
        Listener::Bind(listen),
        signal::shutdown_signal(),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Where [`run_on`] serves.
pub(crate) enum Listener {
    /// The address `--listen` names, bound once the runtime runs.
    Bind(std::net::SocketAddr),
    /// A socket already bound (by a test, on a free port).
    Bound(std::net::TcpListener),
}

/// [`run`] on `listener` until `shutdown`: the whole server, assembled,
/// on a runtime of its own, which is gone when this returns.
///
/// # Errors
///
/// As [`run`]'s.
pub(crate) fn run_on(
    settings: Settings,
    security: &SecurityFiles,
    quotas: Quotas,
    listener: Listener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let mut server = Assembled::new(settings, security, quotas)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(async {
        let listener = match listener {
            Listener::Bind(addr) => tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?,
            Listener::Bound(socket) => {
                socket.set_nonblocking(true)?;
                tokio::net::TcpListener::from_std(socket)?
            }
        };
        server.serve(listener, shutdown).await
    });
    // The store after the runtime: see [`Assembled::store`].
    drop(runtime);
    drop(server.state);
    drop(server.store);
    served
}

/// The server built from its settings, not yet serving: the store
/// opened (the sample loaded into an empty one), the state, the auth
/// and TLS files read.
pub(crate) struct Assembled {
    state: AppState,
    security: Security,
    /// Dropped last, after the runtime: PostgreSQL's blocking client runs
    /// a runtime of its own to close its connections, which panics on one
    /// of the server's workers (where a task holding the last AppState
    /// would drop it at shutdown).
    store: Arc<dyn Store>,
}

impl Assembled {
    /// # Errors
    ///
    /// As [`run`]'s, but for the address.
    pub(crate) fn new(
        settings: Settings,
        security: &SecurityFiles,
        quotas: Quotas,
    ) -> anyhow::Result<Assembled> {
        let security = Security::load(security, &settings)?;
        // Before the database: a wrong key file stops the start, named.
        let keys = super::secrets::load(&settings)?;
        let store: Arc<dyn Store> =
            crate::store::open_writable(&settings.db).with_context(|| {
                format!(
                    "cannot open the database {}",
                    crate::store::describe(&settings.db)
                )
            })?;
        // Every write this server makes is bounded, the sample's too.
        store.set_quotas(quotas);
        load_sample_if_empty(&store, &settings.sample)?;
        let state = AppState::new(Arc::clone(&store), settings.clone()).map_err(|e| {
            let db = crate::store::describe(&settings.db);
            anyhow::anyhow!(
                "cannot load the database {db}: {}. If the file is damaged, restore it from a backup; \
                 `hierad doctor --db {db}` lists the documents that cannot be read",
                e.detail()
            )
        })?;
        if let Some(authenticator) = &security.authenticator {
            state.set_authenticator(Arc::clone(authenticator));
        }
        if let Some(keys) = keys {
            state
                .secrets()
                .install(keys, state.settings().eyaml_cache_bytes);
        }
        Ok(Assembled {
            state,
            security,
            store,
        })
    }

    /// Starts the background tasks (retention, catch-up, LISTEN,
    /// reloading the files) and serves on `listener` until `shutdown`,
    /// then drains.
    ///
    /// # Errors
    ///
    /// The listener failing.
    pub(crate) async fn serve(
        &mut self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let (state, security) = (&self.state, &mut self.security);
        let settings = state.settings();
        let addr = listener.local_addr()?;
        let scheme = if security.tls.is_some() {
            "https"
        } else {
            "http"
        };
        eprintln!("listening on {scheme}://{addr}");
        tracing::info!(target: "hierad::cli::serve", %addr, db = %crate::store::describe(&settings.db), tls = security.tls.is_some(), auth = security.authenticator.is_some(), "serving");
        if !settings.proxies.is_empty() {
            tracing::info!(target: "hierad::cli::serve", balancers = %settings.proxies, "connections from these balancers must start with a PROXY protocol header");
        }
        super::state::retention::spawn(state.clone());
        super::state::sync::spawn(state.clone());
        if let Some(feed) = state.change_feed() {
            super::state::listen::spawn(state.clone(), feed);
        }
        tokio::spawn(super::secrets::watch(state.clone()));
        tokio::spawn(reload::run(
            state.clone(),
            security.auth_file.clone(),
            security.tls.clone(),
            std::mem::take(&mut security.baseline),
        ));
        super::serve(listener, state.clone(), security.tls.clone(), shutdown).await?;
        tracing::info!(target: "hierad::cli::serve", "stopped");
        Ok(())
    }
}

/// What `--auth`, `--tls-*` and `--insecure` make of the server.
struct Security {
    auth_file: Option<PathBuf>,
    authenticator: Option<Arc<Authenticator>>,
    tls: Option<Arc<Tls>>,
    /// What those files were when read, for the reload to start from.
    baseline: Baseline,
}

impl Security {
    /// Loads the auth file and TLS files, and refuses a server anyone on
    /// the network could use unless told `--insecure`.
    fn load(args: &SecurityFiles, settings: &Settings) -> anyhow::Result<Security> {
        let mut baseline = Baseline::default();
        let authenticator = match args.auth.as_deref() {
            Some(path) => {
                let pool = PasswordPool::new(
                    args.password_threads
                        .map_or_else(crate::auth::pool::default_threads, NonZeroUsize::get),
                    args.password_queue,
                );
                let (authenticator, stamps) =
                    reload::load_auth(path, settings.request_timeout, Arc::new(pool))?;
                baseline.auth = stamps;
                Some(Arc::new(authenticator))
            }
            None => None,
        };
        let tls = match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => {
                let (tls, stamps) = reload::load_tls(TlsFiles {
                    cert: cert.clone(),
                    key: key.clone(),
                    client_ca: args.tls_client_ca.clone(),
                })?;
                baseline.tls = stamps;
                Some(Arc::new(tls))
            }
            _ => None,
        };
        let ip = settings.listen.ip();
        if authenticator.is_none() && !ip.is_loopback() {
            if !args.insecure {
                anyhow::bail!(
                    "refusing to listen on {} without authentication: anyone who can connect could read every secret and delete every environment. \
                     Give --auth FILE (create users and tokens with `hierad auth add-user` / `add-token`, see docs/security.md), \
                     with --tls-cert/--tls-key, or listen on 127.0.0.1; --insecure serves everyone anyway",
                    settings.listen
                );
            }
            tracing::warn!(target: "hierad::cli::serve", listen = %settings.listen, "--insecure: serving without authentication beyond loopback; anyone who can connect may read and change everything");
        }
        if authenticator.is_some() && tls.is_none() && !ip.is_loopback() {
            tracing::warn!(target: "hierad::cli::serve", listen = %settings.listen, "no --tls-cert: passwords and tokens cross the network in clear text");
        }
        // What a local user could read to act as the server or a client.
        let secrets = [
            args.auth.as_deref().map(|p| ("the auth file", p)),
            authenticator
                .as_deref()
                .and_then(Authenticator::keystone_password_file)
                .map(|p| ("the Keystone password file", p)),
            args.tls_key
                .as_deref()
                .map(|p| ("the TLS key (--tls-key)", p)),
            // Every password of the cluster is in it.
            (!crate::store::is_url(&settings.db))
                .then_some(("the database (--db)", settings.db.as_path())),
        ];
        for (what, path) in secrets.into_iter().flatten() {
            warn_if_readable_by_others(what, path);
        }
        Ok(Security {
            auth_file: args.auth.clone(),
            authenticator,
            tls,
            baseline,
        })
    }
}

fn warn_if_readable_by_others(what: &str, path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if std::fs::metadata(path).is_ok_and(|meta| meta.permissions().mode() & 0o077 != 0) {
        tracing::warn!(target: "hierad::cli::serve", file = %path.display(), "{what} is readable by other users; chmod 600 it");
    }
}

/// Whether, after this process failed to load the sample, another one
/// is loading it: the database holds an environment, or comes to within
/// a few seconds (the winner creates its component, then environment 1).
fn loaded_by_another(store: &dyn Store) -> anyhow::Result<bool> {
    for _ in 0..50 {
        if !store.environments()?.is_empty() {
            return Ok(true);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Ok(false)
}

/// On first start, the sample tree becomes environment 1 (level `nodes`),
/// every file a resource at the root, so the first lookup answers. The
/// log says what was loaded, or why nothing was.
fn load_sample_if_empty(store: &Arc<dyn Store>, sample: &Sample) -> anyhow::Result<()> {
    let (files, source) = match sample {
        Sample::Off => {
            tracing::info!(target: "hierad::cli::serve", "--no-sample: no sample loaded");
            return Ok(());
        }
        Sample::BuiltIn => (None, crate::sample::NAME.to_owned()),
        Sample::Dir(dir) => (Some(dir), dir.display().to_string()),
    };
    if let Some(dir) = files {
        // A sample that cannot be read is the operator's mistake, said
        // now rather than found later as an empty server.
        if !dir.is_dir() {
            anyhow::bail!("--sample {}: not a directory", dir.display());
        }
    }
    let environments = store.environments()?.len();
    if environments > 0 {
        tracing::info!(target: "hierad::cli::serve",
            environments,
            sample = %source,
            "the database holds environments: no sample loaded"
        );
        return Ok(());
    }
    let files = match files {
        Some(dir) => {
            read_tree(dir).with_context(|| format!("cannot load the sample {}", dir.display()))?
        }
        None => crate::sample::files().context("cannot load the built-in sample")?,
    };
    let sample = source;
    let levels = [(LevelPath::root(), files)];
    let import = TreeImport {
        env: 1,
        levels: &levels,
        kind: DocKind::Values,
        replace: false,
        register: false,
        new_env: NewEnv {
            hiera: crate::configdb::HieraVersion::Three,
            levels: vec!["nodes".to_owned()],
            component: "fuel".to_owned(),
        },
        define_up_front: true,
    };
    // Only into an environment this process creates: another one that
    // found the database empty too may have created it meanwhile.
    let taken = |_: &crate::configdb::Environment| -> Result<(), ops::OpsError> {
        Err(ops::OpsError::Refused(
            "environment 1 was created meanwhile".to_owned(),
        ))
    };
    let summary = match ops::import_tree(&Local::new(store.clone()), &import, &taken) {
        Ok(summary) => summary,
        // Replicas started together on an empty database each try; one
        // creates environment 1 and the others fail on it (or on the
        // component they define meanwhile), or find it made. A loser
        // starts normally.
        Err(e) if loaded_by_another(store.as_ref())? => {
            tracing::info!(target: "hierad::cli::serve",
                sample = %sample,
                "another process loaded the sample into the empty database meanwhile: not loaded again ({e})"
            );
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    crate::sample::define_schemas(store.as_ref(), "fuel")
        .context("cannot set the sample's resource schemas")?;
    tracing::info!(target: "hierad::cli::serve",
        documents = summary.written,
        sample = %sample,
        "empty database: loaded the sample as environment 1"
    );
    Ok(())
}
