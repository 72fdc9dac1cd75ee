//! [`Sql`] on a PostgreSQL transaction: `?N` parameters rewritten to
//! `$N`, statements prepared once per connection, parameters bound as
//! the type each statement's parameter has, rows read by column type.

use crate::store::sql::{Cell, Param, Row, Sql};
use crate::store::{Result, StoreError};
use bytes::BytesMut;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Statement, Transaction};
use std::cell::RefCell;
use std::collections::HashMap;
use std::error::Error;

type BoxError = Box<dyn Error + Sync + Send>;

/// An open transaction with its connection's statement cache.
pub(super) struct PgTx<'a, 'c> {
    pub(super) tx: RefCell<&'a mut Transaction<'c>>,
    pub(super) statements: RefCell<&'a mut HashMap<String, Statement>>,
}

/// `?1` → `$1` (the shared statements use no other `?`).
fn dollar(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

impl PgTx<'_, '_> {
    fn statement(&self, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.statements.borrow().get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.tx.borrow_mut().prepare(&dollar(sql))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }
}

fn bind<'p>(params: &'p [Param<'p>]) -> Vec<&'p (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Sql for PgTx<'_, '_> {
    fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        let statement = self.statement(sql)?;
        let rows = self.tx.borrow_mut().query(&statement, &bind(params))?;
        rows.iter().map(row).collect()
    }

    fn for_each(
        &self,
        sql: &str,
        params: &[Param<'_>],
        f: &mut dyn FnMut(Row) -> Result<()>,
    ) -> Result<()> {
        use postgres::fallible_iterator::FallibleIterator as _;
        let statement = self.statement(sql)?;
        let mut tx = self.tx.borrow_mut();
        let mut rows = tx.query_raw(&statement, params.iter())?;
        while let Some(r) = rows.next()? {
            f(row(&r)?)?;
        }
        Ok(())
    }

    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<usize> {
        let statement = self.statement(sql)?;
        let n = self.tx.borrow_mut().execute(&statement, &bind(params))?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }
}

fn int_to_sql(n: i64, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    match *ty {
        Type::INT2 => i16::try_from(n)?.to_sql(ty, out),
        Type::INT4 => i32::try_from(n)?.to_sql(ty, out),
        Type::BOOL => (n != 0).to_sql(ty, out),
        _ => n.to_sql(ty, out),
    }
}

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match *self {
            Param::Int(None) | Param::Text(None) => Ok(IsNull::Yes),
            Param::Int(Some(n)) => int_to_sql(n, ty, out),
            Param::Bool(b) => int_to_sql(i64::from(b), ty, out),
            Param::Text(Some(s)) => s.to_sql(ty, out),
            Param::Bytes(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A result row as [`Cell`]s, by each column's type.
fn row(row: &postgres::Row) -> Result<Row> {
    let mut cells = Vec::with_capacity(row.len());
    for (i, column) in row.columns().iter().enumerate() {
        let cell = match *column.type_() {
            Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map(Cell::Int),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(i)?
                .map(|n| Cell::Int(n.into())),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(i)?
                .map(|n| Cell::Int(n.into())),
            Type::BOOL => row
                .try_get::<_, Option<bool>>(i)?
                .map(|b| Cell::Int(b.into())),
            Type::BYTEA => row.try_get::<_, Option<Vec<u8>>>(i)?.map(Cell::Bytes),
            Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
                row.try_get::<_, Option<String>>(i)?.map(Cell::Text)
            }
            ref other => {
                return Err(StoreError::Database(
                    format!(
                        "result column {} has type {other}, which the store does not read",
                        column.name()
                    )
                    .into(),
                ));
            }
        };
        cells.push(cell.unwrap_or(Cell::Null));
    }
    Ok(Row(cells))
}

#[cfg(test)]
mod tests {
    #[test]
    fn parameters_become_dollars() {
        assert_eq!(
            super::dollar("SELECT ?1 WHERE a = ?12 AND b = '?'"),
            "SELECT $1 WHERE a = $12 AND b = '?'"
        );
    }
}
