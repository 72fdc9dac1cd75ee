//! `hierad auth`'s edits of the auth file (issue 10): commands run at the
//! same time (a deployment tool adding a token per Puppet master in
//! parallel) each keep their entry; none is lost to another's rewrite.

use crate::binary;
use std::process::Stdio;

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
