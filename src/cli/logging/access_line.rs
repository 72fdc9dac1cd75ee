//! The log's line format: tracing's own full format, with the access log's
//! lines (target `hierad::access`, one a request) written by a shorter
//! path to the same text. Through tracing's formatter an access line cost
//! about 12,500 instructions, a third of a cached answer's whole request
//! (bench/LOG.md, "The access log's cost"): each field's name and `=`
//! went through the terminal-colour painter even with colours off, and
//! the timestamp's seven padded numbers were formatted for every line.

use std::fmt::{self, Write as _};
use tracing::{Event, Level, Subscriber, field::Field};
use tracing_subscriber::fmt::format::{self, FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::{FmtContext, time::FormatTime};
use tracing_subscriber::registry::LookupSpan;

/// The access log's target.
const ACCESS: &str = "hierad::access";

/// Every line as tracing's full format writes it ([`Clock`]'s time); an
/// access line without colours, spans or a message by [`Fields`].
pub(super) struct Lines {
    full: format::Format<format::Full, Clock>,
}

impl Lines {
    pub(super) fn new() -> Lines {
        Lines {
            full: format::format().with_timer(Clock),
        }
    }
}

impl<S, N> FormatEvent<S, N> for Lines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        let plain = meta.target() == ACCESS
            && !writer.has_ansi_escapes()
            && meta.fields().field("message").is_none()
            && ctx.event_scope().is_none();
        if !plain {
            return self.full.format_event(ctx, writer, event);
        }
        // As the full format: the time and a space, the level padded to
        // five, the target and `: `, the fields, a newline.
        if Clock.format_time(&mut writer).is_err() {
            writer.write_str("<unknown time>")?;
        }
        let level = match *meta.level() {
            Level::TRACE => "TRACE",
            Level::DEBUG => "DEBUG",
            Level::INFO => " INFO",
            Level::WARN => " WARN",
            Level::ERROR => "ERROR",
        };
        writer.write_char(' ')?;
        writer.write_str(level)?;
        writer.write_str(" hierad::access: ")?;
        let mut fields = Fields {
            writer: &mut writer,
            first: true,
            result: Ok(()),
        };
        event.record(&mut fields);
        fields.result?;
        writer.write_char('\n')
    }
}

/// Writes `name=value` pairs, separated by a space, as tracing's default
/// visitor does without colours: strings quoted and escaped as `Debug`
/// writes them, everything else with `Debug` (a `display` value with its
/// `Display`).
struct Fields<'a, 'w> {
    writer: &'a mut Writer<'w>,
    first: bool,
    result: fmt::Result,
}

impl Fields<'_, '_> {
    fn name(&mut self, field: &Field) -> fmt::Result {
        if !std::mem::take(&mut self.first) {
            self.writer.write_char(' ')?;
        }
        self.writer.write_str(field.name())?;
        self.writer.write_char('=')
    }

    fn record(&mut self, field: &Field, value: impl FnOnce(&mut Writer<'_>) -> fmt::Result) {
        if self.result.is_ok() {
            self.result = self.name(field).and_then(|()| value(self.writer));
        }
    }
}

impl tracing::field::Visit for Fields<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.record(field, |w| {
            // What `Debug` would escape, it escapes; the usual route
            // template or name is written as it is, between quotes.
            if value
                .bytes()
                .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
            {
                w.write_char('"')?;
                w.write_str(value)?;
                w.write_char('"')
            } else {
                write!(w, "{value:?}")
            }
        });
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.record(field, |w| w.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.record(field, |w| write!(w, "{value:?}"));
    }
}

/// The log's clock: UTC with microseconds, as tracing's own default
/// writes it (`2026-11-29T08:45:23.123456Z`), but each second's date and
/// time formatted once per thread, not for every line.
pub(super) struct Clock;

impl FormatTime for Clock {
    fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
        thread_local! {
            /// The second last written, and its text up to the `.`.
            static SECOND: std::cell::RefCell<(u64, String)> =
                const { std::cell::RefCell::new((u64::MAX, String::new())) };
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        SECOND.with_borrow_mut(|(second, text)| {
            if *second != now.as_secs() {
                *second = now.as_secs();
                text.clear();
                let at = i64::try_from(now.as_secs())
                    .ok()
                    .and_then(|s| jiff::Timestamp::from_second(s).ok())
                    .unwrap_or(jiff::Timestamp::MAX);
                write!(text, "{}", at.strftime("%Y-%m-%dT%H:%M:%S."))?;
            }
            w.write_str(text)?;
            let digits = micros(now.subsec_micros());
            w.write_str(std::str::from_utf8(&digits).unwrap_or("000000"))?;
            w.write_char('Z')
        })
    }
}

/// `n` (below 1,000,000) as six ASCII digits, zero-padded.
fn micros(n: u32) -> [u8; 6] {
    let mut digits = [b'0'; 6];
    let mut rest = n;
    for digit in digits.iter_mut().rev() {
        *digit = b'0' + u8::try_from(rest % 10).unwrap_or(0);
        rest /= 10;
    }
    digits
}

#[cfg(test)]
mod tests;
