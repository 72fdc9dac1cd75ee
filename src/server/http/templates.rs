//! A request's route template, found before routing: the access log,
//! the metrics and authorization name the route by it
//! (`/api/v1/config/environments/{env}`…, never the concrete path), and
//! [`super::harden`] runs them around the whole router, once, instead of
//! inside every route (where axum boxed and cloned a layer for each
//! request: bench/LOG.md, "One layer around the router; direct calls
//! past it").
//!
//! The matcher is axum's own (`matchit`, the version axum 0.8 routes
//! with) over the same templates ([`paths::ALL`]), so a path matches
//! here the template axum routes it to; src/server/route_table_tests.rs
//! checks the two agree.

use crate::api::paths;
use crate::server::routes::env::{self, Named};
use crate::server::state::AppState;
use axum::extract::Request;
use axum::http::Method;
use axum::response::Response;
use std::future::Future;
use std::pin::Pin;

/// A handler called past axum's router ([`Templates::direct`]).
pub(crate) type Direct = fn(Request, AppState) -> Answering;

/// A direct handler's answer to come (axum's handlers' own future).
pub(crate) type Answering = Pin<Box<dyn Future<Output = Response> + Send>>;

/// Where a request is routed: its route's template (`None`: no route),
/// the handler to call past the router, if any, and its path parameters
/// (`{env}`, which the guard judges before the handler reads it; on a
/// direct route the catch-all too).
pub(crate) struct Route {
    pub(crate) template: Option<&'static str>,
    pub(crate) direct: Option<Direct>,
    pub(crate) params: Matched,
}

/// A direct route's path parameters, decoded as axum's `Path` decodes
/// them, for its handler's extractors (`routes::env::Env`,
/// `routes::rest::Rest`), which read them from axum's router otherwise;
/// held in the request's `guard::Asker`.
#[derive(Clone, Debug)]
pub(crate) struct Matched {
    pub(crate) env: Named,
    pub(crate) rest: Option<String>,
}

/// The templates a server routes, matched against a request's path.
pub(crate) struct Templates {
    /// An index into `routes` for each template.
    matcher: matchit::Router<usize>,
    routes: Vec<Entry>,
}

/// One template, with what its requests need beyond it, worked out once.
struct Entry {
    template: &'static str,
    /// The name of its catch-all parameter (`{*rest}`: `rest`).
    catch_all: Option<&'static str>,
    /// Its handlers called directly, by method.
    direct: Vec<(Method, Direct)>,
}

impl Templates {
    /// The server's route table: [`paths::ALL`], without the console's
    /// files when it serves none (`hierad serve --no-ui`), as
    /// `server::app` registers them.
    pub(crate) fn server(ui: bool) -> Templates {
        let console = [paths::UI_ROOT, paths::UI_INDEX, paths::UI_FILE];
        Templates::new(
            (paths::ALL.iter().copied()).filter(|template| ui || !console.contains(template)),
        )
    }

    /// A matcher of `templates` (axum's syntax: `{name}`, `{*rest}`).
    ///
    /// # Panics
    ///
    /// Two templates conflict: axum refuses the same table when it is
    /// registered, so this is a bug in the table.
    pub(crate) fn new(templates: impl IntoIterator<Item = &'static str>) -> Templates {
        let mut matcher = matchit::Router::new();
        let mut routes = Vec::new();
        for template in templates {
            if let Err(e) = matcher.insert(template, routes.len()) {
                panic!("the route template {template} conflicts with another: {e}");
            }
            let catch_all =
                (template.rsplit_once("{*")).and_then(|(_, name)| name.strip_suffix('}'));
            routes.push(Entry {
                template,
                catch_all,
                direct: Vec::new(),
            });
        }
        Templates { matcher, routes }
    }

    /// Calls `handler` for the `method` requests routed to `template`
    /// instead of axum's router, which boxes and clones the route's
    /// service for each request (about 3,000 instructions a lookup:
    /// bench/LOG.md, "One layer around the router; direct calls past it").
    /// Its handler may read `{env}` (`routes::env::Env`) and the
    /// catch-all parameter (`routes::rest::Rest`), no other (axum's
    /// extractors read those from its router); the router also routes it
    /// (its 405 for another method, its route table).
    ///
    /// # Panics
    ///
    /// `template` is not in the table: a bug in the server's assembly.
    pub(crate) fn direct(
        mut self,
        template: &'static str,
        method: Method,
        handler: Direct,
    ) -> Self {
        let Some(entry) = self.routes.iter_mut().find(|e| e.template == template) else {
            panic!("{template} is not a route template");
        };
        entry.direct.push((method, handler));
        self
    }

    /// Where a `method` request for `path` (as sent: not decoded) is
    /// routed.
    pub(crate) fn of(&self, method: &Method, path: &str) -> Route {
        let mut route = Route {
            template: None,
            direct: None,
            params: Matched {
                env: Named::Nothing,
                rest: None,
            },
        };
        let Ok(found) = self.matcher.at(path) else {
            return route;
        };
        let entry = &self.routes[*found.value];
        route.template = Some(entry.template);
        route.direct = (entry.direct.iter())
            .find(|(m, _)| m == method)
            .map(|(_, handler)| *handler);
        for (name, raw) in found.params.iter() {
            // Behind the router, only `{env}` is read before it.
            if route.direct.is_none() && name != "env" {
                continue;
            }
            // Most parameters have no escape: nothing to decode or check.
            let decoded = if raw.as_bytes().contains(&b'%') {
                percent_encoding::percent_decode_str(raw).decode_utf8()
            } else {
                Ok(std::borrow::Cow::Borrowed(raw))
            };
            if name == "env" {
                route.params.env = env::named(decoded.as_deref().ok());
            }
            match decoded {
                Ok(text) if route.direct.is_some() && Some(name) == entry.catch_all => {
                    route.params.rest = Some(text.into_owned());
                }
                Ok(_) => {}
                // The router refuses a path parameter that is not UTF-8
                // once decoded (400, its own wording): such a request
                // goes to it.
                Err(_) => route.direct = None,
            }
        }
        route
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_finds_its_template_and_an_unknown_one_none() {
        let server = Templates::server(true);
        let of = |path| server.of(&Method::GET, path).template;
        assert_eq!(of("/api/v1/lookup"), Some(paths::LOOKUP));
        assert_eq!(
            of("/api/v1/data/1/override/node/n%201"),
            Some(paths::DATASOURCE)
        );
        assert_eq!(
            of("/api/v1/config/environments/1/nodes/changed"),
            Some(paths::NODES_CHANGED)
        );
        assert_eq!(
            of("/api/v1/config/environments/1/resources/x/values"),
            Some(paths::DOCUMENT)
        );
        assert_eq!(of("/api/v1/lookup/"), None);
        assert_eq!(of("/nowhere"), None);
        assert_eq!(of("/ui/app.js"), Some(paths::UI_FILE));
        assert_eq!(
            Templates::server(false)
                .of(&Method::GET, "/ui/app.js")
                .template,
            None
        );
    }

    /// A direct handler for its method only: another method goes to the
    /// router (its 405), as does every other route.
    #[test]
    fn a_direct_handler_is_found_for_its_route_and_method() {
        fn handler(_: Request, _: AppState) -> Pin<Box<dyn Future<Output = Response> + Send>> {
            unreachable!("not called")
        }
        let templates = Templates::server(true).direct(paths::LOOKUP, Method::POST, handler);
        let direct = |method, path| templates.of(&method, path).direct.is_some();
        assert!(direct(Method::POST, "/api/v1/lookup"));
        assert!(!direct(Method::GET, "/api/v1/lookup"));
        assert!(!direct(Method::POST, "/api/v1/hierarchies"));
        assert!(!direct(Method::POST, "/api/v1/lookup/"));
    }

    /// `{env}` as the handler reads it: percent-decoded, then a number.
    #[test]
    fn the_environment_is_judged_decoded() {
        let server = Templates::server(true);
        let env = |path| server.of(&Method::GET, path).params.env;
        assert_eq!(env("/api/v1/data/%31/astute"), Named::Env(1));
        assert_eq!(env("/api/v1/config/environments/-2"), Named::Env(-2));
        assert_eq!(
            env("/api/v1/config/environments/x%20y/resources/a/values"),
            Named::NotANumber("x y".to_owned())
        );
        assert_eq!(
            env("/api/v1/config/environments/%FF"),
            Named::NotANumber("(not UTF-8)".to_owned())
        );
        assert_eq!(env("/api/v1/lookup"), Named::Nothing);
        assert_eq!(env("/nowhere/1"), Named::Nothing);
    }
}
