//! The browser console (`/ui/`, docs/console.md) in a real browser:
//! Debian's chromium, headless, driven over WebDriver by its
//! chromedriver (fantoccini), against the real `hierad serve` on
//! 127.0.0.1. Needs `chromium` and `chromium-driver` (.ci/run installs
//! them). Screenshots of each page land in `target/ui-screenshots/`.

// Shared with the fast suite, which uses all of it and so has the
// compiler check it; public here, where a part is used.
#[path = "../common/binary.rs"]
pub mod binary;
#[path = "../common/server.rs"]
pub mod server;

mod bench;
pub mod browser;
mod console;
mod headers;
mod insight;
