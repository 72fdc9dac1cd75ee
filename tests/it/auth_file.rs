//! The auth file: `hierad auth`'s edits run at the same time
//! (a deployment tool adding a token per Puppet master in parallel) each
//! keep their entry, none lost to another's rewrite; and a running server
//! follows the file's changes without a signal.

use crate::binary;
use crate::server::{TestServer, call};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn concurrent_edits_keep_every_entry() {
    const N: usize = 12;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auth.toml");
    let f = file.to_str().unwrap();
    let pw = dir.path().join("pw");
    std::fs::write(&pw, "Edit-pw-3x\n").unwrap();
    let children: Vec<_> = (0..N)
        .map(|i| {
            let name = format!("m{i}");
            let mut command = if i % 2 == 0 {
                binary::command(&["auth", "add-token", "--file", f, "--role", "read", &name])
            } else {
                let pw = pw.to_str().unwrap();
                binary::command(&format!(
                    "auth add-user --file {f} --role read --password-file {pw} {name}"
                ))
            };
            command
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let lost: Vec<String> = (0..N)
        .map(|i| format!("name = \"m{i}\""))
        .filter(|entry| !text.contains(entry.as_str()))
        .collect();
    assert!(lost.is_empty(), "lost {lost:?}:\n{text}");
}

/// The status of `GET /api/v1/config/environments` with `bearer`.
fn status(url: &str, bearer: &str) -> u16 {
    call(
        "GET",
        &format!("{url}/api/v1/config/environments"),
        None,
        &[("authorization", bearer)],
    )
    .status
}

/// The server takes the file's changes without a signal: a revoked token
/// is refused, a new one let in, and an edit that breaks the file leaves
/// the old one in force (logged) until it is mended.
#[test]
fn the_server_follows_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auth.toml");
    let f = file.to_str().unwrap();
    let token = |name: &str| {
        let out = binary::ok(&["auth", "add-token", "--file", f, "--role", "read", name]);
        format!("Bearer {}", out.trim())
    };
    let (kept, gone) = (token("kept"), token("gone"));
    let mut server =
        TestServer::start_logging(&dir.path().join("hierad.db"), &["--auth", f], "info");
    let get = |bearer: &str| status(&server.url, bearer);
    // Waits (bounded) until `bearer` gets `status`.
    let becomes = |bearer: &str, status: u16| {
        let start = Instant::now();
        while get(bearer) != status {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "still not {status} after 20 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    assert_eq!(get(&gone), 200);
    binary::ok(&["auth", "revoke-token", "--file", f, "gone"]);
    becomes(&gone, 401);
    let new = token("new");
    becomes(&new, 200);
    // A broken edit: logged, the old file stays in force.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}\n[[token\n")).unwrap();
    let start = Instant::now();
    while !server.log().contains("the auth file was not reloaded") {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(get(&kept), 200);
    assert_eq!(get(&gone), 401);
    std::fs::write(&file, text).unwrap();
    binary::ok(&["auth", "revoke-token", "--file", f, "kept"]);
    becomes(&kept, 401);
    assert_eq!(get(&new), 200);
    server.stop();
}

/// A file that lets nobody in is logged as a warning naming the file, at
/// start and at each reload that leaves it so (it used to say only
/// "reloaded the auth file"); `hierad auth list` says it too.
#[test]
fn an_auth_file_that_lets_nobody_in_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auth.toml");
    let f = file.to_str().unwrap();
    std::fs::write(&file, "").unwrap();
    let warning = "the auth file lets nobody in";
    let listed = binary::command(&["auth", "list", "--file", f])
        .output()
        .unwrap();
    assert!(listed.status.success());
    assert!(
        String::from_utf8_lossy(&listed.stderr).contains(warning),
        "{listed:?}"
    );
    let mut server =
        TestServer::start_logging(&dir.path().join("hierad.db"), &["--auth", f], "info");
    let warned = |times: usize| {
        let start = Instant::now();
        loop {
            let log = server.log();
            let lines = log
                .lines()
                .filter(|l| l.contains("WARN") && l.contains(warning) && l.contains(f))
                .count();
            if lines >= times {
                return;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "{log}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    warned(1);
    binary::ok(&["auth", "add-token", "--file", f, "--role", "read", "t"]);
    binary::ok(&["auth", "revoke-token", "--file", f, "t"]);
    warned(2);
    server.stop();
}

/// A FIFO where the auth file should be is refused at once, never waited
/// on: by `hierad serve` at start, by `hierad auth`, and by the reload of
/// a running server, which goes on following the file once it is mended
/// (a read waiting on the FIFO would hold the reload for good).
#[test]
fn a_fifo_for_the_auth_file_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.toml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let db = dir.path().join("hierad.db");
    let (fifo_s, db_s) = (fifo.to_str().unwrap(), db.to_str().unwrap());
    let why = "it is a FIFO (named pipe), not a regular file";
    let line = binary::refused(&format!(
        "serve --listen 127.0.0.1:0 --db {db_s} --auth {fifo_s}"
    ));
    assert_eq!(line, format!("cannot read the auth file {fifo_s}: {why}"));
    let line = binary::refused(&["auth", "add-token", "--file", fifo_s, "--role", "read", "x"]);
    assert_eq!(line, format!("cannot read the auth file {fifo_s}: {why}"));

    let file = dir.path().join("auth.toml");
    let f = file.to_str().unwrap();
    let token = |name: &str| {
        let out = binary::ok(&["auth", "add-token", "--file", f, "--role", "read", name]);
        format!("Bearer {}", out.trim())
    };
    let first = token("first");
    let mut server = TestServer::start_logging(&db, &["--auth", f], "info");
    let get = |bearer: &str| status(&server.url, bearer);
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::rename(&fifo, &file).unwrap();
    let start = Instant::now();
    while !server.log().contains(why) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        server.log().contains("the auth file was not reloaded"),
        "{}",
        server.log()
    );
    assert_eq!(get(&first), 200);
    // Mended: a regular file again, with a second token.
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, text).unwrap();
    let second = token("second");
    let start = Instant::now();
    while get(&second) != 200 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    server.stop();
}

/// `hierad auth list` shows who the file lets in, never a hash, and
/// refuses, naming the problem, a file a server would refuse.
#[test]
fn the_file_is_listed_and_checked_as_the_server_loads_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auth.toml");
    let f = file.to_str().unwrap();
    let pw = dir.path().join("pw");
    std::fs::write(&pw, "List-pw-8q\n").unwrap();
    let p = pw.to_str().unwrap();
    let add_ops = || {
        binary::ok(&format!(
            "auth add-user --file {f} --role write --password-file {p} ops"
        ))
    };
    add_ops();
    binary::ok(&format!(
        "auth add-token --file {f} --role read --env 4 --expires 90d ci"
    ));
    let listed = binary::ok(&["auth", "list", "--file", f]);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert_eq!(lines[0], "user ops: write");
    assert!(
        lines[1].starts_with("token ci: read, environments 4, expires "),
        "{listed}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("$argon2id$") && text.contains("sha256"));
    assert!(
        !listed.contains("argon2") && !listed.contains("sha256"),
        "{listed}"
    );
    // A user removed; an unknown one named with those there are.
    let removed = binary::ok(&["auth", "remove-user", "--file", f, "ops"]);
    assert!(removed.contains("removed the user \"ops\""), "{removed}");
    let listed = binary::ok(&["auth", "list", "--file", f]);
    assert!(
        listed.starts_with("token ci: ") && !listed.contains("user"),
        "{listed}"
    );
    assert_eq!(
        binary::refused(&["auth", "remove-user", "--file", f, "ops"]),
        "no user is named \"ops\" (the users: none)"
    );
    add_ops();
    let text = std::fs::read_to_string(&file).unwrap();

    // A Keystone password file that cannot be read: refused as the
    // server refuses it at start.
    std::fs::write(
        &file,
        format!(
            "{text}\n[keystone]\nurl = \"http://127.0.0.1:9/v3\"\nuser = \"hierad\"\n\
             password_file = \"{}/absent\"\nproject = \"service\"\n[keystone.roles]\nreader = \"read\"\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let line = binary::refused(&["auth", "list", "--file", f]);
    assert!(
        line.starts_with(&format!(
            "the auth file {f}: cannot read keystone.password_file"
        )) && line.contains("No such file"),
        "{line}"
    );
    let db = dir.path().join("hierad.db");
    let served = binary::refused(&format!(
        "serve --listen 127.0.0.1:0 --db {} --auth {f}",
        db.display()
    ));
    assert_eq!(served, line);
}

/// A SIGHUP reloads a changed file once: the next look at the disk does
/// not load it again, which would empty the caches of verified passwords
/// and Keystone validations for nothing (each reload starts them anew).
#[test]
fn a_sighup_reload_is_not_repeated_by_the_next_look() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auth.toml");
    let f = file.to_str().unwrap();
    binary::ok(&["auth", "add-token", "--file", f, "--role", "read", "t0"]);
    let mut server =
        TestServer::start_logging(&dir.path().join("hierad.db"), &["--auth", f], "info");
    let count = |why: &str| {
        server
            .log()
            .matches(&format!("reloaded the auth file why=\"{why}\""))
            .count()
    };
    // A look at the disk may fall between the edit and the signal: then
    // the round shows nothing, and another is made.
    for round in 1..=3 {
        let looked = count("changed on disk");
        binary::ok(&format!("auth add-token --file {f} --role read t{round}"));
        let hup = std::process::Command::new("kill")
            .args(["-HUP", &server.pid().to_string()])
            .status()
            .unwrap();
        assert!(hup.success());
        let start = Instant::now();
        while count("SIGHUP") < round {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        if count("changed on disk") != looked {
            continue;
        }
        // Two looks (one every 2 s) and a margin.
        std::thread::sleep(Duration::from_secs(5));
        assert_eq!(count("changed on disk"), looked, "{}", server.log());
        server.stop();
        return;
    }
    panic!(
        "every round's edit was seen before its signal:\n{}",
        server.log()
    );
}
