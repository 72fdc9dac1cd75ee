//! The small files the server's configuration names and reads at start
//! and at every reload: the auth file, the Keystone password file, TLS
//! certificates and keys. Links are followed (a mounted Kubernetes secret
//! is one), but the file must be a regular one of bounded size: a FIFO
//! would hang the start, or the reload task and every reload after it,
//! and `/dev/zero` would fill the memory.

use rustix::fs::{FileType, Mode, OFlags};
use std::io::{Error, ErrorKind, Read};
use std::path::{Path, PathBuf};

/// The largest file read: far above any real one (an auth file entry is
/// about 300 bytes, a CA bundle a few hundred KiB).
pub(crate) const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The whole of `path`.
///
/// # Errors
///
/// It cannot be opened or read, is not a regular file (the message says
/// what it is), or is over [`MAX_BYTES`].
pub(crate) fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    read_checked(path, false)
}

/// [`read`], refused unless only its owner may read or write it (mode
/// 0600 or 0400): a private key others can read is no longer private.
/// The mode is checked on the file opened, so a swap between the check
/// and the read changes nothing.
///
/// # Errors
///
/// As [`read`], and a file others may read or write (the message gives
/// its mode and the `chmod` that fixes it).
pub(crate) fn read_private(path: &Path) -> std::io::Result<Vec<u8>> {
    read_checked(path, true)
}

fn read_checked(path: &Path, private: bool) -> std::io::Result<Vec<u8>> {
    // O_NONBLOCK: a FIFO opens at once (and is then refused) instead of
    // waiting for a writer.
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::empty())?;
    let stat = rustix::fs::fstat(&fd)?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if kind != FileType::RegularFile {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("it is {}, not a regular file", kind_name(kind)),
        ));
    }
    let mode = stat.st_mode & 0o777;
    if private && mode & 0o077 != 0 {
        return Err(Error::new(
            ErrorKind::PermissionDenied,
            format!("other users may read or change it (mode {mode:o}); chmod 600 it"),
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("it is over {} MiB", MAX_BYTES >> 20),
        ));
    }
    Ok(bytes)
}

/// [`read`], as UTF-8 text.
///
/// # Errors
///
/// As [`read`], and text that is not UTF-8.
pub(crate) fn read_to_string(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read(path)?)
        .map_err(|_| Error::new(ErrorKind::InvalidData, "it is not UTF-8 text"))
}

/// What is wrong with a PEM file of certificates.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PemError {
    #[error("{0}")]
    Malformed(String),
    #[error("no PEM certificate in it")]
    Empty,
}

/// The certificates of a PEM file's `bytes`: at least one. The one
/// reading of certificates for the server, its clients, Keystone and
/// PostgreSQL; the caller reads the file (the CLI's `--cacert <(…)` is a
/// pipe) and names it in the error.
///
/// # Errors
///
/// A malformed PEM block, or no certificate.
pub(crate) fn certificates(
    bytes: &[u8],
) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, PemError> {
    use rustls::pki_types::pem::PemObject;
    let found: Vec<_> = rustls::pki_types::CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| PemError::Malformed(e.to_string()))?;
    if found.is_empty() {
        return Err(PemError::Empty);
    }
    Ok(found)
}

/// What a file that is not a regular one is, for an error message.
pub(crate) fn kind_name(kind: FileType) -> &'static str {
    match kind {
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Symlink => "a symbolic link",
        FileType::Directory => "a folder",
        FileType::RegularFile => "a regular file",
        FileType::Unknown => "not a regular file",
    }
}

/// What a file looks like on disk (see [`Seen`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    device: u64,
    inode: u64,
    len: u64,
    /// Seconds and nanoseconds.
    modified: (i64, i64),
    changed: (i64, i64),
}

/// Files' [`Stamp`]s (`None`: missing), the cheap "changed on disk?" of
/// a reload: a change of any part is a change of the file, however it
/// was written (in place, by rename, or through a swapped symlink, as
/// Kubernetes updates a mounted secret). Stamp before reading, so a
/// change while reading is seen by the next look.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Seen(Vec<Option<Stamp>>);

impl Seen {
    /// These stamps, then `more`'s: files whose names are known only
    /// once the first ones are read (the Keystone files an auth file names).
    pub(crate) fn and(mut self, more: Seen) -> Seen {
        self.0.extend(more.0);
        self
    }

    pub(crate) fn of<'a>(paths: impl IntoIterator<Item = &'a PathBuf>) -> Seen {
        use std::os::unix::fs::MetadataExt as _;
        let stamp = |m: std::fs::Metadata| Stamp {
            device: m.dev(),
            inode: m.ino(),
            len: m.len(),
            modified: (m.mtime(), m.mtime_nsec()),
            changed: (m.ctime(), m.ctime_nsec()),
        };
        Seen(
            paths
                .into_iter()
                .map(|path| std::fs::metadata(path).ok().map(stamp))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_write_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.toml");
        let paths = [file.clone()];
        let missing = Seen::of(&paths);
        assert_eq!(missing, Seen(vec![None]));
        std::fs::write(&file, "a").unwrap();
        let written = Seen::of(&paths);
        assert_ne!(written, missing);
        assert_eq!(Seen::of(&paths), written, "nothing changed");
        // Same size, written again at once: the change time moves (or the
        // size would; here a rename brings a new inode as well).
        let next = dir.path().join("next");
        std::fs::write(&next, "b").unwrap();
        std::fs::rename(&next, &file).unwrap();
        assert_ne!(Seen::of(&paths), written);
    }

    #[test]
    fn only_a_regular_file_of_bounded_size_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.toml");
        std::fs::write(&file, "a = 1\n").unwrap();
        assert_eq!(read_to_string(&file).unwrap(), "a = 1\n");
        // Through a link, as a mounted secret.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_to_string(&link).unwrap(), "a = 1\n");

        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        // Refused at once, with no writer: not a hang.
        let err = read(&fifo).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is a FIFO (named pipe), not a regular file"
        );
        let err = read(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is a character device, not a regular file"
        );
        assert_eq!(
            read(dir.path()).unwrap_err().to_string(),
            "it is a folder, not a regular file"
        );

        let big = dir.path().join("big");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_BYTES + 1).unwrap();
        assert_eq!(read(&big).unwrap_err().to_string(), "it is over 16 MiB");
        f.set_len(MAX_BYTES).unwrap();
        assert_eq!(read(&big).unwrap().len() as u64, MAX_BYTES);

        std::fs::write(&file, b"\xff\xfe").unwrap();
        assert_eq!(
            read_to_string(&file).unwrap_err().to_string(),
            "it is not UTF-8 text"
        );
    }
}
