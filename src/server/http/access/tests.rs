use super::*;
use crate::cli::logging::Captured;

/// What tracing's own format writes after the target for `fields` as
/// six fields of an event: what the access line was before it was
/// written whole.
fn as_six_fields(fields: &Fields<'_>) -> String {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(captured.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        tracing::info!(
            target: "hierad::access",
            method = %crate::server::Truncated(fields.method, crate::server::METHOD_SHOWN),
            route = fields.route,
            status = fields.status,
            principal = fields.principal,
            client = tracing::field::display(DisplayClient(fields.client)),
            micros = fields.micros,
        );
    });
    let text = captured.text();
    let (_, after) = text.split_once("hierad::access: ").expect(&text);
    after.trim_end_matches('\n').to_owned()
}

/// The line written whole reads as the six fields did through tracing's
/// format, for names and routes that need escaping and that do not, each
/// kind of client, and a method over what is shown.
#[test]
fn the_line_reads_as_its_fields_did() {
    let long = "PROPFIND".repeat(8);
    let cases = [
        Fields {
            method: "GET",
            route: "/api/v1/lookup",
            status: 200,
            principal: "-",
            client: Some(IpAddr::from([10, 0, 0, 7])),
            micros: 1234,
        },
        Fields {
            method: "POST",
            route: "unmatched",
            status: 401,
            principal: "ops \"admin\"\u{1b}[31m\\ é \u{85}",
            client: Some(IpAddr::from([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1])),
            micros: u64::MAX,
        },
        Fields {
            method: &long,
            route: "/api/v1/environments/{env}/documents/{*path}",
            status: 405,
            principal: "reader one",
            client: None,
            micros: 0,
        },
    ];
    for fields in &cases {
        let mut line = String::new();
        fields.write(&mut line);
        assert_eq!(line, as_six_fields(fields));
        assert!(!line.contains('\u{1b}'), "{line}");
    }
}

/// Every route template, and the name of none, is written as `Debug`
/// writes it without escaping it (the line writes a route unchecked).
#[test]
fn every_route_is_plain() {
    for route in crate::api::paths::ALL.iter().chain(&["unmatched"]) {
        assert!(plain(route), "{route}");
        assert_eq!(format!("{route:?}"), format!("\"{route}\""));
    }
}

/// The access line's client reads as the address's own `Display`.
#[test]
fn the_access_lines_client_is_the_address_as_written() {
    for ip in [
        IpAddr::from([127, 0, 0, 1]),
        IpAddr::from([0, 0, 0, 0]),
        IpAddr::from([255, 255, 10, 99]),
        IpAddr::from([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]),
    ] {
        assert_eq!(DisplayClient(Some(ip)).to_string(), ip.to_string());
    }
    assert_eq!(DisplayClient(None).to_string(), "-");
}
