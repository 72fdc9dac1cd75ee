//! The two implementations of [`ConfigOps`] answer alike: the same script
//! of operations runs on a [`Local`] store and on a [`Remote`] server (in
//! this process, on 127.0.0.1:0) and must observe the same things.

use super::*;
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
        content,
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
    seen
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
        "import: ImportSummary { written: 3, unchanged: 0, deleted: 0, defined: [\"astute\", \"globals\"] }",
        "re-import: ImportSummary { written: 0, unchanged: 3, deleted: 0, defined: [] }",
        "refused: 7 exists",
        "levels: [\"nodes\"]",
        "names: [\"astute\", \"globals\"]",
        "restored: (3, false)",
        "no register: Ok(None)",
        "added: Ok(2)",
        "register: Ok(Some([\"n1\", \"n3\"]))",
        "import --register: Ok(ImportSummary { written: 1, unchanged: 0, deleted: 0, defined: [] })",
        "removed: Ok(1)",
        "set: Ok(Some([\"n5\"]))",
        "cleared: Ok(None)",
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
