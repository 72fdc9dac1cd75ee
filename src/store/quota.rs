//! Quotas on what a writer may store: the size of one document and the
//! total of an environment's latest documents, both in bytes of the stored
//! encoding (wire JSON, the `size` column). Every document write goes
//! through `shared::documents::append`, which checks them in the write's
//! transaction; the environment's total is kept there too, in
//! `environments.live_bytes`, so no write sums the environment.
//!
//! A store opens with no quotas; `hierad serve` sets its own
//! ([`Store::set_quotas`](super::Store::set_quotas)), so what a server's
//! writers store is bounded, while a process on the database file
//! (`hierad config --db`, `import --db`) writes as the operator it is.

use std::sync::atomic::{AtomicU64, Ordering};

/// The limits, in bytes; 0: none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Quotas {
    /// One document's stored size.
    pub(crate) document_bytes: u64,
    /// The total of an environment's latest live documents.
    pub(crate) environment_bytes: u64,
}

/// The [`Quotas`] an engine holds, set once the store is open.
#[derive(Debug, Default)]
pub(crate) struct QuotaCell {
    document_bytes: AtomicU64,
    environment_bytes: AtomicU64,
}

impl QuotaCell {
    pub(crate) fn get(&self) -> Quotas {
        Quotas {
            document_bytes: self.document_bytes.load(Ordering::Relaxed),
            environment_bytes: self.environment_bytes.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn set(&self, quotas: Quotas) {
        self.document_bytes
            .store(quotas.document_bytes, Ordering::Relaxed);
        self.environment_bytes
            .store(quotas.environment_bytes, Ordering::Relaxed);
    }
}
