//! The small dialect layer that lets one body of store code ([`super::shared`])
//! run on SQLite and PostgreSQL: statements are written once, in
//! the SQL both engines agree on, with `?1`-style parameters (PostgreSQL's
//! side rewrites them to `$1`); parameters and rows travel as the few
//! types the schema uses. Each engine implements [`Sql`] over its
//! transaction and [`Engine`] for how it opens them.
//!
//! What the engines disagree on stays in each engine's module: schema
//! text (migrations), how a write transaction takes the write lock, the
//! database's size.

use super::changes::Log;
use super::{DatabaseSize, Result, StoreError};

/// One statement parameter.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Param<'a> {
    Int(Option<i64>),
    Text(Option<&'a str>),
    /// SQLite stores it as 0/1; PostgreSQL binds a boolean or an integer,
    /// whichever the statement's parameter is.
    Bool(bool),
    Bytes(&'a [u8]),
}

impl From<i64> for Param<'_> {
    fn from(n: i64) -> Self {
        Param::Int(Some(n))
    }
}

impl From<Option<i64>> for Param<'_> {
    fn from(n: Option<i64>) -> Self {
        Param::Int(n)
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(s: &'a str) -> Self {
        Param::Text(Some(s))
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(s: &'a String) -> Self {
        Param::Text(Some(s))
    }
}

impl<'a> From<Option<&'a str>> for Param<'a> {
    fn from(s: Option<&'a str>) -> Self {
        Param::Text(s)
    }
}

impl From<bool> for Param<'_> {
    fn from(b: bool) -> Self {
        Param::Bool(b)
    }
}

impl<'a> From<&'a [u8]> for Param<'a> {
    fn from(b: &'a [u8]) -> Self {
        Param::Bytes(b)
    }
}

/// `&[Param]` from values: `params![env, level, value]`.
macro_rules! params {
    ($($value:expr),* $(,)?) => {
        &[$($crate::store::sql::Param::from($value)),*][..]
    };
}
pub(crate) use params;

/// One column's value in a result row.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cell {
    Null,
    /// Integers and booleans (1/0).
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
}

/// One result row.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Row(pub(crate) Vec<Cell>);

fn wrong(i: usize, want: &str, got: &Cell) -> StoreError {
    let got = match got {
        Cell::Null => "NULL",
        Cell::Int(_) => "an integer",
        Cell::Text(_) => "text",
        Cell::Bytes(_) => "bytes",
    };
    StoreError::Database(format!("result column {i} holds {got}, not {want}").into())
}

impl Row {
    fn cell(&self, i: usize) -> Result<&Cell> {
        self.0
            .get(i)
            .ok_or_else(|| StoreError::Database(format!("no result column {i}").into()))
    }

    pub(crate) fn int(&self, i: usize) -> Result<i64> {
        match self.cell(i)? {
            Cell::Int(n) => Ok(*n),
            other => Err(wrong(i, "an integer", other)),
        }
    }

    pub(crate) fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            _ => self.int(i).map(Some),
        }
    }

    pub(crate) fn flag(&self, i: usize) -> Result<bool> {
        self.int(i).map(|n| n != 0)
    }

    /// The text of column `i`, taken out of the row.
    pub(crate) fn text(&mut self, i: usize) -> Result<String> {
        match self.0.get_mut(i) {
            Some(Cell::Text(s)) => Ok(std::mem::take(s)),
            Some(other) => Err(wrong(i, "text", other)),
            None => self.cell(i).map(|_| String::new()),
        }
    }

    pub(crate) fn opt_text(&mut self, i: usize) -> Result<Option<String>> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }

    /// The bytes of column `i`, taken out of the row (NULL: none).
    pub(crate) fn bytes(&mut self, i: usize) -> Result<Vec<u8>> {
        match self.0.get_mut(i) {
            Some(Cell::Bytes(b)) => Ok(std::mem::take(b)),
            Some(Cell::Null) => Ok(Vec::new()),
            Some(other) => Err(wrong(i, "bytes", other)),
            None => self.cell(i).map(|_| Vec::new()),
        }
    }
}

/// Statements inside one open transaction of either engine.
pub(crate) trait Sql {
    /// Every row `sql` answers.
    fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>>;

    /// Gives each row `sql` answers to `f` as it is read (a large table
    /// without holding it all); an error from `f` stops and is returned.
    fn for_each(
        &self,
        sql: &str,
        params: &[Param<'_>],
        f: &mut dyn FnMut(Row) -> Result<()>,
    ) -> Result<()>;

    /// How many rows `sql` changed.
    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<usize>;

    /// The first row, if any.
    fn query_opt(&self, sql: &str, params: &[Param<'_>]) -> Result<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The one row `sql` must answer.
    fn query_one(&self, sql: &str, params: &[Param<'_>]) -> Result<Row> {
        self.query_opt(sql, params)?.ok_or_else(|| {
            StoreError::Database(format!("no row answered: {}", first_line(sql)).into())
        })
    }
}

fn first_line(sql: &str) -> &str {
    sql.trim().lines().next().unwrap_or_default()
}

/// How an engine runs transactions: the [`Store`](super::Store) is
/// implemented once over this ([`super::shared`]).
pub(crate) trait Engine: Send + Sync {
    /// Runs `f` in a write transaction that holds the database's write
    /// lock from its start (writers one at a time, so what `f` reads stays
    /// the latest until it commits); what `f` records in the [`Log`] takes
    /// the next generation in the same transaction.
    fn write<T>(&self, f: impl FnOnce(&dyn Sql, &mut Log) -> Result<T>) -> Result<T>;

    /// Runs `f` in a read transaction that sees one consistent state.
    fn read<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T>) -> Result<T>;

    /// The size of the database.
    fn database_size(&self) -> Result<DatabaseSize>;

    /// As [`Store::check_writable`](super::Store::check_writable).
    fn check_writable(&self) -> Result<()>;

    /// As [`Store::change_feed`](super::Store::change_feed).
    fn change_feed(&self) -> Option<super::ChangeFeed> {
        None
    }

    /// The quotas every document write checks ([`super::quota`]).
    fn quotas(&self) -> &super::quota::QuotaCell;
}
