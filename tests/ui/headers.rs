//! What the console's files are served with, and `--no-ui`, without a
//! browser.

use crate::browser::Console;

fn get(url: &str) -> ureq::http::Response<ureq::Body> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    agent.get(url).call().unwrap()
}

#[test]
fn the_console_is_served_to_anyone_with_a_strict_policy() {
    let console = Console::start("");
    for file in ["", "app.js", "console.css", "edit.js"] {
        let response = get(&format!("{}/ui/{file}", console.server.url));
        assert_eq!(response.status(), 200, "/ui/{file} needs no credentials");
        let h = response.headers();
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(csp.starts_with("default-src 'self'"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert_eq!(h["x-content-type-options"], "nosniff");
    }
    let page = get(&format!("{}/ui", console.server.url));
    assert_eq!(page.status(), 308);
    assert_eq!(page.headers()["location"], "/ui/");
    // Its data is not: the API still asks who is calling.
    let data = get(&format!(
        "{}/api/v1/config/environments",
        console.server.url
    ));
    assert_eq!(data.status(), 401);
    let missing = get(&format!("{}/ui/nothing.js", console.server.url));
    assert_eq!(missing.status(), 404);
}

#[test]
fn whoami_names_the_principal_and_its_role() {
    let console = Console::start("");
    let (status, body) = console.api(&console.tokens.read, "GET", "/api/v1/whoami", None);
    assert_eq!(status, 200);
    let me: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        me,
        serde_json::json!({"name": "token:rita", "role": "read", "environments": null})
    );
}

#[test]
fn no_ui_serves_no_console() {
    let console = Console::start("--no-ui");
    let (status, body) = console.api(&console.tokens.read, "GET", "/ui/", None);
    assert_eq!(status, 404, "{body}");
    let (status, _) = console.api(&console.tokens.read, "GET", "/ui/app.js", None);
    assert_eq!(status, 404);
}

/// Asking who one is is never a 401 (a browser would answer its Basic
/// challenge with a password dialog), unless the console asks for that
/// dialog with `?login`.
#[test]
fn whoami_without_credentials_names_nobody_or_challenges_on_request() {
    let console = Console::start("");
    let mut nobody = get(&format!("{}/api/v1/whoami", console.server.url));
    assert_eq!(nobody.status(), 200);
    let body: serde_json::Value =
        serde_json::from_str(&nobody.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"name": null, "role": null, "environments": null})
    );
    let login = get(&format!("{}/api/v1/whoami?login", console.server.url));
    assert_eq!(login.status(), 401);
    let challenge = login.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with("Basic "), "{challenge}");
}
