//! The server's log: `HIERAD_LOG` picks what is written (tracing's
//! `EnvFilter` directives, `info` by default), and some dependencies are
//! held below the levels where they write the data passing through them,
//! whatever `HIERAD_LOG` asks: an operator who turns on `trace` to find a
//! fault must not find the cluster's passwords in the log next to it.

use tracing::{Level, Metadata};

mod access_line;
mod batched;

/// The environment variable holding the log's directives.
pub(crate) const VAR: &str = "HIERAD_LOG";

/// Dependencies' targets (and their submodules) and the most verbose
/// level each may log at. Below it they write what they carry:
/// - tokio-postgres (and postgres over it) at `debug`: every statement's
///   parameters, which are document values;
/// - ureq at `trace`: the wire, unredacted (its own documentation says
///   so), which is the Keystone service account's password and the
///   tokens validated; at `debug` it redacts headers;
/// - axum's rejections at `trace`: the rejection's text, which can quote
///   the request.
const CAPS: &[(&str, Level)] = &[
    ("tokio_postgres", Level::INFO),
    ("postgres", Level::INFO),
    ("ureq", Level::DEBUG),
    ("ureq_proto", Level::DEBUG),
    ("axum::rejection", Level::DEBUG),
];

/// `HIERAD_LOG` is not a set of directives tracing can read.
#[derive(Debug, thiserror::Error)]
#[error(
    "{VAR}={value:?} cannot be read: {reason}. It takes tracing's directives, e.g. \
     {VAR}=info, {VAR}=warn,hierad::access=info or {VAR}=debug"
)]
pub(crate) struct BadDirectives {
    value: String,
    reason: String,
}

/// Logs to stderr as `HIERAD_LOG` asks (`info` when it is unset), within
/// [`CAPS`], the access lines in batches (`logging/batched.rs`): the
/// [`Flush`] returned writes the last of them, and is held until the
/// server ends. Colour codes only for a person: a log file or collector
/// gets plain `key=value` text.
///
/// # Errors
///
/// `HIERAD_LOG` is set but cannot be read, or is not UTF-8; the log's
/// writer thread cannot be started.
pub(crate) fn init() -> anyhow::Result<Flush> {
    use tracing_subscriber::filter::FilterExt;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{Layer, fmt};
    let directives = match std::env::var_os(VAR) {
        None => "info".to_owned(),
        Some(value) => value.into_string().map_err(|value| BadDirectives {
            value: value.to_string_lossy().into_owned(),
            reason: "it is not UTF-8".to_owned(),
        })?,
    };
    let filter = filter(&directives)?.and(caps());
    let (writer, flush) = batched::Batched::new(std::io::stderr())
        .map_err(|e| anyhow::anyhow!("the log's writer thread cannot be started: {e}"))?;
    let layer = fmt::layer()
        .event_format(access_line::Lines::new())
        .with_writer(writer)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(filter);
    // A second initialisation (tests running the server in process) keeps
    // the first.
    let _ = tracing_subscriber::registry().with(layer).try_init();
    Ok(flush)
}

/// What [`init`] returns: dropped, it writes the access lines still
/// waiting for their batch.
pub(crate) type Flush = batched::Flush<std::io::Stderr>;

/// A log captured in memory, for tests that read what a subscriber wrote.
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

#[cfg(test)]
impl Captured {
    /// Everything written so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

#[cfg(test)]
impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

/// Panics are logged with where they happened, and with their message
/// only when it is a literal of the source (`panic!("…")`, `unreachable!()`
/// without arguments: a `&'static str`). A formatted message, as
/// `unwrap` on an error, an index out of range or `expect` make, may
/// quote a document or a credential; Rust's own hook wrote it to stderr
/// before the server's catch of a handler's panic (`server::error`) could
/// keep it out.
pub(crate) fn hide_panic_data() {
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map_or_else(String::new, |l| format!("{}:{}", l.file(), l.line()));
        tracing::error!(
            location,
            thread = std::thread::current().name().unwrap_or("unnamed"),
            "panicked: {}",
            panic_message(info.payload())
        );
    }));
}

/// What of a panic's payload the log may show.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> &'static str {
    payload
        .downcast_ref::<&'static str>()
        .copied()
        .unwrap_or("(a formatted message, not shown: it may quote data)")
}

/// `directives` read as tracing's `EnvFilter`.
fn filter(directives: &str) -> Result<tracing_subscriber::EnvFilter, BadDirectives> {
    tracing_subscriber::EnvFilter::builder()
        .parse(directives)
        .map_err(|e| BadDirectives {
            value: directives.to_owned(),
            reason: e.to_string(),
        })
}

/// [`CAPS`] as a filter. Its level hint is `trace`, so the directives'
/// own hint stands: without one, the pair would have none, and the `log`
/// records of rustls and tokio-postgres would all be made and offered to
/// the filters, however quiet the directives.
fn caps() -> tracing_subscriber::filter::FilterFn<fn(&Metadata<'_>) -> bool> {
    tracing_subscriber::filter::FilterFn::new(within_caps as fn(&Metadata<'_>) -> bool)
        .with_max_level_hint(tracing::level_filters::LevelFilter::TRACE)
}

/// Whether an event or span of `meta` may be logged at all (see [`CAPS`]).
fn within_caps(meta: &Metadata<'_>) -> bool {
    let target = meta.target();
    CAPS.iter().all(|(prefix, most)| {
        let under = target
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"));
        !under || *meta.level() <= *most
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use tracing::callsite::{Callsite, Identifier};
    use tracing::metadata::Kind;

    struct Site;
    impl Callsite for Site {
        fn set_interest(&self, _: tracing::subscriber::Interest) {}
        fn metadata(&self) -> &Metadata<'_> {
            unreachable!("only its identity is used")
        }
    }
    static SITE: Site = Site;

    fn allowed(target: &'static str, level: Level) -> bool {
        let fields = tracing::field::FieldSet::new(&[], Identifier(&SITE));
        let meta = Metadata::new(
            "event",
            target,
            level,
            None,
            None,
            None,
            fields,
            Kind::EVENT,
        );
        within_caps(&meta)
    }

    #[test]
    fn data_carrying_targets_are_held_below_their_caps() {
        assert!(allowed("tokio_postgres::query", Level::INFO));
        assert!(!allowed("tokio_postgres::query", Level::DEBUG));
        assert!(!allowed("tokio_postgres", Level::TRACE));
        assert!(!allowed("postgres::client", Level::DEBUG));
        assert!(allowed("ureq::run", Level::DEBUG));
        assert!(!allowed("ureq::run", Level::TRACE));
        assert!(!allowed("ureq_proto::util", Level::TRACE));
        assert!(!allowed("axum::rejection", Level::TRACE));
        assert!(allowed("axum::serve", Level::TRACE));
    }

    #[test]
    fn other_targets_are_left_to_the_directives() {
        // Prefixes match whole path segments only.
        assert!(allowed("postgresql_tool", Level::TRACE));
        assert!(allowed("ureqx", Level::TRACE));
        assert!(allowed("hierad::access", Level::TRACE));
        assert!(allowed("rustls::server::hs", Level::TRACE));
    }

    #[test]
    fn the_caps_leave_the_level_to_the_directives() {
        use tracing::level_filters::LevelFilter;
        use tracing_subscriber::filter::FilterExt;
        use tracing_subscriber::layer::Filter;
        for (directives, level) in [
            ("info", LevelFilter::INFO),
            ("warn,hierad::access=info", LevelFilter::INFO),
            ("debug", LevelFilter::DEBUG),
        ] {
            let both = filter(directives).unwrap().and(caps());
            let hint = Filter::<tracing_subscriber::Registry>::max_level_hint(&both);
            assert_eq!(hint, Some(level), "{directives}");
        }
    }

    #[test]
    fn unreadable_directives_are_named() {
        assert!(filter("warn,hierad::access=info").is_ok());
        let text = filter("hierad=loud")
            .expect_err("a level that does not exist")
            .to_string();
        assert!(text.contains("HIERAD_LOG=\"hierad=loud\""), "{text}");
        assert!(text.contains("HIERAD_LOG=info"), "{text}");
    }

    /// Payloads as `std::panic::catch_unwind` hands them over: a literal
    /// is shown, anything formatted is not.
    #[test]
    fn a_panic_shows_its_literal_message_only() {
        let literal = std::panic::catch_unwind(|| panic!("the snapshot is gone")).unwrap_err();
        assert_eq!(panic_message(literal.as_ref()), "the snapshot is gone");
        let secret = "db-pw-Xy12";
        let formatted = std::panic::catch_unwind(|| {
            let decoded: Result<(), &str> = std::hint::black_box(Err(secret));
            decoded.expect("the document decodes");
        })
        .unwrap_err();
        let shown = panic_message(formatted.as_ref());
        assert!(!shown.contains(secret), "{shown}");
        assert!(shown.contains("not shown"), "{shown}");
    }
}
