//! `hierad config get --show-lookup`: the effective document's top-level
//! keys, each with the stored document that last supplied it, as a table
//! (key, level, kind, version, author, time) or, with `--format json`,
//! the API's answer.

use super::config::Format;
use crate::api::ShowLookup;
use jiff::Timestamp;

/// The text `config get --show-lookup` prints.
///
/// # Errors
///
/// `--format yaml`, which this view does not offer.
pub(crate) fn render(answer: &ShowLookup, format: Format) -> anyhow::Result<String> {
    match format {
        Format::Json => Ok(serde_json::to_string_pretty(answer)? + "\n"),
        Format::Plain => Ok(table(answer)),
        Format::Yaml => {
            anyhow::bail!("--show-lookup prints a table (--format plain) or JSON (--format json)")
        }
    }
}

/// Aligned columns, one row per top-level key; the root level is `(root)`
/// and a version without an author `-`.
fn table(answer: &ShowLookup) -> String {
    let header = ["key", "level", "kind", "version", "author", "time (UTC)"];
    let rows: Vec<[String; 6]> = answer
        .lookup
        .iter()
        .map(|(key, o)| {
            let time = Timestamp::from_second(o.created_at)
                .map(|t| t.strftime("%Y-%m-%d %H:%M:%S").to_string())
                .unwrap_or_else(|_| format!("@{}", o.created_at));
            let level = if o.level.is_empty() {
                "(root)".to_owned()
            } else {
                o.level.clone()
            };
            [
                key.clone(),
                level,
                o.kind.clone(),
                o.version.to_string(),
                o.author.clone().unwrap_or_else(|| "-".to_owned()),
                time,
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header = header.map(str::to_owned);
    for row in std::iter::once(&header).chain(&rows) {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Origin, WireValue};
    use crate::hiera::{Hash, Value};

    #[test]
    fn the_table_names_each_key_s_origin() {
        let origin = |level: &str, kind: &str, version, author: Option<&str>| Origin {
            level: level.to_owned(),
            kind: kind.to_owned(),
            version,
            author: author.map(str::to_owned),
            created_at: 1_763_800_000,
        };
        let answer = ShowLookup {
            data: WireValue(Value::Hash(Hash::default())),
            lookup: [
                (
                    "debug".to_owned(),
                    origin("nodes/node-12", "overrides", 3, Some("alice")),
                ),
                ("a_long_key".to_owned(), origin("", "values", 1, None)),
            ]
            .into_iter()
            .collect(),
        };
        assert_eq!(
            render(&answer, Format::Plain).unwrap(),
            "key         level          kind       version  author  time (UTC)\n\
             debug       nodes/node-12  overrides  3        alice   2025-11-22 08:26:40\n\
             a_long_key  (root)         values     1        -       2025-11-22 08:26:40\n"
        );
        assert!(render(&answer, Format::Yaml).is_err());
    }
}
