//! Who may do what (docs/security.md): principals, their roles and
//! environments, and the one rule that says which role a route needs.
//! How a request proves who it is lives in `verify` (passwords, tokens,
//! client certificates, Keystone) and the auth file they come from in
//! `file`; what a connection proved, kept for its next requests, in
//! `remember`; the server applies all of it in one middleware
//! (`server/http/guard.rs`).

pub(crate) mod credentials;
pub(crate) mod edit;
pub(crate) mod file;
pub(crate) mod keystone;
pub(crate) mod pool;
pub(crate) mod remember;
pub(crate) mod verify;

pub(crate) use file::AuthFile;
pub(crate) use verify::{AuthError, Authenticator};

use crate::api::paths;
use std::fmt;
use std::sync::Arc;

/// What a principal may do; each role includes the ones below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Lookups, datasource fetches, every GET, scope discovery, /metrics.
    Read,
    /// Plus writing documents: PUT/POST/DELETE of values and overrides,
    /// their restores, imports.
    Write,
    /// Plus components, environments (create, delete, restore, purge) and
    /// retention.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Write => "write",
            Role::Admin => "admin",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Role {
    type Err = String;

    fn from_str(text: &str) -> Result<Role, String> {
        match text {
            "read" => Ok(Role::Read),
            "write" => Ok(Role::Write),
            "admin" => Ok(Role::Admin),
            other => Err(format!(
                "unknown role {other:?}; the roles are read, write and admin"
            )),
        }
    }
}

/// How a principal proved who it is (for the access log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// No auth file: the server trusts its (loopback) clients.
    Nothing,
    Basic,
    Bearer,
    Keystone,
    ClientCert,
}

/// Who makes a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// The user, token, certificate or Keystone user name: what the access
    /// log and the history show. Never a secret.
    pub name: Arc<str>,
    pub role: Role,
    /// The environments it may touch; `None`: all.
    pub environments: Option<Arc<[i64]>>,
    pub via: Via,
    /// Whether it may read eyaml `ENC[…]` values decrypted: only where the
    /// auth file says `decrypt = true`, whatever the role.
    pub decrypt: bool,
}

impl Principal {
    /// The principal of every request to a server without an auth file
    /// (which listens on loopback only, unless told `--insecure`).
    pub fn anonymous() -> Principal {
        // One name for every request: not an allocation per request.
        static NAME: std::sync::LazyLock<Arc<str>> =
            std::sync::LazyLock::new(|| Arc::from("anonymous"));
        Principal {
            name: Arc::clone(&NAME),
            role: Role::Admin,
            environments: None,
            via: Via::Nothing,
            // No auth file says so.
            decrypt: false,
        }
    }

    /// Whether it may create and change components (`admin` with no
    /// environment limit: a component is shared by environments).
    pub fn may_change_components(&self) -> bool {
        self.role >= Role::Admin && self.is_unlimited()
    }

    /// Whether it is limited to no environment.
    pub fn is_unlimited(&self) -> bool {
        self.environments.is_none()
    }

    /// Whether it may touch environment `env`.
    pub fn may_use(&self, env: i64) -> bool {
        self.environments
            .as_deref()
            .is_none_or(|envs| envs.contains(&env))
    }
}

/// What a route asks of the requester.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Need {
    /// Anyone, authenticated or not (`/healthz`, `/readyz`: probes).
    Nobody,
    /// A principal with at least this role.
    Role(Role),
}

/// Routes that change the ConfigDB's shape rather than its documents:
/// `admin` for any method but GET.
const ADMIN_ROUTES: &[&str] = &[
    paths::COMPONENTS,
    paths::COMPONENT,
    // A definition's content (its schema) checks the resource's writes in
    // every environment that uses the component.
    paths::DEFINITION,
    paths::ENVIRONMENTS,
    paths::ENVIRONMENT,
    paths::RESTORE,
    paths::RETENTION,
    // Rewrites every environment's documents.
    paths::SECRETS_ROTATE,
];

/// Routes a `read` principal may POST to: a lookup reads, and whoever may
/// look up may register the hierarchy its lookups name.
const READ_POSTS: &[&str] = &[paths::LOOKUP, paths::HIERARCHIES];

/// Whether `url`'s authority names a user (`scheme://USER[:PASSWORD]@host`).
/// hierad takes no credentials from a URL (a server's for its clients,
/// Keystone's in the auth file): a URL is printed wherever something is
/// said about its server, in errors and logs.
pub(crate) fn url_names_user(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split(['/', '?', '#'])
        .next()
        .is_some_and(|authority| authority.contains('@'))
}

/// The one rule: what `method` on the route `template` (axum's matched
/// path, `None` for no route) needs. Every request passes here; handlers
/// check nothing themselves.
pub(crate) fn needed(method: &http::Method, template: Option<&str>) -> Need {
    let Some(template) = template else {
        // No route: still authenticated, so a stranger learns nothing
        // from the 404s and 405s.
        return Need::Role(Role::Read);
    };
    // Probes, which load balancers send without credentials; /readyz's
    // reason is the `stale:` line /healthz shows anyway.
    if template == paths::HEALTHZ || template == paths::READYZ {
        return Need::Nobody;
    }
    // The console's files hold no data: its data calls are API requests;
    // `whoami` says "nobody" to a request without credentials.
    if [
        paths::UI_ROOT,
        paths::UI_INDEX,
        paths::UI_FILE,
        paths::WHOAMI,
    ]
    .contains(&template)
    {
        return Need::Nobody;
    }
    if matches!(*method, http::Method::GET | http::Method::HEAD) || READ_POSTS.contains(&template) {
        return Need::Role(Role::Read);
    }
    if ADMIN_ROUTES.contains(&template) {
        return Need::Role(Role::Admin);
    }
    Need::Role(Role::Write)
}

/// Why a principal is refused (403).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Denied {
    #[error("{name} has the role {has}; {method} {route} needs {needs}")]
    Role {
        name: Arc<str>,
        has: Role,
        needs: Role,
        method: String,
        route: String,
    },
    #[error("{name} may not use environment {env}")]
    Environment { name: Arc<str>, env: i64 },
    #[error(
        "{name} may not define resources ({resources}): an import that defines resources its environment lacks \
         adds them to a component, which environments share, so it needs a principal limited to no environment; \
         have such a principal define them (an import, or POST /api/v1/config/components), or import only resources the environment defines"
    )]
    Define { name: Arc<str>, resources: String },
    #[error("{name} is limited to some environments; {method} {route} names none (only GETs may)")]
    NoEnvironment {
        name: Arc<str>,
        method: String,
        route: String,
    },
}

/// Whether `principal` may make the request: `need` from [`needed`], `env`
/// the environment the request names (`None`: it names none).
///
/// # Errors
///
/// [`Denied`] saying what is missing.
pub(crate) fn permit(
    principal: &Principal,
    need: Need,
    method: &http::Method,
    template: Option<&str>,
    env: Option<i64>,
) -> Result<(), Denied> {
    let Need::Role(needs) = need else {
        return Ok(());
    };
    let route = || template.unwrap_or("(no route)").to_owned();
    if principal.role < needs {
        return Err(Denied::Role {
            name: principal.name.clone(),
            has: principal.role,
            needs,
            method: method.to_string(),
            route: route(),
        });
    }
    match env {
        Some(env) if !principal.may_use(env) => Err(Denied::Environment {
            name: principal.name.clone(),
            env,
        }),
        None if principal.environments.is_some() && needs > Role::Read => {
            Err(Denied::NoEnvironment {
                name: principal.name.clone(),
                method: method.to_string(),
                route: route(),
            })
        }
        _ => Ok(()),
    }
}

/// Whether `principal` may have an import define `resources` (names its
/// environment lacks) in the environment's first component: only a
/// principal limited to no environment. The component is shared with
/// every environment that uses it, and a definition there adds a name to
/// their URLs; a writer limited to some environments must not change what
/// others' URLs name. (An unlimited writer may write every environment
/// anyway; its imports of new files define them, as they always did.)
///
/// # Errors
///
/// [`Denied::Define`] naming the resources.
pub(crate) fn may_define(principal: &Principal, resources: &[String]) -> Result<(), Denied> {
    if resources.is_empty() || principal.is_unlimited() {
        return Ok(());
    }
    Err(Denied::Define {
        name: principal.name.clone(),
        resources: resources
            .iter()
            .map(|r| format!("{r:?}"))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_in_the_url_is_found() {
        for url in [
            "http://alice:pw@127.0.0.1:8750",
            "https://alice@host",
            "alice:pw@host:8750",
            "https://a:p%40ss@host/base",
        ] {
            assert!(url_names_user(url), "{url}");
        }
        for url in [
            "http://127.0.0.1:8750",
            "https://[::1]:8750/base",
            "host:8750",
            "http://host/a@b",
            "http://host?x=a@b",
            "http://host#a@b",
        ] {
            assert!(!url_names_user(url), "{url}");
        }
    }
    use http::Method;

    fn principal(role: Role, envs: Option<&[i64]>) -> Principal {
        Principal {
            name: Arc::from("p"),
            role,
            environments: envs.map(Arc::from),
            via: Via::Basic,
            decrypt: false,
        }
    }

    #[test]
    fn each_route_needs_its_role() {
        let cases = [
            (Method::GET, "/healthz", Need::Nobody),
            (Method::GET, "/readyz", Need::Nobody),
            (Method::GET, "/ui/{file}", Need::Nobody),
            (Method::GET, "/api/v1/whoami", Need::Nobody),
            (Method::GET, "/metrics", Need::Role(Role::Read)),
            (Method::POST, "/api/v1/lookup", Need::Role(Role::Read)),
            (
                Method::GET,
                "/api/v1/data/{env}/{*resource}",
                Need::Role(Role::Read),
            ),
            (
                Method::GET,
                "/api/v1/environments/{env}/scope",
                Need::Role(Role::Read),
            ),
            (
                Method::GET,
                "/api/v1/config/environments/{env}/{*rest}",
                Need::Role(Role::Read),
            ),
            (
                Method::PUT,
                "/api/v1/config/environments/{env}/{*rest}",
                Need::Role(Role::Write),
            ),
            (
                Method::POST,
                "/api/v1/config/environments/{env}/{*rest}",
                Need::Role(Role::Write),
            ),
            (
                Method::DELETE,
                "/api/v1/config/environments/{env}/{*rest}",
                Need::Role(Role::Write),
            ),
            (
                Method::POST,
                "/api/v1/config/environments/{env}/import",
                Need::Role(Role::Write),
            ),
            (
                Method::POST,
                "/api/v1/config/components",
                Need::Role(Role::Admin),
            ),
            (
                Method::DELETE,
                "/api/v1/config/components/{id}",
                Need::Role(Role::Admin),
            ),
            (
                Method::POST,
                "/api/v1/config/environments",
                Need::Role(Role::Admin),
            ),
            (
                Method::DELETE,
                "/api/v1/config/environments/{env}",
                Need::Role(Role::Admin),
            ),
            (
                Method::POST,
                "/api/v1/config/environments/{env}/restore",
                Need::Role(Role::Admin),
            ),
            (
                Method::PUT,
                "/api/v1/config/environments/{env}/retention",
                Need::Role(Role::Admin),
            ),
            (
                Method::GET,
                "/api/v1/config/environments/{env}/retention",
                Need::Role(Role::Read),
            ),
            (
                Method::PUT,
                "/api/v1/config/components/{component}/resource_definitions/{*resource}",
                Need::Role(Role::Admin),
            ),
            (
                Method::GET,
                "/api/v1/config/components/{component}/resource_definitions/{*resource}",
                Need::Role(Role::Read),
            ),
            (Method::POST, "/api/v1/hierarchies", Need::Role(Role::Read)),
        ];
        for (method, route, need) in cases {
            assert_eq!(needed(&method, Some(route)), need, "{method} {route}");
        }
        assert_eq!(needed(&Method::PATCH, None), Need::Role(Role::Read));
    }

    #[test]
    fn only_a_principal_limited_to_no_environment_may_define_resources() {
        let new = ["decoy".to_owned()];
        assert!(may_define(&principal(Role::Admin, None), &new).is_ok());
        assert!(may_define(&principal(Role::Write, None), &new).is_ok());
        for who in [
            principal(Role::Write, Some(&[1])),
            principal(Role::Admin, Some(&[1])),
        ] {
            let denied = may_define(&who, &new).unwrap_err().to_string();
            assert!(
                denied.starts_with("p may not define resources (\"decoy\")"),
                "{denied}"
            );
            // Importing defined resources only is writing documents.
            assert!(may_define(&who, &[]).is_ok());
        }
    }

    #[test]
    fn roles_include_the_ones_below_and_environments_limit() {
        let put = Method::PUT;
        let doc = Some("/api/v1/config/environments/{env}/{*rest}");
        let write = Need::Role(Role::Write);
        assert!(permit(&principal(Role::Read, None), write, &put, doc, Some(1)).is_err());
        assert!(permit(&principal(Role::Write, None), write, &put, doc, Some(1)).is_ok());
        assert!(permit(&principal(Role::Admin, None), write, &put, doc, Some(1)).is_ok());
        let limited = principal(Role::Admin, Some(&[2]));
        assert!(permit(&limited, write, &put, doc, Some(2)).is_ok());
        let denied = permit(&limited, write, &put, doc, Some(1)).unwrap_err();
        assert_eq!(denied.to_string(), "p may not use environment 1");
        // Creating an environment names none: not for a limited principal.
        let create = Some("/api/v1/config/environments");
        let admin = Need::Role(Role::Admin);
        assert!(permit(&limited, admin, &Method::POST, create, None).is_err());
        // Lists may be read.
        let read = Need::Role(Role::Read);
        assert!(permit(&limited, read, &Method::GET, create, None).is_ok());
        let message = permit(
            &principal(Role::Read, None),
            admin,
            &Method::POST,
            create,
            None,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            message,
            "p has the role read; POST /api/v1/config/environments needs admin"
        );
    }
}
