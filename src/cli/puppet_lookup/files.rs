//! The files of a Puppet tree on disk, for the Hiera 5 core: reads, and
//! Ruby's `Dir.glob` (`*`, `**`, `?`, `[set]`, `{a,b}`), results sorted.

use crate::hiera5::{Error, EyamlKeys, Files};
use crate::secrets::{KeyFiles, Keyring};
use std::path::Path;

/// The local file system.
pub(crate) struct Disk;

impl Files for Disk {
    fn read(&self, path: &str) -> Option<String> {
        let bytes = std::fs::read(path).ok()?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Some(
            text.strip_prefix('\u{feff}')
                .map(str::to_owned)
                .unwrap_or(text),
        )
    }

    fn is_file(&self, path: &str) -> bool {
        Path::new(path).is_file()
    }

    /// Relative paths from the working directory, as hiera-eyaml opens
    /// them. A private key others may read is refused, saying so (Puppet
    /// would read it; hierad reads such a key nowhere).
    fn eyaml_keys(&self, private: &str, public: &str) -> Option<Result<EyamlKeys, Error>> {
        use std::os::unix::fs::PermissionsExt as _;
        if let Ok(meta) = std::fs::metadata(private) {
            let mode = meta.permissions().mode() & 0o777;
            if meta.is_file() && mode & 0o077 != 0 {
                return Some(Err(Error::Unsupported(format!(
                    "the eyaml private key {private}: other users may read or change it (mode {mode:o}); chmod 600 it"
                ))));
            }
        }
        let files = KeyFiles {
            private_key: Some(private.into()),
            public_key: Some(public.into()),
            old_private_keys: Vec::new(),
        };
        Some(
            Keyring::load(&files)
                .map(EyamlKeys)
                .map_err(|e| Error::Data(e.to_string())),
        )
    }

    fn is_dir(&self, path: &str) -> bool {
        Path::new(path).is_dir()
    }

    fn glob(&self, pattern: &str) -> Vec<String> {
        // The literal directory before the first wildcard is walked; every
        // file below it is matched against the pattern as a regex.
        let first = pattern.find(['*', '?', '[', '{']).unwrap_or(pattern.len());
        let base = match pattern[..first].rfind('/') {
            Some(at) => &pattern[..at.max(1)],
            None => ".",
        };
        let Some(re) = crate::hiera5::glob_regex(pattern) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        walk(Path::new(base), 0, &mut |p| {
            let p = p.to_string_lossy();
            if re.is_match(&p) {
                found.push(p.into_owned());
            }
        });
        found.sort();
        found
    }
}

/// Every file below `dir`, depth-bounded against link loops.
fn walk(dir: &Path, depth: usize, each: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if depth < 32 {
                walk(&path, depth + 1, each);
            }
        } else if path.is_file() {
            each(&path);
        }
    }
}
