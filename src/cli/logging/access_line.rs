//! The log's line format: tracing's own full format, with the access log's
//! lines (target `hierad::access`, one a request, written whole by
//! `server/http/access.rs` as the event's message) written by a shorter
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

use crate::server::http::access::TARGET as ACCESS;

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
        let mut fields = meta.fields().iter();
        let plain = meta.target() == ACCESS
            && !writer.has_ansi_escapes()
            && fields.next().is_some_and(|f| f.name() == "message")
            && fields.next().is_none()
            && ctx.event_scope().is_none();
        if !plain {
            return self.full.format_event(ctx, writer, event);
        }
        // As the full format: the time and a space, the level padded to
        // five, the target and `: `, the message, a newline.
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
        let mut message = Message {
            writer: &mut writer,
            result: Ok(()),
        };
        event.record(&mut message);
        message.result?;
        writer.write_char('\n')
    }
}

/// Writes an event's message as tracing's default visitor does: as it
/// is, with the characters a terminal could act on escaped as tracing
/// escapes them (when the writer sanitizes, as it does by default).
struct Message<'a, 'w> {
    writer: &'a mut Writer<'w>,
    result: fmt::Result,
}

impl tracing::field::Visit for Message<'_, '_> {
    fn record_str(&mut self, _: &Field, value: &str) {
        self.result = if self.writer.sanitizes_ansi_escapes() {
            Escaping(self.writer).write_str(value)
        } else {
            self.writer.write_str(value)
        };
    }

    fn record_debug(&mut self, _: &Field, value: &dyn fmt::Debug) {
        let sanitize = self.writer.sanitizes_ansi_escapes();
        self.result = if sanitize {
            write!(Escaping(self.writer), "{value:?}")
        } else {
            write!(self.writer, "{value:?}")
        };
    }
}

/// A writer escaping ESC, BEL, BS, FF, DEL and the C1 controls as
/// tracing-subscriber's own sanitizing writer does (its `EscapeGuard`,
/// src/fmt/format/escape.rs), scanning each piece once first: an access
/// line has none.
struct Escaping<'a, 'w>(&'a mut Writer<'w>);

impl fmt::Write for Escaping<'_, '_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        if !unsafe_for_terminals(text) {
            return self.0.write_str(text);
        }
        for ch in text.chars() {
            match ch {
                '\x1b' => self.0.write_str("\\x1b")?,
                '\x07' => self.0.write_str("\\x07")?,
                '\x08' => self.0.write_str("\\x08")?,
                '\x0c' => self.0.write_str("\\x0c")?,
                '\x7f' => self.0.write_str("\\x7f")?,
                '\u{80}'..='\u{9f}' => write!(self.0, "\\u{{{:x}}}", u32::from(ch))?,
                _ => self.0.write_char(ch)?,
            }
        }
        Ok(())
    }
}

/// Whether `text` may hold a character [`Escaping`] escapes: a byte of
/// one of them, found by memchr's vector search (a byte at a time cost
/// 600 instructions an access line).
fn unsafe_for_terminals(text: &str) -> bool {
    let bytes = text.as_bytes();
    // 0xc2 leads every C1 control's UTF-8 form (U+0080 to U+009F).
    memchr::memchr3(0x1b, 0x7f, 0xc2, bytes).is_some()
        || memchr::memchr3(0x07, 0x08, 0x0c, bytes).is_some()
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
