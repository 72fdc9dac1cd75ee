//! `hierad migrate --from DB --to DB`: copies a whole ConfigDB, history
//! included, from one database into an empty one, and shows
//! that the copy is whole: the counts of each kind of row and a checksum,
//! computed the same way on both sides ([`crate::store::dump::Tally`]),
//! from what was read and from the copy read back.
//!
//! The source is read in one transaction (a consistent copy of the moment
//! the copy began, even while servers write to it) and the target written
//! in one transaction (all or nothing); the rows stream from one to the
//! other through a bounded channel, so memory stays flat whatever the
//! history's size.

use crate::store::dump::{self, Dumped, Tally};
use crate::store::{self, Store, StoreError};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The database to copy: a SQLite file or a postgres:// URL
    #[arg(long)]
    pub(crate) from: String,
    /// The database to copy into: a SQLite file (created if missing) or a
    /// postgres:// URL; it must hold no component or environment, unless
    /// --replace
    #[arg(long)]
    pub(crate) to: String,
    /// Erase everything the target holds first (in the copy's own
    /// transaction: if the copy fails, the target stays as it was)
    #[arg(long)]
    pub(crate) replace: bool,
}

/// Runs `hierad migrate`: exit 0 when the copy's counts and checksum
/// equal the source's, 1 (with the reason on stderr) otherwise: a
/// database that cannot be opened, read or written, a target that is not
/// empty (without `--replace`), a copy that differs.
///
/// # Errors
///
/// None of its own (the `Result` is the commands' common signature).
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(migrate(&args).unwrap_or_else(|e| super::fail(&e)))
}

fn migrate(args: &Args) -> anyhow::Result<ExitCode> {
    let from_path = source_path(&args.from)?;
    let to_path = PathBuf::from(&args.to);
    if same_database(&from_path, &to_path) {
        anyhow::bail!(
            "--from and --to name the same database ({}): a copy needs another one",
            args.from
        );
    }
    let from = store::open(&from_path).with_context(|| {
        format!(
            "cannot open the source database {}",
            store::describe(&from_path)
        )
    })?;
    let to = store::open_writable(&to_path).with_context(|| {
        format!(
            "cannot open the target database {}",
            store::describe(&to_path)
        )
    })?;
    let (from_name, to_name) = (store::describe(&from_path), store::describe(&to_path));
    let read = copy(from.as_ref(), to.as_ref(), args.replace).map_err(|e| match e {
        StoreError::Config(crate::configdb::ConfigError::Conflict(
            crate::configdb::Conflict::NotEmpty,
        )) => anyhow::anyhow!(
            "the target database {to_name} is not empty: it already holds components or environments; \
             copy into a new one, or give --replace to erase what it holds (nothing was written)"
        ),
        other => anyhow::Error::from(other).context(format!(
            "the copy from {from_name} to {to_name} failed; nothing was written"
        )),
    })?;
    let written = dump::tally(to.as_ref())
        .with_context(|| format!("cannot read the copy back from {to_name}"))?;
    print!("{}", table((&from_name, &to_name), &read, &written));
    if read.checksum() == written.checksum() && read.counts() == written.counts() {
        println!("the copy matches the source: every count and the checksum are equal");
        Ok(ExitCode::SUCCESS)
    } else {
        Err(anyhow::anyhow!(
            "the copy in {to_name} differs from the source {from_name} (see the counts and checksums above)"
        ))
    }
}

/// A source must exist: opening a missing file would create an empty one.
fn source_path(db: &str) -> anyhow::Result<PathBuf> {
    let path = PathBuf::from(db);
    if !store::is_url(&path) && !path.is_file() {
        anyhow::bail!("no database at {db} (--from)");
    }
    Ok(path)
}

/// Whether both name one database: the same URL, or the same file.
fn same_database(a: &Path, b: &Path) -> bool {
    if store::is_url(a) || store::is_url(b) {
        return a == b;
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// One message from the reading thread to the writing one: a row (or
/// the dump's error), or `None`: the dump ended without an error, the rows
/// before are all of it.
type Message = Option<Result<Dumped, StoreError>>;

/// The rows the reader sends, as the writer's iterator: a channel that
/// closes without the final `None` (the reader failed or panicked) ends
/// in an error, so the writer never commits a partial copy.
struct Rows {
    channel: mpsc::Receiver<Message>,
    ended: bool,
}

impl Iterator for Rows {
    type Item = Result<Dumped, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ended {
            return None;
        }
        match self.channel.recv() {
            Ok(Some(row)) => Some(row),
            Ok(None) => {
                self.ended = true;
                None
            }
            Err(_) => {
                self.ended = true;
                Some(Err(StoreError::Database(
                    "the reading of the source stopped before its end".into(),
                )))
            }
        }
    }
}

/// Copies `from` into `to` (see [`Store::replay`]); returns what was read.
///
/// # Errors
///
/// The first error of the dump or of the replay; nothing is written then.
pub(crate) fn copy(from: &dyn Store, to: &dyn Store, replace: bool) -> Result<Tally, StoreError> {
    let (send, channel) = mpsc::sync_channel::<Message>(1024);
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let mut tally = Tally::default();
            let closed = || StoreError::Database("the copy stopped".into());
            let outcome = from.dump(&mut |row| {
                tally.add(&row);
                send.send(Some(Ok(row))).map_err(|_| closed())
            });
            // The writer may have stopped already: then it has its error.
            let _ = send.send(match outcome {
                Ok(()) => None,
                Err(e) => Some(Err(e)),
            });
            tally
        });
        let mut rows = Rows {
            channel,
            ended: false,
        };
        let written = to.replay(&mut rows, replace);
        // Unblocks a reader still sending (the writer stopped early).
        drop(rows);
        let tally = reader.join();
        written?;
        tally.map_err(|_| StoreError::Database("the reading of the source panicked".into()))
    })
}

/// The counts side by side, then both checksums.
fn table((from, to): (&str, &str), read: &Tally, written: &Tally) -> String {
    let mut text = format!("copied {from} to {to}\n");
    text.push_str(&format!("{:<28} {:>12} {:>12}\n", "", "source", "copy"));
    for ((name, a), (_, b)) in read.counts().iter().zip(written.counts().iter()) {
        text.push_str(&format!("{name:<28} {a:>12} {b:>12}\n"));
    }
    text.push_str(&format!("checksum of the source  {}\n", read.checksum()));
    text.push_str(&format!("checksum of the copy    {}\n", written.checksum()));
    text
}
