//! The two implementations of [`ConfigOps`] answer alike: the same script
//! of operations runs on a [`Local`] store and on a [`Remote`] server (in
//! this process, on 127.0.0.1:0) and must observe the same things.

use super::*;
use crate::configdb::unparsed::{Content, Unparsed};
use crate::configdb::{DocKind, LevelPath};
use crate::rhash;
use crate::server::{self, AppState};
use crate::settings::Settings;
use crate::store::{SqliteStore, Store};
use std::sync::Arc;

fn memory_store() -> Arc<dyn Store> {
    Arc::new(SqliteStore::open_in_memory().unwrap())
}

/// A server over a fresh in-memory store, stopped when dropped.
struct InProcessServer {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InProcessServer {
    fn start() -> InProcessServer {
        let state = AppState::new(memory_store(), Settings::default()).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let shutdown = async move {
                    let _ = stopped.await;
                };
                server::serve(listener, state, None, shutdown)
                    .await
                    .unwrap();
            });
        });
        InProcessServer {
            url,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for InProcessServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn file(resource: &str, content: crate::hiera::Hash) -> TreeFile {
    TreeFile {
        resource: resource.to_owned(),
        path: format!("{resource}.yaml").into(),
        content: Content::Data(content),
    }
}

/// Runs the script; every observation as a line of text.
fn script(ops: &dyn ConfigOps) -> Vec<String> {
    let mut seen = Vec::new();
    let mut note = |what: &str, text: String| seen.push(format!("{what}: {text}"));
    let node = LevelPath::parse_cli("nodes=n1").unwrap();
    let root_astute = DocAddress::new(7, LevelPath::root(), "astute", DocKind::Values);
    let node_astute = DocAddress::new(7, node.clone(), "astute", DocKind::Overrides);
    let versions = |v: Result<Vec<Version>>| match v {
        Ok(v) => format!(
            "{:?}",
            v.iter()
                .map(|v| (v.number, v.size, v.deleted))
                .collect::<Vec<_>>()
        ),
        Err(e) => format!("error {e}"),
    };

    note("missing", format!("{:?}", ops.environment(7).unwrap()));
    let levels = vec![
        (
            LevelPath::root(),
            vec![
                file("astute", rhash! {"a" => 1, "x" => rhash! {"z" => 0}}),
                file("globals", rhash! {"g" => "G"}),
            ],
        ),
        (node.clone(), vec![file("astute", rhash! {"b" => 2})]),
    ];
    let import = TreeImport {
        env: 7,
        levels: &levels,
        kind: DocKind::Values,
        replace: true,
        register: false,
        new_env: NewEnv {
            hiera: crate::configdb::HieraVersion::Three,
            levels: vec!["nodes".to_owned()],
            component: "c".to_owned(),
        },
        define_up_front: false,
    };
    let accept = |_: &Environment| Ok(());
    note(
        "import",
        format!("{:?}", import_tree(ops, &import, &accept).unwrap()),
    );
    note(
        "re-import",
        format!("{:?}", import_tree(ops, &import, &accept).unwrap()),
    );
    let refuse = |env: &Environment| Err(OpsError::Refused(format!("{} exists", env.id)));
    note(
        "refused",
        format!("{}", import_tree(ops, &import, &refuse).unwrap_err()),
    );
    let env = ops.environment(7).unwrap().unwrap();
    note("levels", format!("{:?}", env.hierarchy_levels));
    note("names", format!("{:?}", ops.resource_names(7).unwrap()));
    ops.set_key(
        &root_astute,
        &KeyPath::parse("x.y").unwrap(),
        &Value::Int(3),
    )
    .unwrap();
    ops.put(&node_astute, &rhash! {"a" => "over"}).unwrap();
    note(
        "effective",
        format!("{:?}", ops.effective(7, &node, "astute").unwrap()),
    );
    note(
        "stored",
        format!("{:?}", ops.stored(&root_astute, None).unwrap()),
    );
    note("history", versions(ops.history(&root_astute)));
    let restored = ops.restore(&root_astute, 1).unwrap();
    note(
        "restored",
        format!("{:?}", (restored.number, restored.deleted)),
    );
    note(
        "version 1",
        format!("{:?}", ops.stored(&root_astute, Some(1)).unwrap()),
    );
    ops.delete(&node_astute).unwrap();
    note("deleted", versions(ops.history(&node_astute)));
    note(
        "after delete",
        format!("{:?}", ops.effective(7, &node, "astute").unwrap()),
    );
    for (what, failed) in [
        ("unknown env", ops.effective(9, &node, "astute").map(|_| ())),
        (
            "unknown resource",
            ops.stored(
                &DocAddress::new(7, LevelPath::root(), "nope", DocKind::Values),
                None,
            )
            .map(|_| ()),
        ),
        (
            "unknown version",
            ops.stored(&root_astute, Some(99)).map(|_| ()),
        ),
        ("restore a marker", ops.restore(&node_astute, 2).map(|_| ())),
        ("delete twice", ops.delete(&node_astute)),
        (
            "bad key",
            ops.set_key(&root_astute, &KeyPath::parse("a.b").unwrap(), &Value::Nil),
        ),
    ] {
        note(what, format!("{}", failed.unwrap_err()));
    }
    registers(ops, &mut note);
    kept_files(ops, &mut note);
    seen
}

/// A data file that does not parse, imported and kept (configdb/unparsed.rs),
/// and one sent as unparsed that does parse (stored as its data); reads
/// of the kept one fail with Hiera's error, a write repairs it.
fn kept_files(ops: &dyn ConfigOps, note: &mut dyn FnMut(&str, String)) {
    let n4 = LevelPath::parse_cli("nodes=n4").unwrap();
    let kept = |resource: &str, text: &str| TreeFile {
        resource: resource.to_owned(),
        path: format!("data/{resource}.yaml").into(),
        content: Content::File(Unparsed {
            path: format!("data/{resource}.yaml"),
            bytes: text.as_bytes().to_vec(),
        }),
    };
    let import = vec![(
        n4.clone(),
        vec![kept("globals", "g: [1\n"), kept("astute", "a: fine\n")],
    )];
    let imported = ops.import(7, &import, DocKind::Values, false, false);
    note("kept", format!("{imported:?}"));
    let globals = DocAddress::new(7, n4.clone(), "globals", DocKind::Values);
    let astute = DocAddress::new(7, n4.clone(), "astute", DocKind::Values);
    let read = ops.effective(7, &n4, "globals").map(|_| ());
    note("kept read", format!("{}", read.unwrap_err()));
    note(
        "kept stored",
        format!("{}", ops.stored(&globals, None).unwrap_err()),
    );
    note("parsed", format!("{:?}", ops.stored(&astute, None)));
    note("kept file", format!("{:?}", ops.kept_file(&globals)));
    note("no kept file", format!("{:?}", ops.kept_file(&astute)));
    note(
        "root",
        format!("{:?}", ops.effective(7, &LevelPath::root(), "globals")),
    );
    ops.put(&globals, &rhash! {"g" => 1}).unwrap();
    note(
        "repaired",
        format!("{:?}", ops.effective(7, &n4, "globals")),
    );
}

/// The register operations, and what a register refuses.
fn registers(ops: &dyn ConfigOps, note: &mut dyn FnMut(&str, String)) {
    let names = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let other = LevelPath::parse_cli("nodes=n2").unwrap();
    note("no register", format!("{:?}", ops.register(7, "nodes")));
    let added = ops.add_to_register(7, "nodes", &names(&["n1", "n3"]));
    note("added", format!("{added:?}"));
    note("register", format!("{:?}", ops.register(7, "nodes")));
    let refused = ops.effective(7, &other, "astute").map(|_| ());
    note("unregistered", format!("{}", refused.unwrap_err()));
    let at = DocAddress::new(7, other.clone(), "astute", DocKind::Values);
    let refused = ops.put(&at, &rhash! {"x" => 1});
    note("unregistered write", format!("{}", refused.unwrap_err()));
    let import = vec![(other.clone(), vec![file("astute", rhash! {"n" => 2})])];
    let refused = ops.import(7, &import, DocKind::Values, false, false);
    note("unregistered import", format!("{}", refused.unwrap_err()));
    let imported = ops.import(7, &import, DocKind::Values, false, true);
    note("import --register", format!("{imported:?}"));
    let removed = ops.remove_from_register(7, "nodes", &names(&["n3", "n9"]));
    note("removed", format!("{removed:?}"));
    ops.set_register(7, "nodes", Some(&names(&["n5"]))).unwrap();
    note("set", format!("{:?}", ops.register(7, "nodes")));
    ops.set_register(7, "nodes", None).unwrap();
    note("cleared", format!("{:?}", ops.register(7, "nodes")));
    let bad = ops.add_to_register(7, "racks", &names(&["r"]));
    note("bad level", format!("{}", bad.unwrap_err()));
}

#[test]
fn local_and_remote_operations_agree() {
    let local = script(&Local::new(memory_store()));
    let server = InProcessServer::start();
    let remote = script(
        &Remote::connect(
            &server.url,
            remote::Timeouts::default(),
            remote::ClientAuth::default(),
        )
        .unwrap(),
    );
    assert_eq!(local, remote);
    // The script saw what it should (not two identical failures).
    let expect = [
        "missing: None",
        "import: ImportSummary { written: 3, unchanged: 0, deleted: 0, defined: [\"astute\", \"globals\"], unparsed: [] }",
        "re-import: ImportSummary { written: 0, unchanged: 3, deleted: 0, defined: [], unparsed: [] }",
        "refused: 7 exists",
        "levels: [\"nodes\"]",
        "names: [\"astute\", \"globals\"]",
        "restored: (3, false)",
        "no register: Ok(None)",
        "added: Ok(2)",
        "register: Ok(Some([\"n1\", \"n3\"]))",
        "import --register: Ok(ImportSummary { written: 1, unchanged: 0, deleted: 0, defined: [], unparsed: [] })",
        "removed: Ok(1)",
        "set: Ok(Some([\"n5\"]))",
        "cleared: Ok(None)",
        "kept: Ok(ImportSummary { written: 2, unchanged: 0, deleted: 0, defined: [], unparsed: [KeptFile { resource: \"globals\", path: \"data/globals.yaml\", class: \"Psych::SyntaxError\", message: \"(<unknown>): did not find expected ',' or ']' while parsing a flow sequence at line 1 column 4\" }] })",
        "kept read: the values of resource \"globals\" at nodes=n4 of environment 7 (version 1) holds data/globals.yaml as imported, which does not parse: Psych::SyntaxError: (<unknown>): did not find expected ',' or ']' while parsing a flow sequence at line 1 column 4; Hiera fails every lookup that reads it. Write the document again (import the fixed file, or PUT the values) to repair it",
        "parsed: Ok({String(\"a\"): String(\"fine\")})",
        "kept file: Ok(Some(Unparsed { path: \"data/globals.yaml\", bytes: [103, 58, 32, 91, 49, 10] }))",
        "no kept file: Ok(None)",
        "root: Ok({String(\"g\"): String(\"G\")})",
        "repaired: Ok({String(\"g\"): Int(1)})",
    ];
    for line in expect {
        assert!(local.iter().any(|l| l == line), "{line}\n{local:#?}");
    }
    assert!(
        local
            .iter()
            .any(|l| l.starts_with("unknown env: environment 9")),
        "{local:#?}"
    );
    for refused in [
        "unregistered: Cannot find a node",
        "unregistered write: Cannot find a node",
        "unregistered import: Cannot find a node",
    ] {
        assert!(
            local.iter().any(|l| l.starts_with(refused)),
            "{refused}\n{local:#?}"
        );
    }
}
