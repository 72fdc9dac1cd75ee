//! Edits of the auth file by `hierad auth …`: one command at a time (a
//! lock file beside it), every comment kept (toml_edit), the result
//! checked as a whole by [`AuthFile::parse`] before it is written to a
//! temporary file and renamed over the old one, mode 0600.

use super::Role;
use super::file::{AuthFile, AuthFileError, not_toml};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A new user entry for [`add_user`].
pub(crate) struct NewUser<'a> {
    pub name: &'a str,
    pub role: Role,
    pub environments: Option<&'a [i64]>,
    /// The Argon2 hash of the password (`credentials::hash_password`).
    pub password_hash: String,
    /// Replace an entry of the same name rather than refuse.
    pub replace: bool,
    /// `decrypt = true`: it may read eyaml values decrypted.
    pub decrypt: bool,
}

/// A new token entry for [`add_token`].
pub(crate) struct NewToken<'a> {
    pub name: &'a str,
    pub role: Role,
    pub environments: Option<&'a [i64]>,
    pub sha256: String,
    pub expires_at: Option<jiff::Timestamp>,
    /// `decrypt = true`: it may read eyaml values decrypted.
    pub decrypt: bool,
}

/// Adds (or, with `replace`, replaces) a user in the auth file at `path`,
/// created if missing.
///
/// # Errors
///
/// The file is unreadable or invalid, the user exists, or it cannot be
/// written.
pub(crate) fn add_user(path: &Path, user: &NewUser<'_>) -> Result<(), AuthFileError> {
    edit(path, |file, doc| {
        let exists = file.users.iter().any(|u| u.name == user.name);
        if exists && !user.replace {
            return Err(format!(
                "user {:?} exists; give --replace to change its password, role or environments",
                user.name
            ));
        }
        remove_entry(doc, "user", user.name);
        let mut table = toml_edit::Table::new();
        table.insert("name", toml_edit::value(user.name));
        table.insert("role", toml_edit::value(user.role.as_str()));
        if let Some(envs) = user.environments {
            table.insert("environments", envs_value(envs));
        }
        if user.decrypt {
            table.insert("decrypt", toml_edit::value(true));
        }
        table.insert("password_hash", toml_edit::value(&user.password_hash));
        push_entry(doc, "user", table)
    })
}

/// Adds a token entry to the auth file at `path`, created if missing.
///
/// # Errors
///
/// As [`add_user`]; a token of that name exists.
pub(crate) fn add_token(path: &Path, token: &NewToken<'_>) -> Result<(), AuthFileError> {
    edit(path, |file, doc| {
        if file.tokens.iter().any(|t| t.name == token.name) {
            return Err(format!(
                "a token named {:?} exists; revoke it first (`hierad auth revoke-token`) or pick another name",
                token.name
            ));
        }
        let mut table = toml_edit::Table::new();
        table.insert("name", toml_edit::value(token.name));
        table.insert("role", toml_edit::value(token.role.as_str()));
        if let Some(envs) = token.environments {
            table.insert("environments", envs_value(envs));
        }
        if let Some(when) = token.expires_at {
            table.insert("expires_at", toml_edit::value(when.to_string()));
        }
        if token.decrypt {
            table.insert("decrypt", toml_edit::value(true));
        }
        table.insert("sha256", toml_edit::value(&token.sha256));
        push_entry(doc, "token", table)
    })
}

/// Removes the token named `name` from the auth file at `path`.
///
/// # Errors
///
/// As [`add_user`]; no token has that name.
pub(crate) fn revoke_token(path: &Path, name: &str) -> Result<(), AuthFileError> {
    remove_named(path, "token", name, |file| {
        file.tokens.iter().map(|t| t.name.as_str()).collect()
    })
}

/// Removes the user named `name` from the auth file at `path`.
///
/// # Errors
///
/// As [`add_user`]; no user has that name.
pub(crate) fn remove_user(path: &Path, name: &str) -> Result<(), AuthFileError> {
    remove_named(path, "user", name, |file| {
        file.users.iter().map(|u| u.name.as_str()).collect()
    })
}

/// Removes the `kind` entry (`user`, `token`) named `name`; an unknown
/// name is refused, naming those there are (`names`).
fn remove_named(
    path: &Path,
    kind: &str,
    name: &str,
    names: impl FnOnce(&AuthFile) -> Vec<&str>,
) -> Result<(), AuthFileError> {
    edit(path, |file, doc| {
        let known = names(file);
        if !known.contains(&name) {
            return Err(format!(
                "no {kind} is named {name:?} (the {kind}s: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ));
        }
        remove_entry(doc, kind, name);
        Ok(())
    })
}

fn envs_value(envs: &[i64]) -> toml_edit::Item {
    let array: toml_edit::Array = envs.iter().copied().collect();
    toml_edit::value(array)
}

fn remove_entry(doc: &mut toml_edit::DocumentMut, kind: &str, name: &str) {
    if let Some(tables) = doc
        .get_mut(kind)
        .and_then(toml_edit::Item::as_array_of_tables_mut)
    {
        tables.retain(|t| t.get("name").and_then(toml_edit::Item::as_str) != Some(name));
    }
}

fn push_entry(
    doc: &mut toml_edit::DocumentMut,
    kind: &str,
    table: toml_edit::Table,
) -> Result<(), String> {
    let item = doc
        .entry(kind)
        .or_insert_with(|| toml_edit::Item::ArrayOfTables(toml_edit::ArrayOfTables::new()));
    let tables = item
        .as_array_of_tables_mut()
        .ok_or_else(|| format!("`{kind}` must be written as [[{kind}]] tables"))?;
    tables.push(table);
    Ok(())
}

/// Reads the file at `path` (empty if missing), lets `change` edit it,
/// checks the result and writes it back in one rename; with the lock
/// beside it held throughout, so commands run at once each edit what the
/// one before wrote (without it, both read the same file and the second
/// rename drops the first's entry: a token printed that never works).
fn edit(
    path: &Path,
    change: impl FnOnce(&AuthFile, &mut toml_edit::DocumentMut) -> Result<(), String>,
) -> Result<(), AuthFileError> {
    let _lock = lock(path).map_err(|error| AuthFileError::Write {
        path: path.to_owned(),
        error,
    })?;
    let text = match crate::config_file::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => {
            return Err(AuthFileError::Read {
                path: path.to_owned(),
                error,
            });
        }
    };
    let invalid = |message: String| AuthFileError::Invalid {
        path: path.to_owned(),
        message,
    };
    let file = AuthFile::parse(&text).map_err(invalid)?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| invalid(not_toml(&text, e.message(), e.span())))?;
    change(&file, &mut doc).map_err(AuthFileError::Refused)?;
    let mut text = doc.to_string();
    if text.trim().is_empty() {
        // A running server keeps its old file when it finds this one
        // empty (a truncation, server/reload.rs): a file emptied on purpose
        // says so.
        text = EMPTIED.to_owned();
    }
    AuthFile::parse(&text).map_err(invalid)?;
    write_private(path, text.as_bytes()).map_err(|error| AuthFileError::Write {
        path: path.to_owned(),
        error,
    })
}

/// What `hierad auth` writes when it removed the last entry.
const EMPTIED: &str =
    "# No users, tokens, client certificates or Keystone: this file lets nobody in.\n";

/// The folder of `path` and a hidden name there ending in `suffix`:
/// `/etc/hierad/.auth.toml.lock`.
fn beside(path: &Path, suffix: &str) -> (PathBuf, PathBuf) {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "auth".into(), |n| n.to_string_lossy().into_owned());
    (dir.to_owned(), dir.join(format!(".{name}.{suffix}")))
}

/// Waits for, then holds, the exclusive lock on the file beside `path`
/// (`flock`, released when the returned file closes, so also when the
/// process dies). Not the auth file itself: it is replaced by rename, and a
/// lock on it would stay with the old file. A symlink in its place is not
/// followed (nor is one at the temporary file's name, made `create_new`):
/// `hierad auth` runs as root, and would create its target.
fn lock(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let (_, lock) = beside(path, "lock");
    let no_follow = i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()).unwrap_or_default();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(no_follow)
        .open(lock)?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
    Ok(file)
}

/// Writes `bytes` to a new file beside `path` (mode 0600), flushes it to
/// disk and renames it over `path`: a reader sees the old file or the new
/// one, never half of one. The new file keeps the old one's owner and
/// group where this process may give them (root may): a file handed to
/// the server's user (the container's, uid 8750: docs/deploy.md) stays
/// readable by the server after `hierad auth` edits it as root.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let (dir, temp) = beside(path, &format!("{}.tmp", std::process::id()));
    let owner = std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.uid(), m.gid()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        if let Some((uid, gid)) = owner {
            // Refused to a user who is not root (and may not give a file
            // away): the file is then theirs, as before.
            let _ = std::os::unix::fs::fchown(&file, Some(uid), Some(gid));
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)?;
        std::fs::File::open(&dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_keep_comments_and_refuse_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.toml");
        std::fs::write(&path, "# kept\n[[user]]\nname = \"a\"\nrole = \"read\"\npassword_hash = \"$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$ZGlnZXN0ZGlnZXN0ZGlnZXN0\"\n").unwrap();
        let token = NewToken {
            name: "ci",
            role: Role::Write,
            environments: Some(&[1, 2]),
            sha256: "ab".repeat(32),
            expires_at: None,
            decrypt: true,
        };
        add_token(&path, &token).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# kept\n"), "{text}");
        let file = AuthFile::load(&path).unwrap();
        assert_eq!(file.tokens[0].environments, Some(vec![1, 2]));
        assert!(file.tokens[0].decrypt, "--decrypt writes decrypt = true");
        let again = add_token(&path, &token).unwrap_err().to_string();
        assert!(again.contains("revoke it first"), "{again}");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        revoke_token(&path, "ci").unwrap();
        assert!(AuthFile::load(&path).unwrap().tokens.is_empty());
        let missing = revoke_token(&path, "ci").unwrap_err().to_string();
        assert!(missing.contains("no token is named \"ci\""), "{missing}");
        let missing = remove_user(&path, "b").unwrap_err().to_string();
        assert!(
            missing.contains("no user is named \"b\" (the users: a)"),
            "{missing}"
        );
        // (The comment above the user goes with it: toml_edit keeps a
        // comment with the entry it precedes.)
        remove_user(&path, "a").unwrap();
        assert!(AuthFile::load(&path).unwrap().users.is_empty());
        // Emptied on purpose, it says so: a server reloads it (an empty
        // file it would take for a truncation and keep the old one).
        assert_eq!(std::fs::read_to_string(&path).unwrap(), EMPTIED);
    }

    /// A file handed to the container's user (`chown 8750:8750`, as
    /// docs/deploy.md says) stays that user's after an edit by root, so
    /// the server goes on reading it. Only root may give a file away: as
    /// another user the test has nothing to check.
    #[test]
    fn an_edit_by_root_keeps_the_owner() {
        use std::os::unix::fs::MetadataExt as _;
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.toml");
        std::fs::write(&path, "").unwrap();
        std::os::unix::fs::chown(&path, Some(8750), Some(8750)).unwrap();
        let token = NewToken {
            name: "ci",
            role: Role::Read,
            environments: None,
            sha256: "ab".repeat(32),
            expires_at: None,
            decrypt: false,
        };
        add_token(&path, &token).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(
            (meta.uid(), meta.gid(), meta.mode() & 0o777),
            (8750, 8750, 0o600)
        );
    }
}
