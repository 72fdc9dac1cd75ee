//! The URLs the remote client asks: level paths, resource names and
//! percent-encoding, built from the API's paths.

use crate::configdb::{DocAddress, DocKind, LevelPath};

/// Where the ConfigDB API is.
pub(super) const CONFIG_API: &str = "/api/v1/config";

/// `/api/v1/config/environments/{env}/hierarchy_levels/{level}/register`.
pub(super) fn register_url(env: i64, level: &str) -> String {
    format!(
        "{CONFIG_API}/environments/{env}/hierarchy_levels/{}/register",
        encode(level, false)
    )
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

pub(super) fn address_url(at: &DocAddress) -> String {
    doc_url(at.env, &at.path, &at.resource, at.kind)
}

/// The URL path of a resource definition (its content).
pub(super) fn definition_url(component: &str, resource: &str) -> String {
    format!(
        "{CONFIG_API}/components/{}/resource_definitions/{}",
        encode(component, false),
        encode(resource, true)
    )
}

/// The URL path of one document: `/api/v1/config/environments/1/nodes/n1/resources/astute/values`.
pub(crate) fn doc_url(env: i64, path: &LevelPath, resource: &str, kind: DocKind) -> String {
    let mut url = format!("{CONFIG_API}/environments/{env}");
    for pair in path.pairs() {
        url.push('/');
        url.push_str(&encode(&pair.level, false));
        url.push('/');
        url.push_str(&encode(&pair.value, false));
    }
    url.push_str("/resources/");
    url.push_str(&encode(resource, true));
    url.push('/');
    url.push_str(kind.as_str());
    url
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
        assert_eq!(encode("a.'b.c'.0", false), "a.%27b.c%27.0");
        assert_eq!(encode("é/x", false), "%C3%A9%2Fx");
    }
}
