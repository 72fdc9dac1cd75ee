use super::*;
use crate::cli::logging::Captured;

impl Captured {
    /// The lines, each without its time (up to the first space).
    fn lines(&self) -> Vec<String> {
        self.text()
            .lines()
            .map(|l| l.split_once(' ').unwrap().1.to_owned())
            .collect()
    }
}

/// Lines of each kind: the access line as `server/http/access.rs` writes
/// it (its fields written whole as the message), with values escaped and
/// without, and with characters a terminal acts on (which that module
/// never writes, but the format must escape as tracing does); an access
/// line with a message and fields (the abandoned check's); one inside a
/// span; another target's.
fn lines() {
    let client = std::net::IpAddr::from([10, 0, 0, 7]);
    for line in [
        r#"method=GET route="/api/v1/lookup" status=200 principal="-" client=10.0.0.7 micros=1234"#,
        r#"method=GET route="unmatched" status=401 principal="ops \"admin\"\u{1b}[31m\\ é \u{85}" client=10.0.0.7 micros=1"#,
        "method=GET route=\"\u{1b}[2J\u{7}\u{8}\u{c}\u{7f}\u{85}\u{9f}\u{a0}é\" status=200",
    ] {
        // As the access log writes it (a string), and as formatted text.
        tracing::info!(target: "hierad::access", message = line);
        tracing::info!(target: "hierad::access", "{line}");
    }
    tracing::info!(target: "hierad::access", client = %client, outcome = "abandoned", "a request left");
    let span = tracing::info_span!("conn", id = 3);
    span.in_scope(|| tracing::info!(target: "hierad::access", status = 401_u16, principal = "x"));
    tracing::warn!(target: "hierad::server", path = "/a b", "a warning \u{1b}[2J");
}

/// Every kind of line reads as tracing's own format writes it.
#[test]
fn lines_read_as_tracings_own_format_writes_them() {
    let ours = Captured::default();
    let theirs = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .event_format(Lines::new())
        .with_writer(ours.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, lines);
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(theirs.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, lines);
    let (ours, theirs) = (ours.lines(), theirs.lines());
    assert_eq!(ours.len(), 9, "{ours:#?}");
    assert_eq!(ours, theirs);
    assert!(
        ours[0].ends_with(
            "INFO hierad::access: method=GET route=\"/api/v1/lookup\" status=200 principal=\"-\" client=10.0.0.7 micros=1234"
        ),
        "{}",
        ours[0]
    );
    // The escape character reaches no line as it is.
    assert!(ours.iter().all(|l| !l.contains('\u{1b}')), "{ours:#?}");
}

/// What `timer` writes now.
fn time_of(timer: &impl FormatTime) -> String {
    let mut text = String::new();
    timer.format_time(&mut Writer::new(&mut text)).unwrap();
    text
}

/// The clock writes what tracing's own does: the same second, to the
/// `.` (read again when a second ended between them), then six digits
/// and `Z`; twice in one second, the second time from the kept text.
#[test]
fn the_clock_writes_as_tracings_own_does() {
    let (ours, theirs) = (0..100)
        .map(|_| {
            let theirs = time_of(&tracing_subscriber::fmt::time::SystemTime);
            (time_of(&Clock), time_of(&Clock), theirs)
        })
        .find(|(ours, again, theirs)| ours[..20] == theirs[..20] && again[..20] == theirs[..20])
        .map(|(ours, _, theirs)| (ours, theirs))
        .expect("one try of a hundred within one second");
    assert_eq!(ours.len(), theirs.len(), "{ours} against {theirs}");
    assert!(ours[20..26].bytes().all(|b| b.is_ascii_digit()), "{ours}");
    assert!(ours.ends_with('Z'), "{ours}");
    for (n, text) in [(0, "000000"), (42, "000042"), (999_999, "999999")] {
        assert_eq!(std::str::from_utf8(&micros(n)).unwrap(), text);
    }
}
