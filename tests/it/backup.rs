//! `hierad backup`: a copy of a live database in a new SQLite file only
//! its owner can read (0600 even under umask 000: `sqlite3 DB ".backup"`
//! wrote every password hash world-readable), that opens and holds the
//! same data; an existing file is replaced only with --force; from
//! PostgreSQL through migrate's copy.

use crate::binary::{self, Args, BIN, ROOT};
use crate::pg;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// `hierad args…` under umask 000, in the repository root.
fn under_umask_000(args: &(impl Args + ?Sized)) -> std::process::Output {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("umask 000 && exec \"$0\" \"$@\"")
        .arg(BIN)
        .args(args.words())
        .current_dir(ROOT)
        .env_remove("HIERAD_SERVER");
    binary::output(command, None)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// What `config get` prints of the sample's astute at a node, from `db`.
fn astute(db: &str) -> String {
    binary::succeeded(
        &db,
        binary::output(
            binary::command(&format!("config get --env 1 --resource astute --db {db}")),
            None,
        ),
    )
}

fn backed_up_and_checked(db: &str, dir: &Path) {
    let out = dir.join("copy.db");
    let out_s = out.to_str().unwrap();
    let said = binary::succeeded(&"backup", under_umask_000(&["backup", "--db", db, out_s]));
    assert!(
        said.starts_with("backed up ") && said.contains("mode 0600"),
        "{said}"
    );
    assert_eq!(mode(&out), 0o600);
    assert_eq!(astute(out_s), astute(db));
    // Nothing left beside it.
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("copy.db"))
        .collect();
    assert_eq!(names, ["copy.db"]);

    // An existing file is kept unless --force.
    std::fs::write(&out, "keep me").unwrap();
    let refused = binary::refusal(
        &"backup again",
        under_umask_000(&["backup", "--db", db, out_s]),
    );
    assert!(
        refused.contains("exists: name a new file, or give --force"),
        "{refused}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
    binary::succeeded(
        &"backup --force",
        under_umask_000(&["backup", "--db", db, out_s, "--force"]),
    );
    assert_eq!(mode(&out), 0o600);
    assert_eq!(astute(out_s), astute(db));
}

#[test]
fn a_sqlite_backup_is_0600_and_holds_the_same_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hierad.db");
    let db_s = db.to_str().unwrap();
    binary::succeeded(
        &"import",
        binary::output(
            binary::command(&["import", "data", "--env", "1", "--db", db_s]),
            None,
        ),
    );
    backed_up_and_checked(db_s, dir.path());

    // What is not a database, or not there, is refused; nothing written.
    let not_db = dir.path().join("notes.txt");
    std::fs::write(&not_db, "hello").unwrap();
    let target = dir.path().join("never.db");
    for (from, says) in [
        (not_db.to_str().unwrap(), "cannot back up"),
        (
            "/nonexistent/x.db",
            "no database at /nonexistent/x.db (--db)",
        ),
    ] {
        let refused = binary::refusal(
            &from,
            under_umask_000(&["backup", "--db", from, target.to_str().unwrap()]),
        );
        assert!(refused.contains(says), "{refused}");
        assert!(!target.exists());
    }
    let empty = dir.path().join("empty.db");
    rusqlite::Connection::open(&empty)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let refused = binary::refusal(
        &"empty",
        under_umask_000(&format!(
            "backup --db {} {}",
            empty.display(),
            target.display()
        )),
    );
    assert!(refused.contains("is not a hierad database"), "{refused}");
    assert!(!target.exists());
}

#[test]
fn a_postgres_backup_is_a_0600_sqlite_file() {
    let db = pg::fresh_database();
    let dir = tempfile::tempdir().unwrap();
    binary::succeeded(
        &"import",
        binary::output(
            binary::command(&["import", "data", "--env", "1", "--db", &db]),
            None,
        ),
    );
    backed_up_and_checked(&db, dir.path());
}
