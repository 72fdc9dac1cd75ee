//! `hierad doctor`: reads every stored version of every document (history
//! included), lists those that cannot be read, and with `--repair` mends
//! each document whose latest version is one: the newest readable version
//! is restored as a new version, or, when none is, the document is
//! deleted (a deletion marker: its history stays). An unreadable old
//! version cannot be mended in place (a restore from a backup can). Works
//! on a database file directly (stop the server first, or restart it
//! after, so it loads the repaired documents).

use crate::configdb::DocAddress;
use crate::configdb::UnreadableDocument;
use crate::ops::local::local_author;
use crate::settings::DEFAULT_DB;
use crate::store::{DocWrite, Store, UnreadableVersion, WriteCtx};
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

/// Runs `hierad doctor`: exit 0 when every stored version reads (with
/// `--repair`: when every latest version does, once mended), 1 otherwise.
///
/// # Errors
///
/// The database cannot be opened, read or written.
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
    let mut listing = Listing::default();
    let checked = store
        .check_versions(&mut |bad| {
            listing.add(bad);
            Ok(())
        })
        .with_context(|| format!("cannot read the database {shown}"))?;
    listing.flush();
    if listing.versions == 0 {
        println!(
            "no unreadable documents in {shown}: all {} stored version(s) of {} document(s) read, history included",
            checked.versions, checked.documents
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} unreadable document(s): {} of the {} stored version(s) cannot be read, {} of them a latest version (what lookups read)",
        listing.documents, listing.versions, checked.versions, listing.latest
    );
    if args.repair {
        for doc in &store.load_all()?.unreadable {
            println!("{}", repair(store, doc)?);
        }
        if listing.versions > listing.latest {
            println!("{OLD_VERSIONS}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    if listing.latest > 0 {
        println!(
            "`hierad doctor --repair` restores the newest readable version of each document whose latest version cannot be read (or deletes it if there is none)"
        );
    }
    if listing.versions > listing.latest {
        println!("{OLD_VERSIONS}");
    }
    Ok(ExitCode::from(1))
}

/// What can be done about unreadable old versions.
const OLD_VERSIONS: &str = "an unreadable old version cannot be mended in place: reading or restoring it fails \
     until retention prunes it; restore the database from a backup to get it back";

/// The unreadable versions as [`Store::check_versions`] yields them, each
/// run of one document's versions with one reason printed as one line
/// (a corrupt version takes down the deltas packed against it: dozens).
#[derive(Default)]
struct Listing {
    /// The run being gathered: newest and oldest version numbers.
    run: Option<(UnreadableVersion, u64)>,
    /// The document of the last version seen, to count documents.
    last: Option<DocAddress>,
    versions: u64,
    documents: u64,
    latest: u64,
}

impl Listing {
    fn add(&mut self, bad: UnreadableVersion) {
        self.versions += 1;
        self.latest += u64::from(bad.latest);
        if self.last.as_ref() != Some(&bad.at) {
            self.documents += 1;
            self.last = Some(bad.at.clone());
        }
        if let Some((first, oldest)) = &mut self.run {
            if first.at == bad.at && first.reason == bad.reason && *oldest == bad.version + 1 {
                *oldest = bad.version;
                return;
            }
        }
        self.flush();
        let oldest = bad.version;
        self.run = Some((bad, oldest));
    }

    fn flush(&mut self) {
        let Some((first, oldest)) = self.run.take() else {
            return;
        };
        let versions = if oldest == first.version {
            format!("version {oldest}")
        } else {
            format!("versions {oldest}-{}", first.version)
        };
        println!(
            "unreadable: {versions} of the {}: {}",
            first.at, first.reason
        );
    }
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
