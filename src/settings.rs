//! How the daemon runs: defaults, then environment variables, then flags
//! (the CLI layer fills the struct; everything below reads only this).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The port `hierad serve` listens on by default.
pub const DEFAULT_PORT: u16 = 8750;

/// The database `hierad serve` and local `hierad config`/`import` use by
/// default: `hierad.db` in the working directory.
pub const DEFAULT_DB: &str = "hierad.db";

/// The server's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    pub listen: SocketAddr,
    pub db: PathBuf,
    /// The largest request body accepted (413 beyond).
    pub body_limit: usize,
    /// Every request is answered or abandoned within this time.
    pub request_timeout: Duration,
    /// The sample tree loaded into an empty database on first start.
    pub sample: Option<PathBuf>,
    /// The lookup-answer cache's budget, in bytes of cached answers.
    pub cache_bytes: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            listen: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
            db: PathBuf::from(DEFAULT_DB),
            body_limit: 16 * 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            sample: Some(PathBuf::from("data")),
            cache_bytes: 256 * 1024 * 1024,
        }
    }
}
