use super::*;
use std::time::Instant;

/// A writer keeping each `write` apart: how many there were shows the
/// batching.
#[derive(Clone, Default)]
struct Writes(Arc<Mutex<Vec<Vec<u8>>>>);

impl Writes {
    fn text(&self) -> String {
        String::from_utf8(lock(&self.0).concat()).unwrap()
    }
    fn count(&self) -> usize {
        lock(&self.0).len()
    }
}

impl Write for Writes {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        lock(&self.0).push(bytes.to_vec());
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn line<'a>(batched: &'a Batched<Writes>, access: bool) -> Line<'a, Writes> {
    Line {
        shared: &batched.shared,
        access,
    }
}

#[test]
fn any_other_line_is_written_at_once_after_the_access_lines_before_it() {
    let writes = Writes::default();
    let (batched, _flush) = Batched::new(writes.clone()).unwrap();
    for n in 1..=3 {
        writeln!(line(&batched, true), "access {n}").unwrap();
    }
    writeln!(line(&batched, false), "a warning").unwrap();
    // Whether the batch writer wrote the access lines first or not.
    assert_eq!(writes.text(), "access 1\naccess 2\naccess 3\na warning\n");
    assert!(lock(&batched.shared.pending).lines.is_empty());
}

#[test]
fn the_batch_writer_writes_access_lines_by_itself() {
    let writes = Writes::default();
    let (batched, _flush) = Batched::new(writes.clone()).unwrap();
    writeln!(line(&batched, true), "access 1").unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while writes.text().is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(writes.text(), "access 1\n");
}

#[test]
fn lines_from_many_threads_arrive_whole_in_a_few_writes_and_none_is_lost() {
    let writes = Writes::default();
    let (batched, flush) = Batched::new(writes.clone()).unwrap();
    let (threads, each) = (8, 500);
    std::thread::scope(|s| {
        for t in 0..threads {
            let batched = &batched;
            s.spawn(move || {
                for n in 0..each {
                    // One `write` a line, as tracing's formatter writes.
                    let text = format!("thread {t} line {n}\n");
                    line(batched, true).write_all(text.as_bytes()).unwrap();
                }
            });
        }
    });
    // What is still pending is written as the server ends.
    drop(flush);
    let text = writes.text();
    let mut lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), threads * each);
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines.len(), threads * each, "a line twice or torn");
    assert!(
        writes.count() <= threads * each / 4,
        "{} writes for {} lines",
        writes.count(),
        threads * each
    );
}

#[test]
fn a_batch_past_its_bound_is_written_by_the_thread_that_fills_it() {
    let writes = Writes::default();
    let (batched, _flush) = Batched::new(writes.clone()).unwrap();
    let text = format!("{}\n", "x".repeat(999));
    for _ in 0..(3 * HIGH / text.len()) {
        line(&batched, true).write_all(text.as_bytes()).unwrap();
        assert!(lock(&batched.shared.pending).lines.len() < HIGH);
    }
}

#[test]
fn through_tracing_only_the_access_target_waits() {
    use tracing_subscriber::layer::SubscriberExt;
    let writes = Writes::default();
    let (batched, _flush) = Batched::new(writes.clone()).unwrap();
    let subscriber =
        tracing_subscriber::registry().with(tracing_subscriber::fmt::layer().with_writer(batched));
    tracing::subscriber::with_default(subscriber, || {
        tracing::info!(target: "hierad::access", "the request");
        tracing::warn!("a warning");
    });
    let text = writes.text();
    let (request, warning) = (text.find("the request"), text.find("a warning"));
    assert!(
        request.is_some() && warning.is_some() && request < warning,
        "{text}"
    );
    // The warning was written at once, with the access line before it.
    assert_eq!(text.lines().count(), 2, "{text}");
}
