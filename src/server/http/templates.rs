//! A request's route template, found before routing: the access log,
//! the metrics and authorization name the route by it
//! (`/api/v1/config/environments/{env}`…, never the concrete path), and
//! [`super::harden`] runs them around the whole router, once, instead of
//! inside every route (where axum boxed and cloned a layer for each
//! request: bench/LOG.md, "One layer around the router").
//!
//! The matcher is axum's own (`matchit`, the version axum 0.8 routes
//! with) over the same templates ([`paths::ALL`]), so a path matches
//! here the template axum routes it to; src/server/route_table_tests.rs
//! checks the two agree.

use crate::api::paths;
use crate::server::routes::env::{self, Named};

/// Where a request is routed: its route's template (`None`: no route),
/// and what the route's `{env}` names, which the guard judges before the
/// handler reads it.
#[derive(Debug)]
pub(crate) struct Route {
    pub(crate) template: Option<&'static str>,
    pub(crate) env: Named,
}

/// The templates a server routes, matched against a request's path.
pub(crate) struct Templates(matchit::Router<&'static str>);

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
        let mut router = matchit::Router::new();
        for template in templates {
            if let Err(e) = router.insert(template, template) {
                panic!("the route template {template} conflicts with another: {e}");
            }
        }
        Templates(router)
    }

    /// Where `path` (a request's, as sent: not decoded) is routed.
    pub(crate) fn of(&self, path: &str) -> Route {
        match self.0.at(path) {
            Ok(found) => Route {
                template: Some(*found.value),
                env: env::named(found.params.get("env")),
            },
            Err(_) => Route {
                template: None,
                env: Named::Nothing,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_finds_its_template_and_an_unknown_one_none() {
        let server = Templates::server(true);
        let of = |path| server.of(path).template;
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
        assert_eq!(Templates::server(false).of("/ui/app.js").template, None);
    }

    /// `{env}` as the handler reads it: percent-decoded, then a number.
    #[test]
    fn the_environment_is_judged_decoded() {
        let server = Templates::server(true);
        let env = |path| server.of(path).env;
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
