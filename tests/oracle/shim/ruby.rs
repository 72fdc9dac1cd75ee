//! The shim's own Ruby tests (hiera/test/*_test.rb, minitest), in one Ruby
//! process; and the Puppet resources' (puppet/test/*_test.rb).

use super::oracle::ROOT;
use std::path::Path;

#[test]
fn the_shims_ruby_tests_pass() {
    minitest("hiera");
}

#[test]
fn the_puppet_resources_ruby_tests_pass() {
    minitest("puppet");
}

/// Runs every `*_test.rb` of `module`/test in one Ruby, with both
/// modules' lib/ on the load path.
fn minitest(module: &str) {
    let root = Path::new(ROOT);
    let mut files: Vec<String> = std::fs::read_dir(root.join(module).join("test"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("_test.rb"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no tests in {module}/test");
    let out = crate::tools::command("ruby")
        .arg("-I")
        .arg(root.join("hiera/lib"))
        .arg("-I")
        .arg(root.join(module).join("test"))
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
    eprintln!("{module}: {summary}");
    assert!(
        out.status.success() && summary.ends_with("0 failures, 0 errors, 0 skips"),
        "{module}: {stdout}\n{stderr}"
    );
}
