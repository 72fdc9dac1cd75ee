//! The shim's own Ruby tests (hiera/test/*_test.rb, minitest), in one Ruby
//! process, once with each JSON parser of the answers.

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
    // Once with each JSON parser of the answers
    // (hiera/lib/puppet_x/hierad/json_parser.rb).
    for parser in ["json", "oj"] {
        let out = crate::tools::command("ruby")
            .arg("-I")
            .arg(root.join("hiera/lib"))
            .arg("-I")
            .arg(root.join("hiera/test"))
            .arg("-e")
            .arg("ARGV.dup.each { |f| require f }; ARGV.clear")
            .args(&files)
            .env("LC_ALL", "C.UTF-8")
            .env("HIERAD_SHIM_JSON", parser)
            .output()
            .expect("run ruby");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let summary = stdout
            .lines()
            .find(|l| l.contains(" runs, "))
            .unwrap_or("no summary");
        eprintln!("{parser}: {summary}");
        assert!(
            out.status.success() && summary.ends_with("0 failures, 0 errors, 0 skips"),
            "{parser}: {stdout}\n{stderr}"
        );
    }
}
