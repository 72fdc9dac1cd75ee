//! `hierad config history|restore|delete`: a document's versions, and the
//! two writes that act on them. Every write keeps the history: a restore
//! writes a new version holding an old one's content, a delete writes a
//! deletion marker (restorable like any other version).

use super::args::{Access, Conn};
use super::config::{KindArg, Place};
use crate::configdb::{DocAddress, Version};
use jiff::Timestamp;

/// The document one of these commands is about.
#[derive(Debug, clap::Args)]
pub(crate) struct Doc {
    #[command(flatten)]
    pub(crate) place: Place,
    /// Which of the level's two documents
    #[arg(long, value_enum, default_value = "values")]
    pub(crate) kind: KindArg,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

#[derive(Debug, clap::Args)]
pub(crate) struct HistoryArgs {
    #[command(flatten)]
    pub(crate) doc: Doc,
    /// Print the versions as JSON (the API's form) instead of a table
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RestoreArgs {
    #[command(flatten)]
    pub(crate) doc: Doc,
    /// The version whose content becomes the latest again
    #[arg(long, value_name = "N")]
    pub(crate) version: u64,
    #[command(flatten)]
    pub(crate) dry: super::dry_run::DryRunArg,
}

#[derive(Debug, clap::Args)]
pub(crate) struct DeleteArgs {
    #[command(flatten)]
    pub(crate) doc: Doc,
    #[command(flatten)]
    pub(crate) dry: super::dry_run::DryRunArg,
}

impl Doc {
    pub(crate) fn open(
        &self,
        access: Access,
    ) -> anyhow::Result<(Box<dyn crate::ops::ConfigOps>, DocAddress)> {
        let ops = self.conn.open(access)?;
        let path = self.place.at.path_in(ops.as_ref())?;
        let at = DocAddress::new(
            self.place.at.env,
            path,
            &self.place.resource,
            self.kind.into(),
        );
        Ok((ops, at))
    }
}

/// `config history`: every version of the document, oldest first.
///
/// # Errors
///
/// An unknown environment, level or resource, and transport errors.
pub(crate) fn history(args: &HistoryArgs) -> anyhow::Result<String> {
    let (ops, at) = args.doc.open(Access::Read)?;
    let versions = ops.history(&at)?;
    if args.json {
        let api: Vec<crate::api::Version> = versions.iter().map(Into::into).collect();
        return Ok(serde_json::to_string_pretty(&api)? + "\n");
    }
    if versions.is_empty() {
        return Ok(format!("{at}: never written\n"));
    }
    Ok(table(&versions))
}

/// The versions as aligned columns: number, date (UTC), size, author
/// (`-`: written before hierad recorded authors), state.
pub(crate) fn table(versions: &[Version]) -> String {
    let width = versions
        .iter()
        .map(|v| v.author.as_deref().map_or(1, str::len))
        .max()
        .unwrap_or(0)
        .max("author".len());
    let mut out = format!(
        "version  written (UTC)         bytes  {:<width$}  state\n",
        "author"
    );
    let latest = versions.last().map(|v| v.number);
    for v in versions {
        let written = Timestamp::from_second(v.created_at)
            .map(|t| t.strftime("%Y-%m-%d %H:%M:%S").to_string())
            .unwrap_or_else(|_| format!("@{}", v.created_at));
        let state = match (v.deleted, Some(v.number) == latest) {
            (true, _) => "deleted",
            (false, true) => "latest",
            (false, false) => "",
        };
        let author = v.author.as_deref().unwrap_or("-");
        let line = format!(
            "{:>7}  {written:<20}  {:>6}  {author:<width$}  {state}",
            v.number, v.size
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `config restore`: writes a new version holding version N's content.
///
/// # Errors
///
/// No such version, a deletion marker, a content the resource's schema
/// now refuses, and the errors of `history`.
pub(crate) fn restore(args: &RestoreArgs) -> anyhow::Result<String> {
    let (ops, at) = args.doc.open(Access::Write)?;
    if let Some(format) = args.dry.dry_run {
        let answer = ops.dry_run(&at, crate::ops::Write::Restore(args.version))?;
        return super::dry_run::render(&answer, format);
    }
    let written = ops.restore(&at, args.version)?;
    Ok(format!(
        "{at}: version {} restored as version {}\n",
        args.version, written.number
    ))
}

/// `config delete`: writes a deletion marker (`config restore` undoes it).
///
/// # Errors
///
/// A document with no live version, and the errors of `history`.
pub(crate) fn delete(args: &DeleteArgs) -> anyhow::Result<String> {
    let (ops, at) = args.doc.open(Access::Write)?;
    if let Some(format) = args.dry.dry_run {
        return super::dry_run::render(&ops.dry_run(&at, crate::ops::Write::Delete)?, format);
    }
    ops.delete(&at)?;
    let marker = ops.history(&at)?.last().map_or(0, |v| v.number);
    Ok(format!(
        "{at}: deleted (version {marker}; `hierad config restore --version {}` brings it back)\n",
        marker.saturating_sub(1)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_marks_the_latest_and_deletions() {
        let v = |number, created_at, deleted, author: Option<&str>| Version {
            number,
            created_at,
            size: 120,
            deleted,
            author: author.map(str::to_owned),
        };
        assert_eq!(
            table(&[
                v(1, 0, false, None),
                v(2, 86_400, true, Some("local:operator")),
                v(3, 90_061, false, Some("alice")),
            ]),
            "version  written (UTC)         bytes  author          state\n\
             \x20     1  1970-01-01 00:00:00      120  -\n\
             \x20     2  1970-01-02 00:00:00      120  local:operator  deleted\n\
             \x20     3  1970-01-02 01:01:01      120  alice           latest\n"
        );
    }
}
