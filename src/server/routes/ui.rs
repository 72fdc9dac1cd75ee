//! The browser console (docs/console.md): static assets built into the
//! binary, served at `/ui/` to anyone (they hold no data), and
//! `GET /api/v1/whoami`, which tells the console who its principal is and
//! what it may do, so a `read` principal is shown no edit controls. Every
//! datum the console shows comes from the API, with the principal's rights.
//!
//! The assets are a dozen small files, so a table of `include_str!` does
//! what an embedding crate would, with nothing to add to the tree.

use crate::api::paths;
use crate::auth::Principal;
use crate::server::AppState;
use crate::server::http::error::{ApiError, error_response};
use axum::extract::{Path, Query};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Json, Router};

/// The console's files: name, media type, content.
const ASSETS: &[(&str, &str, &str)] = &[
    ("index.html", HTML, include_str!("ui/index.html")),
    ("console.css", CSS, include_str!("ui/console.css")),
    ("favicon.svg", SVG, include_str!("ui/favicon.svg")),
    ("app.js", JS, include_str!("ui/app.js")),
    ("api.js", JS, include_str!("ui/api.js")),
    ("dom.js", JS, include_str!("ui/dom.js")),
    ("diff.js", JS, include_str!("ui/diff.js")),
    ("envs.js", JS, include_str!("ui/envs.js")),
    ("document.js", JS, include_str!("ui/document.js")),
    ("edit.js", JS, include_str!("ui/edit.js")),
    ("lookup.js", JS, include_str!("ui/lookup.js")),
    ("node.js", JS, include_str!("ui/node.js")),
    ("changes.js", JS, include_str!("ui/changes.js")),
];

const HTML: &str = "text/html; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const SVG: &str = "image/svg+xml";

/// Only this server's own scripts, styles and API: no inline script or
/// style, no other site, no framing (clickjacking), no `<base>` or form
/// that sends elsewhere.
pub(crate) const CSP: &str =
    "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The console's routes (`hierad serve --no-ui` leaves them out), and
/// `whoami`, which the API keeps either way.
pub(crate) fn routes(ui: bool) -> Router<AppState> {
    let router = Router::new().route(paths::WHOAMI, get(whoami));
    if !ui {
        return router;
    }
    router
        .route(
            paths::UI_ROOT,
            get(|| async { Redirect::permanent("/ui/") }),
        )
        .route(paths::UI_INDEX, get(|| asset("index.html")))
        .route(
            paths::UI_FILE,
            get(|Path(file): Path<String>| asset_owned(file)),
        )
}

async fn asset_owned(file: String) -> Response {
    asset(&file).await
}

async fn asset(file: &str) -> Response {
    let Some((_, media, content)) = ASSETS.iter().find(|(name, _, _)| *name == file) else {
        return ApiError::NotFound(format!(
            "the console has no file \"{}\"; open /ui/",
            crate::configdb::Truncated(file, 100)
        ))
        .into_response();
    };
    let mut response = (*content).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // Built into the binary: a new binary may bring new files, so the
    // browser asks again (cheap: they are small) rather than mix versions.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Who the request's principal is: `{"name", "role", "environments"}`
/// (`null`: every environment), or all three `null` for a request that
/// sent no credentials to a server with an auth file. Open to anyone, so
/// that asking is never a 401: a browser answers a 401's Basic challenge
/// with a password dialog, which the console shows only when asked
/// (`?login`: 401 with the Basic challenge then). Never a credential.
async fn whoami(principal: Option<Principal>, Query(query): Query<Login>) -> Response {
    let Some(principal) = principal else {
        if query.login.is_some() {
            let mut refused = error_response(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "sign in: a user and password (Basic), a bearer token or a client certificate"
                    .to_owned(),
            );
            refused.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"hierad\", charset=\"UTF-8\""),
            );
            return refused;
        }
        return Json(serde_json::json!({"name": null, "role": null, "environments": null}))
            .into_response();
    };
    Json(serde_json::json!({
        "name": &*principal.name,
        "role": principal.role.as_str(),
        "environments": principal.environments.as_deref(),
    }))
    .into_response()
}

/// `whoami`'s query: `?login` asks for the Basic challenge.
#[derive(Debug, serde::Deserialize)]
struct Login {
    login: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page's weight: the bound is 100 KB for a whole page,
    /// and the console is one page of all these files.
    #[test]
    fn the_whole_console_is_under_100_kb() {
        let total: usize = ASSETS.iter().map(|(_, _, content)| content.len()).sum();
        assert!(total < 100 * 1000, "{total} bytes");
    }

    /// No inline script or style, which the policy would refuse: every
    /// script is a module file, every style in console.css.
    #[test]
    fn no_asset_holds_inline_script_or_style() {
        for (name, _, content) in ASSETS {
            // An SVG names its namespace by URL; nothing is fetched from it.
            let content = content.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
            for banned in [
                "<script>",
                " style=",
                "<style",
                "onclick=",
                "javascript:",
                "eval(",
            ] {
                assert!(!content.contains(banned), "{banned} in {name}");
            }
            for outside in ["http://", "https://", "//cdn"] {
                assert!(!content.contains(outside), "{outside} in {name}");
            }
        }
    }
}
