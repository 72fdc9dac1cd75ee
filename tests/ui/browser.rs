//! A headless chromium per test, driven by a chromedriver of its own on a
//! free port, and the console's server with an auth file: an admin, a
//! writer (`alice`) and a reader, each a bearer token.

use crate::server::TestServer;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long any wait for the page lasts at most.
pub const WAIT: Duration = Duration::from_secs(30);

/// The tokens of the server's auth file.
#[derive(Debug)]
pub struct Tokens {
    pub admin: String,
    pub write: String,
    pub read: String,
}

/// The server under test, its tokens, and the folder of its auth file.
#[derive(Debug)]
pub struct Console {
    pub server: TestServer,
    pub tokens: Tokens,
    _dir: tempfile::TempDir,
}

fn auth(args: &str) -> String {
    let out = crate::binary::output(crate::binary::command(&format!("auth {args}")), None);
    crate::binary::succeeded(&args, out).trim().to_owned()
}

impl Console {
    /// A server over the sample, with `extra` flags.
    pub fn start(extra: &str) -> Console {
        Console::launch(None, extra)
    }

    /// A server over `db` (kept by the caller).
    pub fn start_on(db: &std::path::Path) -> Console {
        Console::launch(Some(db), "")
    }

    fn launch(db: Option<&std::path::Path>, extra: &str) -> Console {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.toml");
        let f = file.display();
        let tokens = Tokens {
            admin: auth(&format!("add-token --file {f} --role admin root")),
            write: auth(&format!("add-token --file {f} --role write alice")),
            read: auth(&format!("add-token --file {f} --role read rita")),
        };
        let db = db.map_or_else(|| dir.path().join("hierad.db"), ToOwned::to_owned);
        let server = TestServer::start_on(&db, &format!("--auth {f} {extra}"));
        Console {
            server,
            tokens,
            _dir: dir,
        }
    }

    /// An API call with `token`: (status, body).
    pub fn api(&self, token: &str, method: &str, path: &str, body: Option<Value>) -> (u16, String) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("{}{path}", self.server.url);
        let bearer = format!("Bearer {token}");
        let response = match body {
            Some(body) => agent
                .run(
                    ureq::http::Request::builder()
                        .method(method)
                        .uri(&url)
                        .header("Authorization", &bearer)
                        .header("Content-Type", "application/json")
                        .body(body.to_string())
                        .unwrap(),
                )
                .unwrap(),
            None => agent
                .run(
                    ureq::http::Request::builder()
                        .method(method)
                        .uri(&url)
                        .header("Authorization", &bearer)
                        .body(())
                        .unwrap(),
                )
                .unwrap(),
        };
        let status = response.status().as_u16();
        (status, response.into_body().read_to_string().unwrap())
    }
}

/// A free port on 127.0.0.1 (bound, then let go for the driver).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A chromedriver and a headless chromium session; both end when dropped.
#[derive(Debug)]
pub struct Browser {
    pub client: Client,
    driver: Child,
    driver_url: String,
    base: String,
    /// The driver's and the browser's `TMPDIR`: chromedriver makes its
    /// profile folders there and, killed, leaves them behind; removed
    /// after the driver (fields drop after [`Drop::drop`]).
    _tmp: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Browser {
    pub async fn open(base: &str) -> Browser {
        let port = free_port();
        let tmp = tempfile::tempdir().unwrap();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (Debian's chromium-driver) on the PATH");
        let driver_url = format!("http://127.0.0.1:{port}");
        let start = Instant::now();
        while ureq::get(format!("{driver_url}/status")).call().is_err() {
            assert!(start.elapsed() < WAIT, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let caps = json!({
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                    "--disable-dev-shm-usage", "--window-size=1280,1000",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync"],
            },
            "goog:loggingPrefs": {"browser": "ALL"},
        });
        let caps = caps.as_object().unwrap().clone();
        let client = ClientBuilder::new(hyper_util_connector())
            .capabilities(caps)
            .connect(&driver_url)
            .await
            .expect("a chromium session");
        Browser {
            client,
            driver,
            driver_url,
            base: base.to_owned(),
            _tmp: tmp,
        }
    }

    /// Opens the console at `hash` (`#/doc?...`) and waits for its page.
    pub async fn page(&self, hash: &str, ready: &str) {
        self.client
            .goto(&format!("{}/ui/{hash}", self.base))
            .await
            .unwrap();
        // A fragment change does not reload: the router renders it.
        self.ready(ready).await;
    }

    /// Waits until the page `name` has rendered.
    pub async fn ready(&self, name: &str) {
        self.wait(&format!("body[data-ready=\"{name}\"]")).await;
    }

    pub async fn wait(&self, css: &str) -> fantoccini::elements::Element {
        match self
            .client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(css))
            .await
        {
            Ok(element) => element,
            Err(e) => {
                let text = self.text("body").await;
                panic!("{css} did not appear ({e}); the page says: {text}")
            }
        }
    }

    pub async fn text(&self, css: &str) -> String {
        match self.client.find(Locator::Css(css)).await {
            Ok(element) => element.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    pub async fn count(&self, css: &str) -> usize {
        self.client
            .find_all(Locator::Css(css))
            .await
            .map_or(0, |all| all.len())
    }

    /// Signs in by typing `token` in the console's form, as a person would.
    pub async fn sign_in(&self, token: &str) {
        self.client
            .goto(&format!("{}/ui/", self.base))
            .await
            .unwrap();
        let input = self.wait("input[type=password]").await;
        input.send_keys(token).await.unwrap();
        self.client
            .find(Locator::Css("form button[type=submit]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        self.ready("env").await;
        let errors = self.console_errors().await;
        assert!(
            errors.is_empty(),
            "console errors while signing in: {errors:?}"
        );
    }

    /// Replaces a textarea's text, as typing would (the page hears `input`).
    pub async fn set_text(&self, css: &str, text: &str) {
        self.client
            .execute(
                "const t = document.querySelector(arguments[0]); t.value = arguments[1]; \
                 t.dispatchEvent(new Event('input'));",
                vec![json!(css), json!(text)],
            )
            .await
            .unwrap();
    }

    pub async fn click(&self, css: &str) {
        self.wait(css).await.click().await.unwrap();
    }

    /// The browser's console messages at level SEVERE (errors, refused
    /// loads, CSP violations) since the last call: chromedriver's log.
    pub async fn console_errors(&self) -> Vec<String> {
        let id = self.client.session_id().await.unwrap().unwrap();
        let answer: Value = ureq::post(format!("{}/session/{id}/se/log", self.driver_url))
            .send_json(json!({"type": "browser"}))
            .expect("chromedriver's browser log")
            .into_body()
            .read_json()
            .unwrap();
        answer["value"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|entry| entry["level"] == "SEVERE")
            .map(|entry| entry["message"].as_str().unwrap_or_default().to_owned())
            .filter(|message| !expected_404(message))
            .collect()
    }

    /// Every URL the page has loaded (resource timing), none of which
    /// may be outside the server.
    pub async fn requests(&self) -> Vec<String> {
        let names = self
            .client
            .execute(
                "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource')).map(e => e.name)",
                vec![],
            )
            .await
            .unwrap();
        names
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .collect()
    }

    /// Checks the page so far: no console error, no request elsewhere;
    /// then saves its screenshot as `target/ui-screenshots/{name}.png`.
    pub async fn check_and_shoot(&self, name: &str) {
        self.check_and_shoot_after(name, None).await;
    }

    /// The same, on a page the test made the server refuse something
    /// with `status`: that refusal is the one console error.
    pub async fn check_and_shoot_after(&self, name: &str, status: Option<u16>) {
        let errors = self.console_errors().await;
        let refused = |e: &String| status.is_some_and(|s| e.contains(&format!("status of {s} ")));
        assert!(
            errors.iter().all(refused),
            "console errors on {name}: {errors:?}"
        );
        for url in self.requests().await {
            assert!(
                url.starts_with(&format!("{}/", self.base)),
                "{name} requested {url}, outside the server"
            );
        }
        let png = self.client.screenshot().await.unwrap();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ui-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }
}

fn hyper_util_connector() -> hyper_util::client::legacy::connect::HttpConnector {
    hyper_util::client::legacy::connect::HttpConnector::new()
}

/// Chromium logs every 404 a page's `fetch` gets; the console asks for
/// two things whose absence the API says only by a 404, and shows it as
/// such: a level's register (a level without one) and a node's stored
/// scope (a node without one).
fn expected_404(message: &str) -> bool {
    let (url, rest) = message.split_once(' ').unwrap_or_default();
    let url = url.split('?').next().unwrap_or_default();
    rest.contains("status of 404") && (url.ends_with("/register") || url.ends_with("/scope"))
}
