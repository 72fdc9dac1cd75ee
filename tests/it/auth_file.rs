//! The auth file (issue 10): `hierad auth`'s edits run at the same time
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
                binary::command(&[
                    "auth",
                    "add-user",
                    "--file",
                    f,
                    "--role",
                    "read",
                    "--password-file",
                    pw,
                    &name,
                ])
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
    let get = |bearer: &str| {
        call(
            "GET",
            &format!("{}/api/v1/config/environments", server.url),
            None,
            &[("authorization", bearer)],
        )
        .status
    };
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
