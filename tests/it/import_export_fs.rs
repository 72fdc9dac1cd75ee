//! `hierad import` and `hierad export` against what a file system can hold
//! besides regular files: links out of the tree, FIFOs, devices, huge
//! files. Import reads regular files inside the tree only, within its size
//! limits, and uploads nothing when it refuses (local `--db` and
//! `--server` alike); export never writes outside its folder.

use crate::in_process::InProcess;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::binary::{ok, refused as failing};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A tree with one good file, so a refused import had something to upload.
fn tree_in(dir: &Path, name: &str) -> std::path::PathBuf {
    let tree = dir.join(name);
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("good.yaml"), "a: 1\n").unwrap();
    tree
}

/// Where the imports go: a local database or a server.
enum Target {
    Local(std::path::PathBuf),
    Server(InProcess),
}

impl Target {
    fn flags(&self) -> [&str; 2] {
        match self {
            Target::Local(db) => ["--db", s(db)],
            Target::Server(server) => ["--server", &server.url],
        }
    }

    /// The import of `tree` into environment 7 is refused with an error
    /// containing every one of `want`, and environment 7 was not created.
    fn refused(&self, tree: &Path, extra: &[&str], want: &[&str]) {
        let mut args = vec!["import", s(tree), "--env", "7"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&self.flags());
        let err = failing(&args);
        for want in want {
            assert!(err.contains(want), "{err}\nwant: {want}");
        }
        let mut get = vec!["config", "get", "--env", "7", "--resource", "good"];
        get.extend_from_slice(&self.flags());
        let err = failing(&get);
        assert_eq!(err, "environment 7 does not exist");
    }
}

/// A local database and a server, each holding the sample as environment 1.
fn targets(dir: &Path) -> Vec<Target> {
    let db = dir.join("h.db");
    ok(&["import", "data", "--env", "1", "--db", s(&db)]);
    vec![Target::Local(db), Target::Server(InProcess::with_sample())]
}

#[test]
fn import_refuses_a_file_link_out_of_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("creds.yaml"), "password: hunter2\n").unwrap();
    let tree = tree_in(dir.path(), "tree");
    symlink(outside.join("creds.yaml"), tree.join("creds.yaml")).unwrap();
    // A link that stays inside the tree is refused as well: one rule.
    let inside = tree_in(dir.path(), "inside");
    symlink("good.yaml", inside.join("again.yaml")).unwrap();
    for target in targets(dir.path()) {
        let link = tree.join("creds.yaml");
        target.refused(
            &tree,
            &[],
            &[
                &format!("{} is a symbolic link to ", link.display()),
                "never follows links",
            ],
        );
        target.refused(
            &inside,
            &[],
            &["again.yaml is a symbolic link to good.yaml"],
        );
    }
}

#[test]
fn import_refuses_a_folder_link_out_of_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("creds.yaml"), "password: hunter2\n").unwrap();
    let tree = tree_in(dir.path(), "tree");
    symlink(&outside, tree.join("secrets")).unwrap();
    // A link to a file that is not data is not read, so it is no error.
    symlink(outside.join("creds.yaml"), tree.join("README")).unwrap();
    for target in targets(dir.path()) {
        target.refused(
            &tree,
            &[],
            &[&format!(
                "{} is a symbolic link to the folder {}",
                tree.join("secrets").display(),
                outside.display()
            )],
        );
    }
}

#[test]
fn import_refuses_a_fifo_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let tree = tree_in(dir.path(), "tree");
    let fifo = tree.join("x.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for target in targets(dir.path()) {
        target.refused(
            &tree,
            &[],
            &[&format!(
                "{} is a FIFO (named pipe), not a regular file",
                fifo.display()
            )],
        );
    }
}

#[test]
fn import_refuses_a_link_to_dev_zero() {
    let dir = tempfile::tempdir().unwrap();
    let tree = tree_in(dir.path(), "tree");
    symlink("/dev/zero", tree.join("zero.yaml")).unwrap();
    let device = tree_in(dir.path(), "device");
    for target in targets(dir.path()) {
        target.refused(&tree, &[], &["zero.yaml is a symbolic link to /dev/zero"]);
    }
    // A device node itself (where one can be made) is refused by its type.
    let made = Command::new("mknod")
        .args([s(&device.join("null.yaml")), "c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    if made.success() {
        Target::Local(dir.path().join("h.db")).refused(
            &device,
            &[],
            &["null.yaml is a character device, not a regular file"],
        );
    }
}

const MIB: usize = 1024 * 1024;

/// A YAML file of `len` bytes: `k: aaa…\n`.
fn yaml_of(len: usize) -> Vec<u8> {
    let mut text = b"k: ".to_vec();
    text.resize(len - 1, b'a');
    text.push(b'\n');
    text
}

#[test]
fn import_refuses_a_file_over_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let tree = tree_in(dir.path(), "tree");
    std::fs::write(tree.join("big.yaml"), yaml_of(MIB + 1)).unwrap();
    let limit = ["--max-file-mib", "1"];
    for target in targets(dir.path()) {
        target.refused(
            &tree,
            &limit,
            &[
                &format!(
                    "{} is 1.0 MiB ({} bytes)",
                    tree.join("big.yaml").display(),
                    MIB + 1
                ),
                "over the per-file limit of 1 MiB",
                "--max-file-mib",
            ],
        );
    }
    // At the limit exactly, it is read.
    std::fs::write(tree.join("big.yaml"), yaml_of(MIB)).unwrap();
    let db = dir.path().join("h3.db");
    let report = ok(&format!(
        "import {} --env 7 --max-file-mib 1 --db {}",
        tree.display(),
        db.display()
    ));
    assert!(report.starts_with("imported 2 file(s)"), "{report}");
}

#[test]
fn import_refuses_a_tree_over_the_total_limit() {
    let dir = tempfile::tempdir().unwrap();
    let tree = tree_in(dir.path(), "tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("one.yaml"), yaml_of(MIB / 2)).unwrap();
    std::fs::write(tree.join("sub/two.yaml"), yaml_of(MIB / 2)).unwrap();
    for target in targets(dir.path()) {
        target.refused(
            &tree,
            &["--max-total-mib", "1"],
            &[
                &format!(
                    "the data files under {} come to at least 1.0 MiB",
                    tree.display()
                ),
                "over the total limit of 1 MiB",
                "--max-total-mib",
            ],
        );
    }
}

#[test]
fn import_over_the_server_body_limit_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let tree = tree_in(dir.path(), "tree");
    // Large enough that the server closes the connection long before the
    // upload ends: the client must still read and show the 413.
    std::fs::write(tree.join("big.yaml"), yaml_of(4 * MIB)).unwrap();
    let db = dir.path().join("s.db");
    let server = InProcess::start_on(&db, &["--no-sample", "--body-limit", "10000"]);
    let err = failing(&["import", s(&tree), "--env", "7", "--server", &server.url]);
    assert!(
        err.contains("the request body is larger than the limit of 10000 bytes"),
        "{err}"
    );
    assert!(err.contains("the server refused the import"), "{err}");
    assert!(err.contains("--body-limit"), "{err}");
    // No document was written. (The environment itself is created before
    // the upload over --server, unlike locally.)
    let err = failing(&format!(
        "config get --env 7 --resource good --server {}",
        server.url
    ));
    assert!(err.contains("resource \"good\" is not defined"), "{err}");
}

#[test]
fn export_never_writes_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    ok(&["import", "data", "--env", "1", "--db", s(&db)]);
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep.yaml"), "mine: 1\n").unwrap();

    // A file link where export would write astute.yaml.
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    symlink(outside.join("keep.yaml"), out.join("astute.yaml")).unwrap();
    let err = failing(&["export", "--env", "1", s(&out), "--db", s(&db), "--force"]);
    assert!(
        err.contains(&format!(
            "{} is a symbolic link",
            out.join("astute.yaml").display()
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("keep.yaml")).unwrap(),
        "mine: 1\n"
    );
    // Nothing was written: the check comes before the first file.
    assert!(!out.join("globals.yaml").exists());

    // A folder link where export would write override/….
    let out2 = dir.path().join("out2");
    std::fs::create_dir_all(&out2).unwrap();
    symlink(&outside, out2.join("override")).unwrap();
    let err = failing(&["export", "--env", "1", s(&out2), "--db", s(&db), "--force"]);
    assert!(
        err.contains(&format!(
            "{} is a symbolic link",
            out2.join("override").display()
        )),
        "{err}"
    );
    let names: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["keep.yaml"]);
    assert!(!out2.join("astute.yaml").exists());
}

#[test]
fn export_force_replaces_files_whole_and_keeps_their_mode() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    ok(&["import", "data", "--env", "1", "--db", s(&db)]);
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("astute.yaml"), "old: 1\n").unwrap();
    std::fs::set_permissions(out.join("astute.yaml"), PermissionsExt::from_mode(0o600)).unwrap();
    // A hard link shares the old file: replacing by rename leaves it be.
    std::fs::hard_link(out.join("astute.yaml"), dir.path().join("shared.yaml")).unwrap();
    ok(&["export", "--env", "1", s(&out), "--db", s(&db), "--force"]);
    let astute = std::fs::read_to_string(out.join("astute.yaml")).unwrap();
    assert!(astute.starts_with("---\n"), "{astute}");
    let mode = std::fs::metadata(out.join("astute.yaml"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("shared.yaml")).unwrap(),
        "old: 1\n"
    );
    // No temporary file is left behind.
    let hidden: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
}

/// Every mode under `dir` (itself included), by path relative to it.
fn modes(dir: &Path) -> Vec<(String, u32)> {
    let mut found = vec![(String::new(), 0)];
    let mut todo = vec![dir.to_path_buf()];
    found[0].1 = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
    while let Some(folder) = todo.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            found.push((rel, meta.permissions().mode() & 0o777));
            if meta.is_dir() {
                todo.push(path);
            }
        }
    }
    found.sort();
    found
}

/// `hierad args…` under umask 000, which used to make exported files 0666.
fn ok_under_umask_000(args: &[&str]) {
    let out = Command::new("sh")
        .arg("-c")
        .arg("umask 000 && exec \"$0\" \"$@\"")
        .arg(crate::binary::BIN)
        .args(args)
        .env_remove("HIERAD_SERVER")
        .current_dir(crate::binary::ROOT)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Exported files hold every password: they were 0644 (0666 under umask
/// 000). Files are 0600 and new folders 0700, whatever the umask; with
/// `--force`, a replaced file keeps its mode and a new one is 0600.
#[test]
fn export_writes_files_0600_and_folders_0700_whatever_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    ok(&["import", "data", "--env", "1", "--db", s(&db)]);
    let out = dir.path().join("out");
    ok_under_umask_000(&["export", "--env", "1", s(&out), "--db", s(&db)]);
    let found = modes(&out);
    assert!(found.len() > 4, "{found:?}");
    for (rel, mode) in &found {
        let want = if out.join(rel).is_dir() { 0o700 } else { 0o600 };
        assert_eq!(*mode, want, "{rel:?} is {mode:o}");
    }
    // Into a non-empty folder: a replaced file keeps its mode, the new
    // ones are 0600, and no staging folder is left behind.
    let again = dir.path().join("again");
    std::fs::create_dir_all(&again).unwrap();
    std::fs::set_permissions(&again, PermissionsExt::from_mode(0o750)).unwrap();
    std::fs::write(again.join("astute.yaml"), "old: 1\n").unwrap();
    std::fs::set_permissions(again.join("astute.yaml"), PermissionsExt::from_mode(0o640)).unwrap();
    ok_under_umask_000(&["export", "--env", "1", s(&again), "--db", s(&db), "--force"]);
    for (rel, mode) in modes(&again) {
        let want = match rel.as_str() {
            "" => 0o750,
            "astute.yaml" => 0o640,
            _ if again.join(&rel).is_dir() => 0o700,
            _ => 0o600,
        };
        assert_eq!(mode, want, "{rel:?} is {mode:o}");
        assert!(!rel.starts_with('.'), "{rel:?} left behind");
    }
}

/// A resource name too long for a file (stored before such names were
/// refused) made `export` fail halfway, "File name too long", leaving
/// the files before it written. The tree is written whole in a staging
/// folder first: a failure leaves the target as it was, absent or with
/// only its own files, and no staging folder behind.
#[test]
fn a_failed_export_leaves_nothing_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    ok(&["import", "data", "--env", "1", "--db", s(&db)]);
    let long = format!("zzz{}", "z".repeat(297));
    let conn = rusqlite::Connection::open(&db).unwrap();
    // heads refers to documents: both renamed, so the checks wait.
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    for table in ["documents", "heads"] {
        conn.execute(
            &format!("UPDATE {table} SET resource = ?1 WHERE resource = 'globals'"),
            [&long],
        )
        .unwrap();
    }
    conn.execute(
        "UPDATE resource_definitions SET name = ?1 WHERE name = 'globals'",
        [&long],
    )
    .unwrap();
    drop(conn);
    let out = dir.path().join("out");
    let err = failing(&["export", "--env", "1", s(&out), "--db", s(&db)]);
    assert!(err.contains("File name too long"), "{err}");
    assert!(!out.exists(), "a half-written export was left");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // With --force into a folder holding a file of its own.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("mine.txt"), "x").unwrap();
    let err = failing(&["export", "--env", "1", s(&out), "--db", s(&db), "--force"]);
    assert!(err.contains("File name too long"), "{err}");
    let names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["mine.txt"]);
}

/// A Hiera 5 environment with one module layer, and a place outside it.
fn environment5(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let config = "version: 5\nhierarchy:\n  - {name: common, path: common.yaml}\n";
    let env = dir.join("env");
    let outside = dir.join("outside");
    for d in [
        env.join("data"),
        env.join("modules/m1/data"),
        outside.join("data"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    for (file, text) in [
        ("env/hiera.yaml", config),
        ("env/data/common.yaml", "a: 1\n"),
        ("env/modules/m1/hiera.yaml", config),
        ("env/modules/m1/data/common.yaml", "m1::a: 1\n"),
        ("outside/hiera.yaml", config),
        ("outside/data/common.yaml", "m2::secret: s3cret\n"),
    ] {
        std::fs::write(dir.join(file), text).unwrap();
    }
    (env, outside)
}

#[test]
fn import_environment_follows_no_link_inside_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let (env, outside) = environment5(dir.path());
    let db = dir.path().join("h.db");
    let import =
        |env: &Path| failing(&["import-environment", s(env), "--env", "5", "--db", s(&db)]);
    // A module that is a link to a module elsewhere.
    symlink(&outside, env.join("modules/m2")).unwrap();
    let err = import(&env);
    let link = env.join("modules/m2");
    assert!(
        err.contains(&format!(
            "{}: a symbolic link to {}",
            link.display(),
            outside.display()
        )),
        "{err}"
    );
    std::fs::remove_file(&link).unwrap();
    // A module's hiera.yaml, or a datadir, that is a link.
    for (at, to) in [("modules/m1/hiera.yaml", "hiera.yaml"), ("data", "data")] {
        let at = env.join(at);
        let kept = dir.path().join("kept");
        std::fs::rename(&at, &kept).unwrap();
        symlink(outside.join(to), &at).unwrap();
        let err = import(&env);
        assert!(
            err.contains(&format!("{}: a symbolic link to", at.display())),
            "{err}"
        );
        std::fs::remove_file(&at).unwrap();
        std::fs::rename(&kept, &at).unwrap();
    }
    // A FIFO in a module's data is named once, without blocking.
    let fifo = env.join("modules/m1/data/extra.yaml");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let err = import(&env);
    let why = format!(
        "{} is a FIFO (named pipe), not a regular file",
        fifo.display()
    );
    assert_eq!(err.matches(&why).count(), 1, "{err}");
    std::fs::remove_file(&fifo).unwrap();
    // Nothing was written by the refusals; the clean tree imports.
    ok(&["import-environment", s(&env), "--env", "5", "--db", s(&db)]);
}
