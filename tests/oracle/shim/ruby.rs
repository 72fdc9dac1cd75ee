//! The shim's own Ruby tests (hiera/test/*_test.rb, minitest), in one Ruby
//! process.

use super::oracle::ROOT;
use std::path::Path;

#[test]
fn the_shims_ruby_tests_pass() {
    let root = Path::new(ROOT);
    let mut files: Vec<String> = std::fs::read_dir(root.join("hiera/test"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("_test.rb"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.len() >= 3, "only {files:?}");
    let out = crate::tools::command("ruby")
        .arg("-I")
        .arg(root.join("hiera/lib"))
        .arg("-I")
        .arg(root.join("hiera/test"))
        .arg("-e")
        .arg("ARGV.dup.each { |f| require f }; ARGV.clear")
        .args(&files)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("run ruby");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stdout
        .lines()
        .find(|l| l.contains(" runs, "))
        .unwrap_or("no summary");
    eprintln!("{summary}");
    assert!(
        out.status.success() && summary.ends_with("0 failures, 0 errors, 0 skips"),
        "{stdout}\n{stderr}"
    );
}
