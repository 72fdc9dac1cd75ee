//! A database hierad can read but never write: `serve` and the commands
//! that write refuse to start on it, naming it and why; the commands that
//! only read still work. (`serve` started on a read-only file, said ready,
//! and answered every write `503` + `Retry-After: 1` for ever.)

use crate::binary::{Args, BIN, ROOT, output, refusal, succeeded};
use crate::server::TestServer;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

/// Whether the tests run as root, who writes even a 0444 file.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `hierad args…` as a user that may not write a 0444 file: `nobody`
/// when the tests run as root.
fn unprivileged(args: &(impl Args + ?Sized)) -> Command {
    let mut command = if is_root() {
        let mut runuser = Command::new("runuser");
        runuser.args(["-u", "nobody", "--", BIN]);
        runuser
    } else {
        Command::new(BIN)
    };
    command
        .args(args.words())
        .env_remove("HIERAD_SERVER")
        .env_remove("HIERAD_TOKEN")
        .current_dir(ROOT);
    command
}

/// Gives `nobody` the folder's files, as if its server had made them.
fn give_to_nobody(dir: &std::path::Path) {
    let id = |flag: &str| -> u32 {
        let out = Command::new("id").args([flag, "nobody"]).output().unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let (uid, gid) = (id("-u"), id("-g"));
    for entry in std::fs::read_dir(dir).unwrap() {
        std::os::unix::fs::chown(entry.unwrap().path(), Some(uid), Some(gid)).unwrap();
    }
}

#[test]
fn a_database_that_accepts_no_writes_stops_serve_and_writes_but_not_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ro.db");
    TestServer::start_on(&db, &[]).stop();
    // As the tester had it: the server's user owns the files and may
    // write the folder (and so the -wal and -shm files), not the database.
    if is_root() {
        give_to_nobody(dir.path());
    }
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    let path = db.to_str().unwrap();
    let why = format!(
        "cannot open the database {path}: the database accepts no writes: \
         SQLite could open the file for reading only"
    );

    let config = |verb: &str, more: &str| {
        format!("config {verb} --db {path} --env 1 --resource astute {more}")
    };
    let set = config("set", "--key k --value v");
    let e = refusal(&set, output(unprivileged(&set), None));
    assert!(e.starts_with(&why), "{e}");

    let get = config("get", "--stored");
    let doc = succeeded(&get, output(unprivileged(&get), None));
    assert!(doc.contains("fqdn"), "{doc}");

    let serve = format!("serve --listen 127.0.0.1:0 --no-sample --db {path}");
    let out = output(unprivileged(&serve), None);
    // Its log warns first that other users can read the file.
    let stderr = crate::binary::text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let e = stderr.lines().last().unwrap_or_default();
    assert!(e.starts_with(&format!("hierad: {why}")), "{stderr}");
}
