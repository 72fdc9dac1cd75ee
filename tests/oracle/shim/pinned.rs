//! The Hiera 3 backend's `:tag:` and `:generation:` settings: `hiera`
//! with the hierad backend pinned to a tag answers what the real `hiera`
//! answers over the YAML files as they were when the tag was made, and
//! unpinned what it answers over the files now; beside another backend
//! too (the datasources read as of the tag).

use super::env::{ENV, Hierad};
use super::oracle::{Job, run_hiera};
use serde_json::json;
use std::path::Path;

fn write(dir: &Path, common: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("common.yaml"), common).unwrap();
}

#[test]
fn hiera_pinned_to_a_tag_answers_as_hiera_over_the_files_of_then() {
    let hierad = Hierad::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("old"), "k: old\nlist: [a, b]\nh: {x: 1}\n");
    write(&d.join("new"), "k: new\nlist: [c]\nh: {x: 2, y: 3}\n");
    assert!(hierad.import_dir(&d.join("old"), "datadir=n1").is_empty());
    let tag = hierad.expect("POST", "/api/v1/tags", json!({"name": "deploy-1"}), 201);
    let generation = tag["generation"].as_u64().unwrap();
    assert!(hierad.import_dir(&d.join("new"), "datadir=n1").is_empty());
    for (name, backend) in [
        (
            "old",
            format!(
                ":backends: [yaml]\n:yaml:\n  :datadir: {}\n",
                d.join("old").display()
            ),
        ),
        (
            "new",
            format!(
                ":backends: [yaml]\n:yaml:\n  :datadir: {}\n",
                d.join("new").display()
            ),
        ),
        (
            "tagged",
            format!("{}  :tag: deploy-1\n", hierad_section(&hierad)),
        ),
        (
            "pinned",
            format!("{}  :generation: {generation}\n", hierad_section(&hierad)),
        ),
        ("latest", hierad_section(&hierad)),
        // Beside another backend, the datasources are read as of the tag.
        (
            "beside",
            format!(
                "{}  :tag: deploy-1\n:yaml:\n  :datadir: {}\n",
                hierad_section(&hierad).replace("[hierad]", "[hierad, yaml]"),
                d.join("none").display()
            ),
        ),
    ] {
        let config = format!("{backend}:hierarchy:\n  - common\n");
        std::fs::write(d.join(format!("{name}.yaml")), config).unwrap();
    }
    let configs = ["old", "new", "tagged", "pinned", "latest", "beside"];
    let lookups: &[&[&str]] = &[&["k"], &["-a", "list"], &["-h", "h"]];
    let mut jobs = Vec::new();
    for lookup in lookups {
        for config in configs {
            let mut args = vec![
                "-c".to_owned(),
                format!("{config}.yaml"),
                "-f".to_owned(),
                "json".to_owned(),
            ];
            args.extend(lookup.iter().map(|a| (*a).to_owned()));
            jobs.push(Job {
                args,
                dir: d.to_owned(),
                columns: None,
            });
        }
    }
    let outcomes = run_hiera(&jobs);
    for (i, lookup) in lookups.iter().enumerate() {
        let of = |config: &str| {
            let at = configs.iter().position(|c| *c == config).unwrap();
            let o = &outcomes[i * configs.len() + at];
            assert_eq!(o.status, 0, "{lookup:?} {config}: {o:?}");
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        assert_ne!(of("old"), of("new"), "{lookup:?}: the two trees differ");
        assert_eq!(of("tagged"), of("old"), "{lookup:?} at the tag");
        assert_eq!(
            of("pinned"),
            of("old"),
            "{lookup:?} at generation {generation}"
        );
        assert_eq!(of("latest"), of("new"), "{lookup:?} unpinned");
        assert_eq!(
            of("beside"),
            of("old"),
            "{lookup:?} at the tag, beside yaml"
        );
    }
}

/// The `:hierad:` section over `hierad`'s environment at `datadir=n1`.
fn hierad_section(hierad: &Hierad) -> String {
    format!(
        ":backends: [hierad]\n:hierad:\n  :url: {}\n  :environment: {ENV}\n  :level: datadir=n1\n",
        hierad.url()
    )
}
