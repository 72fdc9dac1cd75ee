//! Tags: named generations (`configdb::tags`), which retention
//! (`retention.rs`) never prunes a version of.

use super::at::check_readable;
use super::now;
use crate::configdb::tags::check_tag_name;
use crate::configdb::{Conflict, NotFound, Tag};
use crate::store::Result;
use crate::store::changes;
use crate::store::sql::{Row, Sql, params};

fn tag_from(mut r: Row) -> Result<Tag> {
    Ok(Tag {
        name: r.text(0)?,
        generation: u64::try_from(r.int(1)?).unwrap_or_default(),
        created_at: r.int(2)?,
        author: r.opt_text(3)?,
    })
}

/// Creates tag `name` at `generation` (`None`: the newest), inside a write
/// transaction. Invalid: a bad name, a generation not written yet.
/// Gone: a generation that can no longer be read. Conflict: the name is
/// taken.
pub(super) fn create(
    tx: &dyn Sql,
    name: &str,
    generation: Option<u64>,
    author: Option<&str>,
) -> Result<Tag> {
    check_tag_name(name)?;
    let generation = match generation {
        Some(g) => g,
        None => changes::generation(tx)?,
    };
    check_readable(tx, generation, None)?;
    if let Some(old) = find(tx, name)? {
        return Err(Conflict::Tag {
            name: old.name,
            generation: old.generation,
        }
        .into());
    }
    let tag = Tag {
        name: name.to_owned(),
        generation,
        created_at: now(),
        author: author.map(str::to_owned),
    };
    tx.execute(
        "INSERT INTO tags (name, generation, created_at, author) VALUES (?1, ?2, ?3, ?4)",
        params![name, super::sql_version(generation), tag.created_at, author],
    )?;
    Ok(tag)
}

/// The tag `name`, if there is one.
pub(super) fn find(tx: &dyn Sql, name: &str) -> Result<Option<Tag>> {
    tx.query_opt(
        "SELECT name, generation, created_at, author FROM tags WHERE name = ?1",
        params![name],
    )?
    .map(tag_from)
    .transpose()
}

/// The tag `name`. NotFound: there is none.
pub(super) fn get(tx: &dyn Sql, name: &str) -> Result<Tag> {
    find(tx, name)?.ok_or_else(|| NotFound::Tag(name.to_owned()).into())
}

/// Every tag, oldest generation first (then by name).
pub(super) fn all(tx: &dyn Sql) -> Result<Vec<Tag>> {
    tx.query(
        "SELECT name, generation, created_at, author FROM tags ORDER BY generation, name",
        &[],
    )?
    .into_iter()
    .map(tag_from)
    .collect()
}

/// Deletes tag `name`, returning it. NotFound: there is none.
pub(super) fn delete(tx: &dyn Sql, name: &str) -> Result<Tag> {
    let tag = get(tx, name)?;
    tx.execute("DELETE FROM tags WHERE name = ?1", params![name])?;
    Ok(tag)
}

/// The oldest generation a tag pins, which retention keeps readable.
pub(super) fn oldest_pinned(tx: &dyn Sql) -> Result<Option<u64>> {
    Ok(tx
        .query_one("SELECT min(generation) FROM tags", &[])?
        .opt_int(0)?
        .map(|g| u64::try_from(g).unwrap_or_default()))
}
