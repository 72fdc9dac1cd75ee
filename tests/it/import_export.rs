//! `hierad import` and `hierad export` without the oracle: imports are all
//! or nothing (a file that cannot be read writes nothing, not even the
//! environment; one Hiera cannot parse is kept, tests/it/unparsed.rs),
//! `--replace` makes a level hold exactly a tree, and `export` refuses a
//! non-empty folder. The round trips judged by the real Hiera are in
//! tests/oracle/round_trip.rs.

use std::path::{Path, PathBuf};

use crate::binary::{ROOT, ok, refused as failing, run as hierad};

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

fn data(rel: &str) -> PathBuf {
    Path::new(ROOT).join("data").join(rel)
}

/// The history of one document, as `get --version` sees it: the highest
/// version that exists.
fn latest_version(db: &Path, env: &str, level: &str, resource: &str) -> Option<u64> {
    (1..50)
        .take_while(|n| {
            let line = format!(
                "config get --env {env} --level {level} --resource {resource} --version {n} --db {}",
                db.display()
            );
            hierad(&line).status.success()
        })
        .last()
}

/// A database holding environment 2, and a tree whose
/// override/plugins.json is not UTF-8 (refused: Ruby's JSON would take
/// it apart), beside a good one.
struct Scratch {
    dir: tempfile::TempDir,
    db: PathBuf,
    tree: PathBuf,
}

fn scratch() -> Scratch {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let tree = dir.path().join("tree");
    copy(&data("astute.yaml"), &tree.join("astute.yaml"));
    copy(&data("globals.yaml"), &tree.join("globals.yaml"));
    std::fs::create_dir_all(tree.join("override")).unwrap();
    std::fs::write(tree.join("override/plugins.json"), b"{\"a\": \"caf\xe9\"}").unwrap();
    ok(&format!("import data --env 2 --db {}", db.display()));
    Scratch { dir, db, tree }
}

impl Scratch {
    /// A tree of two good files, imported at nodes=n1 of environment 3.
    fn good_at_n1_of_3(&self) -> PathBuf {
        let good = self.dir.path().join("good");
        copy(&data("astute.yaml"), &good.join("astute.yaml"));
        copy(&data("globals.yaml"), &good.join("globals.yaml"));
        ok(&format!(
            "import {} --env 3 --level nodes=n1 --db {}",
            good.display(),
            self.db.display()
        ));
        good
    }
}

#[test]
fn a_broken_file_creates_not_even_the_environment() {
    let Scratch { db, tree, .. } = &scratch();
    let err = failing(&format!(
        "import {} --env 3 --db {}",
        tree.display(),
        db.display()
    ));
    assert!(
        err.contains("override/plugins.json: not UTF-8 text"),
        "{err}"
    );
    let err = failing(&format!(
        "config get --env 3 --resource astute --db {}",
        db.display()
    ));
    assert_eq!(err, "environment 3 does not exist");
}

/// An existing environment with data: --replace of a broken tree
/// changes nothing either.
#[test]
fn a_broken_tree_replaces_nothing_in_an_existing_level() {
    let scratch = scratch();
    let Scratch { db, tree, .. } = &scratch;
    scratch.good_at_n1_of_3();
    let before = latest_version(db, "3", "nodes=n1", "astute");
    assert_eq!(before, Some(1));
    std::fs::write(tree.join("astute.yaml"), "deployment_id: 99\n").unwrap();
    let err = failing(&format!(
        "import {} --env 3 --level nodes=n1 --replace --db {}",
        tree.display(),
        db.display()
    ));
    assert!(
        err.contains("override/plugins.json: not UTF-8 text"),
        "{err}"
    );
    assert_eq!(latest_version(db, "3", "nodes=n1", "astute"), before);
    let id = ok(&format!(
        "config get --env 3 --level nodes=n1 --resource astute --key deployment_id --format plain --db {}",
        db.display()
    ));
    assert_eq!(id, "15\n");
}

#[test]
fn a_level_the_environment_lacks_is_refused_before_anything_is_written() {
    let scratch = scratch();
    let good = scratch.good_at_n1_of_3();
    let db = &scratch.db;
    let err = failing(&format!(
        "import {} --env 4 --level racks=r1 --db {}",
        good.display(),
        db.display()
    ));
    assert!(
        err.contains("level \"racks\" is not one of environment 4's levels [nodes]"),
        "{err}"
    );
    failing(&format!(
        "config get --env 4 --resource astute --db {}",
        db.display()
    ));
}

#[test]
fn replace_makes_a_level_hold_exactly_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let tree = dir.path().join("tree");
    copy(&data("astute.yaml"), &tree.join("astute.yaml"));
    copy(
        &data("override/plugins.yaml"),
        &tree.join("override/plugins.yaml"),
    );
    let with = |args: &str| format!("{args} --level nodes=n1 --db {}", db.display());
    let run = |line: String| ok(&line);
    run(with(&format!("import {} --env 5", tree.display())));
    // A user override survives a values re-import.
    run(with(
        "config override --env 5 --resource override/plugins --key extra --value kept",
    ));
    std::fs::remove_file(tree.join("override/plugins.yaml")).unwrap();
    let report = run(with(&format!(
        "import {} --env 5 --replace",
        tree.display()
    )));
    assert!(
        report.contains("0 written, 1 unchanged, 1 deleted"),
        "{report}"
    );
    let stored = run(with(
        "config get --env 5 --resource override/plugins --stored",
    ));
    assert_eq!(stored, "{}\n");
    let effective = run(with("config get --env 5 --resource override/plugins"));
    assert_eq!(effective, "{\n  \"extra\": \"kept\"\n}\n");
    // Without --replace, a missing file leaves its document alone.
    copy(&data("globals.yaml"), &tree.join("globals.yaml"));
    run(with(&format!("import {} --env 5", tree.display())));
    std::fs::remove_file(tree.join("globals.yaml")).unwrap();
    let report = run(with(&format!("import {} --env 5", tree.display())));
    assert!(
        report.contains("0 written, 1 unchanged, 0 deleted"),
        "{report}"
    );
}

#[test]
fn export_refuses_a_non_empty_folder() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    ok(&format!("import data --env 1 --db {}", db.display()));
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("astute.yaml"), "old: 1\n").unwrap();
    let err = failing(&format!(
        "export --env 1 {} --db {}",
        out.display(),
        db.display()
    ));
    assert!(err.contains("is not empty"), "{err}");
    assert_eq!(
        std::fs::read_to_string(out.join("astute.yaml")).unwrap(),
        "old: 1\n"
    );
    ok(&format!(
        "export --env 1 {} --db {} --force",
        out.display(),
        db.display()
    ));
    let astute = std::fs::read_to_string(out.join("astute.yaml")).unwrap();
    assert!(astute.starts_with("---\n"), "{astute}");
    assert!(!astute.contains("old: 1"));
    // Unknown environment or level: one line, exit 1.
    let empty = dir.path().join("empty");
    let err = failing(&format!(
        "export --env 2 {} --db {}",
        empty.display(),
        db.display()
    ));
    assert_eq!(err, "environment 2 does not exist");
    let err = failing(&format!(
        "export --env 1 --level role=x {} --db {}",
        empty.display(),
        db.display()
    ));
    assert!(
        err.contains("level \"role\" is not one of environment 1's levels"),
        "{err}"
    );
}

/// A resource named with a segment that starts with `.` is refused now
/// (`configdb::model::tests::names`): an import of a tree skips hidden
/// files, so an export and `import --replace` deleted it. A database that
/// holds one from before is exported with a warning naming it.
#[test]
fn hidden_resource_names_are_warned_of_on_export() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    ok(&format!("import data --env 1 --db {}", db.display()));
    // As a database from before the rule holds it.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "PRAGMA foreign_keys = OFF;
         UPDATE resource_definitions SET name = '.astute' WHERE name = 'astute';
         UPDATE documents SET resource = '.astute' WHERE resource = 'astute';
         UPDATE heads SET resource = '.astute' WHERE resource = 'astute';",
    )
    .unwrap();
    drop(conn);
    let out = dir.path().join("out");
    let report = ok(&format!(
        "export --env 1 {} --db {}",
        out.display(),
        db.display()
    ));
    assert!(
        report.contains("warning: 1 resource(s) written as hidden files")
            && report.contains(".astute"),
        "{report}"
    );
    assert!(out.join(".astute.yaml").is_file());
}
