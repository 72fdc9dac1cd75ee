//! `hierad doctor`: lists the stored documents whose latest version cannot
//! be read, and with `--repair` mends each: the newest readable version
//! is restored as a new version, or, when none is, the document is
//! deleted (a deletion marker: its history stays). Works on a database
//! file directly (stop the server first, or restart it after, so it loads
//! the repaired documents).

use crate::configdb::UnreadableDocument;
use crate::ops::local::local_author;
use crate::settings::DEFAULT_DB;
use crate::store::{DocWrite, Store, WriteCtx};
use anyhow::Context;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The database file
    #[arg(long, env = "HIERAD_DB", default_value = DEFAULT_DB)]
    pub(crate) db: PathBuf,
    /// Repair each unreadable document (restore its newest readable version, else delete it)
    #[arg(long)]
    pub(crate) repair: bool,
}

/// Runs `hierad doctor`: exit 0 when nothing is (or stays) unreadable, 1
/// when unreadable documents were listed and not repaired.
///
/// # Errors
///
/// The database cannot be opened or written.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let shown = crate::store::describe(&args.db);
    if !crate::store::is_url(&args.db) && !args.db.is_file() {
        anyhow::bail!("no database at {shown}: give --db PATH or URL (or set HIERAD_DB)");
    }
    let open = if args.repair {
        crate::store::open_writable
    } else {
        crate::store::open
    };
    let store = open(&args.db).with_context(|| format!("cannot open the database {shown}"))?;
    let store = store.as_ref();
    let unreadable = store.load_all()?.unreadable;
    if unreadable.is_empty() {
        println!("no unreadable documents in {shown}");
        return Ok(ExitCode::SUCCESS);
    }
    for doc in &unreadable {
        if args.repair {
            println!("{}", repair(store, doc)?);
        } else {
            println!("unreadable: {doc}");
        }
    }
    if args.repair {
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} unreadable document(s); `hierad doctor --repair` restores the newest readable version of each (or deletes it if there is none)",
        unreadable.len()
    );
    Ok(ExitCode::from(1))
}

/// Mends one document; says what was done.
fn repair(store: &dyn Store, doc: &UnreadableDocument) -> anyhow::Result<String> {
    let at = &doc.at;
    let author = local_author();
    let by = WriteCtx::by(&author);
    let mut older: Vec<_> = store
        .history(at)?
        .into_iter()
        .filter(|v| !v.deleted && v.number < doc.version)
        .collect();
    older.reverse();
    for version in older {
        // Any failure (it does not decode, or nests past the limit) means
        // this version cannot come back: try the one before.
        if store.get(at, Some(version.number)).is_err() {
            continue;
        }
        if let Ok(new) = store.write_document(at, DocWrite::Restore(version.number), by) {
            return Ok(format!(
                "repaired: the {at}: version {} restored as version {} (version {} was unreadable: {})",
                version.number, new.number, doc.version, doc.reason
            ));
        }
    }
    let marker = store.write_document(at, DocWrite::Delete, by)?;
    Ok(format!(
        "repaired: the {at}: deleted as version {} (no readable version; version {} was unreadable: {})",
        marker.number, doc.version, doc.reason
    ))
}
