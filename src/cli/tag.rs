//! `hierad tag`: names for generations (docs/api.md, "Generations and
//! tags"). A deployment tags the generation it starts from and reads at
//! it (`?tag=`, the shim's `tag` option), so it reads one view; retention
//! keeps what a tag needs.

use super::args::{Access, Conn};
use super::report;
use crate::configdb::Tag;
use jiff::Timestamp;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) op: Op,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Op {
    /// Name a generation (the newest unless --generation)
    Create(Create),
    /// Print every tag, oldest generation first
    List(List),
    /// Delete a tag: retention may then prune what it kept
    Delete(Named),
}

#[derive(Debug, clap::Args)]
pub(crate) struct Create {
    /// The tag's name: ASCII letters, digits, '.', '_' and '-'
    #[arg(value_name = "NAME")]
    pub(crate) name: String,
    /// The generation it names (default: the newest)
    #[arg(long, value_name = "N")]
    pub(crate) generation: Option<u64>,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

#[derive(Debug, clap::Args)]
pub(crate) struct List {
    /// Print the tags as JSON (the API's form) instead of a table
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

#[derive(Debug, clap::Args)]
pub(crate) struct Named {
    #[arg(value_name = "NAME")]
    pub(crate) name: String,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

/// Runs `hierad tag`.
///
/// # Errors
///
/// None of its own: errors are one line on stderr and exit status 1.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(report(tag(&args.op)))
}

fn tag(op: &Op) -> anyhow::Result<String> {
    match op {
        Op::Create(c) => {
            let tag = c
                .conn
                .open(Access::Write)?
                .create_tag(&c.name, c.generation)?;
            Ok(format!(
                "tag {} names generation {}",
                tag.name, tag.generation
            ))
        }
        Op::List(l) => {
            let tags = l.conn.open(Access::Read)?.tags()?;
            if l.json {
                let api: Vec<crate::api::impact::Tag> = tags.into_iter().map(Into::into).collect();
                return Ok(serde_json::to_string_pretty(&api)?);
            }
            Ok(table(&tags))
        }
        Op::Delete(d) => {
            d.conn.open(Access::Write)?.delete_tag(&d.name)?;
            Ok(format!("deleted tag {}", d.name))
        }
    }
}

/// One tag a line: name, generation, date (UTC), author (`-`: unknown).
fn table(tags: &[Tag]) -> String {
    let width = tags.iter().map(|t| t.name.len()).max().unwrap_or(0);
    tags.iter()
        .map(|t| {
            let made = Timestamp::from_second(t.created_at)
                .map(|t| t.strftime("%Y-%m-%d %H:%M:%S").to_string())
                .unwrap_or_else(|_| format!("@{}", t.created_at));
            let author = t.author.as_deref().unwrap_or("-");
            format!("{:width$}  {:>8}  {made}  {author}", t.name, t.generation)
        })
        .collect::<Vec<_>>()
        .join("\n")
}
