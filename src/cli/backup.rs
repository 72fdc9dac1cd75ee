//! `hierad backup [--db DB] OUT`: a copy of a live ConfigDB in a new
//! SQLite file only its owner can read (0600, whatever the umask): the
//! documents hold passwords, and `sqlite3 DB ".backup OUT"` writes the
//! copy as the umask says (0644 for most).
//!
//! A SQLite database is copied with SQLite's online backup API in one step
//! (a consistent copy of the moment it began, while servers write); a
//! PostgreSQL one the way `hierad migrate` copies (one read transaction,
//! counts and checksum compared). The copy is written under a temporary
//! name beside OUT and renamed into place once whole, so OUT is never a
//! partial copy; an existing OUT is replaced only with `--force`.

use super::migrate;
use crate::store::{self, dump};
use anyhow::{Context, anyhow, bail};
use std::fs::OpenOptions;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The database to copy: a SQLite file or a postgres:// URL
    #[arg(long, value_name = "PATH", default_value = super::args::DEFAULT_DB)]
    pub(crate) db: PathBuf,
    /// The SQLite file to write (mode 0600)
    #[arg(value_name = "OUT")]
    pub(crate) out: PathBuf,
    /// Replace OUT if it exists
    #[arg(long)]
    pub(crate) force: bool,
}

/// Runs `hierad backup`: exit 0 with one line saying what was written,
/// or 1 with the reason (nothing written).
///
/// # Errors
///
/// None of its own (the `Result` is the commands' common signature).
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    match backup(&args) {
        Ok(line) => {
            println!("{line}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(super::fail(&e)),
    }
}

fn backup(args: &Args) -> anyhow::Result<String> {
    let (db, out) = (&args.db, &args.out);
    let is_url = store::is_url(db);
    if !is_url && !db.is_file() {
        bail!("no database at {} (--db)", db.display());
    }
    if out.is_dir() {
        bail!("{} is a directory: name the file to write", out.display());
    }
    if !args.force && out.symlink_metadata().is_ok() {
        bail!(
            "{} exists: name a new file, or give --force to replace it (nothing was written)",
            out.display()
        );
    }
    if !is_url && out.canonicalize().ok() == db.canonicalize().ok() {
        bail!("--db and OUT name the same file: a backup needs another one");
    }
    let partial = Partial::create(out)?;
    if is_url {
        copy_postgres(db, &partial.path)?;
    } else {
        copy_sqlite(db, &partial.path)?;
    }
    let size = partial.publish(out, args.force)?;
    Ok(format!(
        "backed up {} to {} ({size} bytes, mode 0600)",
        store::describe(db),
        out.display()
    ))
}

/// SQLite's online backup of `db` into `to`, all pages in one step: one
/// read transaction, so a writer's commit cannot make it start over.
fn copy_sqlite(db: &Path, to: &Path) -> anyhow::Result<()> {
    use rusqlite::backup::{Backup, StepResult};
    use rusqlite::{Connection, OpenFlags};
    let cannot = || format!("cannot back up {}", db.display());
    let source =
        Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).with_context(cannot)?;
    source
        .busy_timeout(std::time::Duration::from_secs(10))
        .with_context(cannot)?;
    let hierad: bool = source
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'environments'",
            [],
            |row| row.get(0),
        )
        .with_context(cannot)?;
    if !hierad {
        bail!("{} is not a hierad database", db.display());
    }
    let mut target = Connection::open(to).with_context(cannot)?;
    {
        let backup = Backup::new(&source, &mut target).with_context(cannot)?;
        // A writer holding the lock is waited for, a while (bounded).
        let mut tries = 0;
        loop {
            match backup.step(-1).with_context(cannot)? {
                StepResult::Done => break,
                StepResult::Busy | StepResult::Locked if tries < 100 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                _ => bail!(
                    "cannot back up {}: the database stayed locked for 10 s",
                    db.display()
                ),
            }
        }
    }
    // A WAL source makes a WAL copy: closing folds it into the file.
    target.close().map_err(|(_, e)| e).with_context(cannot)?;
    Ok(())
}

/// `hierad migrate`'s copy of a PostgreSQL database into the SQLite file
/// `to`, checked by its counts and checksum.
fn copy_postgres(db: &Path, to: &Path) -> anyhow::Result<()> {
    let name = store::describe(db);
    let from = store::open(db).with_context(|| format!("cannot open the database {name}"))?;
    let target = store::open_writable(to).context("cannot create the backup file")?;
    let read = migrate::copy(from.as_ref(), target.as_ref(), false)
        .with_context(|| format!("the backup of {name} failed; nothing was written"))?;
    let written = dump::tally(target.as_ref()).context("cannot read the backup back")?;
    if read.checksum() != written.checksum() || read.counts() != written.counts() {
        bail!("the backup differs from {name}: nothing was written");
    }
    Ok(())
}

/// The copy being written, under a temporary name beside OUT; removed
/// (with SQLite's side files) unless published.
struct Partial {
    path: PathBuf,
    published: bool,
}

impl Partial {
    /// An empty file only its owner can read: SQLite writes into it, and
    /// its side files (-wal, -shm, -journal) take its mode.
    fn create(out: &Path) -> anyhow::Result<Partial> {
        let name = out
            .file_name()
            .ok_or_else(|| anyhow!("{}: name the file to write", out.display()))?;
        let mut temp = std::ffi::OsString::from(".");
        temp.push(name);
        temp.push(format!(".partial-{}", std::process::id()));
        let path = out.with_file_name(temp);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        // The umask only takes bits away; this says it exactly.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot set the mode of {}", path.display()))?;
        Ok(Partial {
            path,
            published: false,
        })
    }

    /// Moves the whole copy to `out`: a rename with `force`, else a link
    /// that fails if `out` appeared meanwhile. Its size in bytes.
    fn publish(mut self, out: &Path, force: bool) -> anyhow::Result<u64> {
        let size = std::fs::metadata(&self.path)?.len();
        if force {
            std::fs::rename(&self.path, out)
                .with_context(|| format!("cannot write {}", out.display()))?;
            self.published = true;
        } else {
            std::fs::hard_link(&self.path, out)
                .with_context(|| format!("cannot write {} (nothing was written)", out.display()))?;
        }
        Ok(size)
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_file(&self.path);
        }
        for side in ["-wal", "-shm", "-journal"] {
            let mut path = self.path.clone().into_os_string();
            path.push(side);
            let _ = std::fs::remove_file(path);
        }
    }
}
