//! The server `hierad serve` runs, run in this test process
//! (`hierad::cli::serve_in_process`) on 127.0.0.1:0 over a temporary
//! database: for tests of routes, statuses and headers, which need no
//! process of their own. Stopped, and waited for, when dropped.

use crate::binary::Args;
use crate::server::Served;
use std::path::Path;
use std::sync::mpsc;

#[derive(Debug)]
pub struct InProcess {
    pub url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
    _dir: Option<tempfile::TempDir>,
}

impl InProcess {
    /// A server over a fresh database holding the sample (`data/`).
    pub fn with_sample() -> InProcess {
        InProcess::in_temp_dir(&[])
    }

    /// A server over a fresh, empty database.
    pub fn empty() -> InProcess {
        InProcess::in_temp_dir(&["--no-sample"])
    }

    fn in_temp_dir(extra: &[&str]) -> InProcess {
        let dir = tempfile::tempdir().unwrap();
        let mut server = InProcess::start_on(&dir.path().join("hierad.db"), extra);
        server._dir = Some(dir);
        server
    }

    /// A server over `db` (kept by the caller), with extra flags of
    /// `hierad serve`.
    pub fn start_on(db: &Path, extra: &(impl Args + ?Sized)) -> InProcess {
        let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", socket.local_addr().unwrap());
        let mut words = vec!["--db".to_owned(), db.to_str().unwrap().to_owned()];
        words.extend(extra.words());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        // Said once the server is assembled (its database open, the
        // sample loaded), or failed to be.
        let (ready, assembled) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let shutdown = async move {
                let _ = ready.send(());
                let _ = stopped.await;
            };
            hierad::cli::serve_in_process(&words, socket, shutdown)
        });
        // The server sends once it serves; a failed start drops `ready`.
        if assembled.recv().is_err() {
            let error = thread.join().unwrap().expect_err("stopped without serving");
            panic!("hierad serve (in process) did not start: {error:#}");
        }
        InProcess {
            url,
            stop: Some(stop),
            thread: Some(thread),
            _dir: None,
        }
    }
}

impl Served for InProcess {
    fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let served = thread.join();
            if !std::thread::panicking() {
                served.unwrap().expect("hierad serve (in process) failed");
            }
        }
    }
}
