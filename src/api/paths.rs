//! Every route's path template, written once: the server registers these
//! (`src/server/mod.rs`, `src/server/routes/`), its rules name them
//! (`src/auth/mod.rs`), and the clients fill them ([`fill`]) to build the
//! URLs they ask. Templates use axum's syntax: `{name}` is one segment,
//! `{*name}` the rest of the path (https://docs.rs/axum/0.8/axum/routing/struct.Router.html#method.route).

/// The liveness probe, open to anyone.
pub(crate) const HEALTHZ: &str = "/healthz";
/// The readiness probe, open to anyone.
pub(crate) const READYZ: &str = "/readyz";
/// Prometheus' text format.
pub(crate) const METRICS: &str = "/metrics";

/// The lookup route: where clients send a [`super::LookupRequest`], and
/// the route template the server's rules (roles, metrics) name.
pub(crate) const LOOKUP: &str = "/api/v1/lookup";
/// The hierarchy registration route: `{"hierarchy": ["level", …]}` in
/// (decoded by hand, checked as a lookup's `hierarchy`: see
/// src/server/routes/hierarchies.rs), a [`super::RegisteredHierarchy`] out.
pub(crate) const HIERARCHIES: &str = "/api/v1/hierarchies";
/// A datasource by name, as Hiera's backend reads it.
pub(crate) const DATASOURCE: &str = "/api/v1/data/{env}/{*resource}";
/// An environment's scope, for lookups that name none.
pub(crate) const SCOPE: &str = "/api/v1/environments/{env}/scope";

/// The ConfigDB's components.
pub(crate) const COMPONENTS: &str = "/api/v1/config/components";
/// One component, by id or name.
pub(crate) const COMPONENT: &str = "/api/v1/config/components/{id}";
/// A resource definition's content (its schema).
pub(crate) const DEFINITION: &str =
    "/api/v1/config/components/{component}/resource_definitions/{*resource}";
/// The ConfigDB's environments.
pub(crate) const ENVIRONMENTS: &str = "/api/v1/config/environments";
/// One environment.
pub(crate) const ENVIRONMENT: &str = "/api/v1/config/environments/{env}";
/// An environment's hierarchy levels.
pub(crate) const HIERARCHY_LEVELS: &str = "/api/v1/config/environments/{env}/hierarchy_levels";
/// Restores a deleted environment.
pub(crate) const RESTORE: &str = "/api/v1/config/environments/{env}/restore";
/// An environment's retention of old versions.
pub(crate) const RETENTION: &str = "/api/v1/config/environments/{env}/retention";
/// Imports documents into an environment in one batch.
pub(crate) const IMPORT: &str = "/api/v1/config/environments/{env}/import";
/// A level's register: the values its paths may name.
pub(crate) const REGISTER: &str =
    "/api/v1/config/environments/{env}/hierarchy_levels/{level}/register";
/// One value of a level's register.
pub(crate) const REGISTER_VALUE: &str =
    "/api/v1/config/environments/{env}/hierarchy_levels/{level}/register/{value}";
/// A node's stored scope (facts and scope variables).
pub(crate) const NODE_SCOPE: &str = "/api/v1/config/environments/{env}/nodes/{node}/scope";
/// Every version of a node's scope.
pub(crate) const NODE_SCOPE_HISTORY: &str =
    "/api/v1/config/environments/{env}/nodes/{node}/scope/history";
/// The change feed: what changed past a generation (long poll, SSE).
pub(crate) const CHANGES: &str = "/api/v1/changes";
/// Tags: names of generations, for reads at one (`?tag=`).
pub(crate) const TAGS: &str = "/api/v1/tags";
/// One tag.
pub(crate) const TAG: &str = "/api/v1/tags/{name}";
/// The registered nodes whose effective data changed since a generation.
pub(crate) const NODES_CHANGED: &str = "/api/v1/config/environments/{env}/nodes/changed";
/// A document: `{*rest}` is a level path, `resources/<name>`, and the
/// kind (`values`, `overrides`), with what follows (a key, `history`…);
/// it takes whatever no other route under the environment does.
pub(crate) const DOCUMENT: &str = "/api/v1/config/environments/{env}/{*rest}";

/// The browser console (src/server/routes/ui.rs): `/ui` redirects to
/// `/ui/`, its page; its files, open to anyone (they hold no data).
pub(crate) const UI_ROOT: &str = "/ui";
pub(crate) const UI_INDEX: &str = "/ui/";
pub(crate) const UI_FILE: &str = "/ui/{file}";
/// Who the request's principal is, and its role.
pub(crate) const WHOAMI: &str = "/api/v1/whoami";
/// Every eyaml block re-encrypted to the server's public key (`admin`;
/// `?env=N`: one environment's documents).
pub(crate) const SECRETS_ROTATE: &str = "/api/v1/secrets/rotate";

/// Every template above: the server's whole route table (checked by
/// src/server/route_table_tests.rs), as src/server/http/templates.rs
/// matches requests to it.
pub(crate) const ALL: &[&str] = &[
    HEALTHZ,
    READYZ,
    METRICS,
    SECRETS_ROTATE,
    LOOKUP,
    HIERARCHIES,
    DATASOURCE,
    SCOPE,
    COMPONENTS,
    COMPONENT,
    DEFINITION,
    ENVIRONMENTS,
    ENVIRONMENT,
    HIERARCHY_LEVELS,
    RESTORE,
    RETENTION,
    IMPORT,
    REGISTER,
    REGISTER_VALUE,
    NODE_SCOPE,
    NODE_SCOPE_HISTORY,
    CHANGES,
    TAGS,
    TAG,
    NODES_CHANGED,
    DOCUMENT,
    UI_ROOT,
    UI_INDEX,
    UI_FILE,
    WHOAMI,
];

/// `template` with its placeholders, in order, replaced by `values`
/// percent-encoded ([`encode`]; a `{*name}` keeps its `/`s).
///
/// # Panics
///
/// `values` does not have one value per placeholder: a caller's bug.
pub(crate) fn fill(template: &str, values: &[&str]) -> String {
    fill_with(template, values, encode)
}

/// [`fill`] with values the caller has encoded already (a document's
/// `{*rest}`, whose level values encode their `/`s and whose resource
/// name does not).
pub(crate) fn fill_encoded(template: &str, values: &[&str]) -> String {
    fill_with(template, values, |value, _| value.to_owned())
}

fn fill_with(template: &str, values: &[&str], put: impl Fn(&str, bool) -> String) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut values = values.iter();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let end = start + rest[start..].find('}').expect("a template's `{` is closed");
        out.push_str(&rest[..start]);
        let value = values.next().expect("a value for every placeholder");
        out.push_str(&put(value, rest[start + 1..].starts_with('*')));
        rest = &rest[end + 1..];
    }
    assert!(values.next().is_none(), "a placeholder for every value");
    out.push_str(rest);
    out
}

/// Percent-encodes a path segment: everything but RFC 3986's unreserved
/// characters (and `/` in resource names, which the API takes raw).
pub(crate) fn encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'.' | b'_' | b'~')
            || (keep_slash && byte == b'/');
        if keep {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_in_order_and_encodes() {
        let cases: &[(&str, &[&str], &str)] = &[
            (COMPONENTS, &[], "/api/v1/config/components"),
            (ENVIRONMENT, &["3"], "/api/v1/config/environments/3"),
            (
                REGISTER_VALUE,
                &["1", "nodes", "a b/c"],
                "/api/v1/config/environments/1/hierarchy_levels/nodes/register/a%20b%2Fc",
            ),
            (
                DEFINITION,
                &["é", "override/node/x?"],
                "/api/v1/config/components/%C3%A9/resource_definitions/override/node/x%3F",
            ),
        ];
        for (template, values, want) in cases {
            assert_eq!(fill(template, values), *want, "{template}");
        }
        assert_eq!(
            fill_encoded(DOCUMENT, &["1", "a%2Fb/x"]),
            "/api/v1/config/environments/1/a%2Fb/x"
        );
        assert_eq!(encode("a.'b.c'.0", false), "a.%27b.c%27.0");
        assert_eq!(encode("é/x", false), "%C3%A9%2Fx");
    }

    #[test]
    #[should_panic(expected = "a value for every placeholder")]
    fn too_few_values_is_a_bug() {
        fill(ENVIRONMENT, &[]);
    }
}
