//! A store for tests that can be taken down: an in-memory SQLite store
//! whose every transaction fails while it is down, and which counts the
//! transactions it was asked for, so a test proves that a request did not
//! touch the store at all.

use super::changes::Log;
use super::sql::{Engine, Sql};
use super::{DatabaseSize, Result, SqliteStore, StoreError};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub(crate) struct SwitchedStore {
    inner: SqliteStore,
    down: AtomicBool,
    transactions: AtomicUsize,
}

impl SwitchedStore {
    /// A fresh in-memory store, up.
    pub(crate) fn in_memory() -> Result<SwitchedStore> {
        Ok(SwitchedStore {
            inner: SqliteStore::open_in_memory()?,
            down: AtomicBool::new(false),
            transactions: AtomicUsize::new(0),
        })
    }

    /// Takes the store down (every transaction fails) or back up.
    pub(crate) fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// How many transactions were asked for, failed ones included.
    pub(crate) fn transactions(&self) -> usize {
        self.transactions.load(Ordering::SeqCst)
    }

    fn asked(&self) -> Result<()> {
        self.transactions.fetch_add(1, Ordering::SeqCst);
        if self.down.load(Ordering::SeqCst) {
            return Err(StoreError::Database("the test took the store down".into()));
        }
        Ok(())
    }
}

impl Engine for SwitchedStore {
    fn write<T>(&self, f: impl FnOnce(&dyn Sql, &mut Log) -> Result<T>) -> Result<T> {
        self.asked()?;
        self.inner.write(f)
    }

    fn read<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T>) -> Result<T> {
        self.asked()?;
        self.inner.read(f)
    }

    fn database_size(&self) -> Result<DatabaseSize> {
        self.asked()?;
        self.inner.database_size()
    }

    fn check_writable(&self) -> Result<()> {
        self.asked()?;
        self.inner.check_writable()
    }

    fn quotas(&self) -> &super::quota::QuotaCell {
        self.inner.quotas()
    }
}
