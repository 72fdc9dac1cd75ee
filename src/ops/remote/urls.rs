//! The URLs the remote client asks: level paths and resource names,
//! filled into the API's path templates ([`crate::api::paths`]).

use crate::api::paths::{self, encode};
use crate::configdb::{DocAddress, DocKind, LevelPath};

/// A level's register ([`paths::REGISTER`]).
pub(crate) fn register_url(env: i64, level: &str) -> String {
    paths::fill(paths::REGISTER, &[&env.to_string(), level])
}

/// `http://host:port` without a trailing `/`; `None` if unusable.
pub(super) fn normalize_base(server: &str) -> Option<String> {
    let server = server.trim();
    let with_scheme = if server.contains("://") {
        server.to_owned()
    } else {
        format!("http://{server}")
    };
    let rest = with_scheme
        .strip_prefix("http://")
        .or_else(|| with_scheme.strip_prefix("https://"))?;
    if rest.is_empty() || rest.starts_with('/') {
        return None;
    }
    Some(with_scheme.trim_end_matches('/').to_owned())
}

pub(crate) fn address_url(at: &DocAddress) -> String {
    doc_url(at.env, &at.path, &at.resource, at.kind)
}

/// The URL path of a resource definition (its content).
pub(crate) fn definition_url(component: &str, resource: &str) -> String {
    paths::fill(paths::DEFINITION, &[component, resource])
}

/// The URL path of one document: `/api/v1/config/environments/1/nodes/n1/resources/astute/values`.
/// ([`paths::DOCUMENT`], whose `{*rest}` is the level path's segments,
/// each encoded, then the resource with its `/`s kept.)
pub(crate) fn doc_url(env: i64, path: &LevelPath, resource: &str, kind: DocKind) -> String {
    let mut rest = String::new();
    for pair in path.pairs() {
        rest.push_str(&encode(&pair.level, false));
        rest.push('/');
        rest.push_str(&encode(&pair.value, false));
        rest.push('/');
    }
    rest.push_str("resources/");
    rest.push_str(&encode(resource, true));
    rest.push('/');
    rest.push_str(kind.as_str());
    paths::fill_encoded(paths::DOCUMENT, &[&env.to_string(), &rest])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        let cases: &[(&str, Option<&str>)] = &[
            ("http://127.0.0.1:8750", Some("http://127.0.0.1:8750")),
            ("http://127.0.0.1:8750/", Some("http://127.0.0.1:8750")),
            ("127.0.0.1:8750", Some("http://127.0.0.1:8750")),
            ("http://h/prefix/", Some("http://h/prefix")),
            ("https://h:8750/", Some("https://h:8750")),
            ("ftp://h", None),
            ("https://", None),
            ("http://", None),
            ("", None),
        ];
        for (input, want) in cases {
            assert_eq!(normalize_base(input).as_deref(), *want, "{input}");
        }
    }

    #[test]
    fn document_urls() {
        let node = LevelPath::parse_cli("nodes=node-1.domain.tld").unwrap();
        let cases: &[(&LevelPath, &str, DocKind, &str)] = &[
            (
                &LevelPath::root(),
                "astute",
                DocKind::Values,
                "/api/v1/config/environments/1/resources/astute/values",
            ),
            (
                &node,
                "override/node/node-1.domain.tld",
                DocKind::Overrides,
                "/api/v1/config/environments/1/nodes/node-1.domain.tld/resources/override/node/node-1.domain.tld/overrides",
            ),
            (
                &LevelPath::parse_cli("nodes=a b").unwrap(),
                "x?y#z%",
                DocKind::Values,
                "/api/v1/config/environments/1/nodes/a%20b/resources/x%3Fy%23z%25/values",
            ),
        ];
        for (path, resource, kind, want) in cases {
            assert_eq!(doc_url(1, path, resource, *kind), *want);
        }
    }
}
