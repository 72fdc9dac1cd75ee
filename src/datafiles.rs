//! Hiera data files on disk: the [`DataSource`] of `hierad lookup`, read
//! the way the yaml and json backends read them (BOM stripped, parsed once
//! per path and kept, like Hiera's `Filecache` within one process).

use crate::hiera::config::BackendKind;
use crate::hiera::error::{ErrorClass, HieraError, Result};
use crate::hiera::hierarchy::datafile_path;
use crate::hiera::lookup::{DataSource, Fetched};
use crate::hiera::value::HashedKey;
use crate::hiera::{Hash, datafile};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::Arc;

/// Data files under each backend's datadir, cached by path.
#[derive(Default)]
pub(crate) struct DataFiles {
    // A RefCell because `DataSource::read` takes `&self`; the CLI is
    // single-threaded.
    cache: RefCell<HashMap<String, Arc<Hash>>>,
}

impl DataFiles {
    pub(crate) fn new() -> DataFiles {
        DataFiles::default()
    }
}

impl DataSource<'static> for DataFiles {
    fn fetch(
        &self,
        backend: BackendKind,
        datadir: &str,
        source: &str,
        key: &HashedKey<'_>,
    ) -> Result<Fetched<'static>> {
        Ok(match self.read(backend, datadir, source)? {
            None => Fetched::NoData,
            // The parsed file stays cached behind a RefCell, so the value is
            // handed out as a copy; the CLI does one lookup per process.
            Some(data) => data
                .get(key.value())
                .map_or(Fetched::NoKey, |v| Fetched::Found(Cow::Owned(v.clone()))),
        })
    }
}

impl DataFiles {
    /// Hiera's `File.exist?` and `Filecache#read_file`: the parsed file, or
    /// `None` when there is none.
    fn read(&self, backend: BackendKind, datadir: &str, source: &str) -> Result<Option<Arc<Hash>>> {
        let path = datafile_path(datadir, source, backend.name());
        if let Some(hit) = self.cache.borrow().get(&path) {
            return Ok(Some(hit.clone()));
        }
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(&path, &e)),
        };
        let data = Arc::new(datafile::read(backend, &path, &bytes)?);
        self.cache.borrow_mut().insert(path, data.clone());
        Ok(Some(data))
    }
}

/// Ruby's `Errno` exception for a file that exists but cannot be read.
pub(crate) fn io_error(path: &str, e: &std::io::Error) -> HieraError {
    if Path::new(path).is_dir() {
        // Ruby reads through a buffered IO on the first free descriptor.
        HieraError::new(
            ErrorClass::ErrnoEisdir,
            format!("Is a directory @ io_fillbuf - fd:5 {path}"),
        )
    } else {
        HieraError::new(
            ErrorClass::ErrnoEacces,
            format!("Permission denied @ rb_sysopen - {path} ({e})"),
        )
    }
}
