//! One test per rule of docs/spec/override-resources.md, each a batch of
//! `puppet apply` runs.

use super::{Applied, Case, apply};
use serde_json::{Value as Json, json};

/// A manifest with a file, a file not named by its path, and notifies;
/// the data then changes what the node gets.
const MANIFEST: &str = r#"
file { '@D/out/a': content => "manifest a\n", mode => '0644' }
file { 'shared': path => '@D/out/shared', content => "manifest shared\n", mode => '0644' }
file { '@D/out/untouched': content => "manifest untouched\n", mode => '0644' }
notify { 'n1': message => 'manifest n1' }
notify { 'n2': message => 'manifest n2' }
include hierad_resources::override
"#;

fn with(configuration: Json, options: Json, defaults: Json) -> Json {
    let mut data = json!({ "configuration": configuration });
    if options != json!(null) {
        data["configuration_options"] = options;
    }
    if defaults != json!(null) {
        data["defaults"] = defaults;
    }
    data
}

fn ok(run: &Applied) {
    assert_eq!(run.outcome.status, 0, "{}", run.show());
    assert!(!run.stderr().contains("Error:"), "{}", run.show());
}

/// Steps 1–3: the resource of the data's type and title is found and
/// gets the data's parameters; a resource of another type with the same
/// title, and resources the data does not name, keep the manifest's.
#[test]
fn the_resource_of_that_type_and_title_is_updated() {
    let configuration = json!({
        "file": {"@D/out/a": {"content": "data a\n", "mode": "0600"}},
        "notify": {"n1": {"message": "data n1"}, "shared": {"message": "data shared"}},
    });
    let runs = apply(vec![
        Case::new(
            "update",
            r#"
file { '@D/out/a': content => "manifest a\n", mode => '0644' }
file { 'shared': path => '@D/out/shared', content => "manifest shared\n", mode => '0644' }
notify { 'n1': message => 'manifest n1' }
notify { 'n2': message => 'manifest n2' }
notify { 'shared': message => 'manifest shared' }
include hierad_resources::override
"#,
            with(configuration.clone(), json!(null), json!(null)),
        ),
        // The same data under a file's title that is not its path: the
        // title is what the data names.
        Case::new(
            "update by title",
            MANIFEST,
            with(
                json!({"file": {"shared": {"content": "data shared\n", "mode": "0640"}}}),
                json!(null),
                json!(null),
            ),
        ),
    ]);
    let run = &runs[0];
    ok(run);
    assert_eq!(
        run.file("a"),
        Some(("data a\n".into(), 0o600)),
        "{}",
        run.show()
    );
    assert_eq!(
        run.file("shared"),
        Some(("manifest shared\n".into(), 0o644)),
        "the notify's data reached the file titled like it: {}",
        run.show()
    );
    let mut notices = run.notices();
    notices.sort();
    assert_eq!(
        notices,
        ["data n1", "data shared", "manifest n2"],
        "{}",
        run.show()
    );
    assert!(
        run.reported("File[@D/out/a]") && run.reported("Notify[n1]"),
        "{}",
        run.show()
    );
    let run = &runs[1];
    ok(run);
    assert_eq!(
        run.file("shared"),
        Some(("data shared\n".into(), 0o640)),
        "{}",
        run.show()
    );
    assert_eq!(
        run.file("a"),
        Some(("manifest a\n".into(), 0o644)),
        "{}",
        run.show()
    );
}

/// Step 4: a resource the catalog lacks is created (`create` defaults to
/// true), in the report like any other; `create: false` creates nothing
/// but still updates.
#[test]
fn a_missing_resource_is_created_unless_create_is_false() {
    let configuration = json!({
        "file": {
            "@D/out/a": {"content": "data a\n"},
            "@D/out/new": {"content": "created\n", "mode": "0600"},
        },
        "notify": {"made": {"message": "created notify"}},
        "exec": {"ran": {"command": "true", "path": ["/bin", "/usr/bin"]}},
    });
    let runs = apply(vec![
        Case::new(
            "default",
            MANIFEST,
            with(configuration.clone(), json!(null), json!(null)),
        ),
        Case::new(
            "create: true",
            MANIFEST,
            with(configuration.clone(), json!({"create": true}), json!(null)),
        ),
        Case::new(
            "create: false",
            MANIFEST,
            with(configuration, json!({"create": false}), json!(null)),
        ),
    ]);
    for run in &runs[..2] {
        ok(run);
        assert_eq!(
            run.file("new"),
            Some(("created\n".into(), 0o600)),
            "{}",
            run.show()
        );
        assert_eq!(run.file("a").unwrap().0, "data a\n", "{}", run.show());
        assert!(
            run.notices().contains(&"created notify".to_owned()),
            "{}",
            run.show()
        );
        for resource in ["File[@D/out/new]", "Notify[made]", "Exec[ran]"] {
            assert!(
                run.reported(resource),
                "{resource} not in the report: {}",
                run.show()
            );
        }
        assert!(
            run.stdout()
                .contains("Exec[ran]/returns: executed successfully"),
            "{}",
            run.show()
        );
    }
    let run = &runs[2];
    ok(run);
    assert_eq!(run.file("new"), None, "{}", run.show());
    assert_eq!(run.file("a").unwrap().0, "data a\n", "{}", run.show());
    for resource in ["File[@D/out/new]", "Notify[made]", "Exec[ran]"] {
        assert!(
            !run.reported(resource),
            "{resource} was created: {}",
            run.show()
        );
    }
    assert!(run.reported("File[@D/out/a]"), "{}", run.show());
}

/// `create` with `types_create_exception` and `titles_create_exception`,
/// every combination: with create true the lists name what is not
/// created, with create false the only things that are; a resource is
/// excepted when its type or its title is listed.
#[test]
fn create_and_its_exception_lists_in_both_senses() {
    let configuration = json!({
        "file": {"@D/out/b": {"content": "b\n"}, "@D/out/c": {"content": "c\n"}},
        "notify": {"x": {"message": "x"}, "y": {"message": "y"}},
    });
    let types = json!(["file"]);
    let titles = json!(["x", "@D/out/b"]);
    let table: [(bool, Json, Json, &[&str]); 8] = [
        (true, json!([]), json!([]), &["b", "c", "x", "y"]),
        (true, types.clone(), json!([]), &["x", "y"]),
        (true, json!([]), titles.clone(), &["c", "y"]),
        (true, types.clone(), json!(["x"]), &["y"]),
        (false, json!([]), json!([]), &[]),
        (false, types.clone(), json!([]), &["b", "c"]),
        (false, json!([]), titles.clone(), &["b", "x"]),
        (false, types, json!(["x"]), &["b", "c", "x"]),
    ];
    let manifest = "notify { 'base': message => 'base' }\ninclude hierad_resources::override\n";
    let cases = table
        .iter()
        .map(|(create, types, titles, _)| {
            let options = json!({
                "create": create,
                "types_create_exception": types,
                "titles_create_exception": titles,
            });
            Case::new(
                "create table",
                manifest,
                with(configuration.clone(), options, json!(null)),
            )
        })
        .collect();
    let runs = apply(cases);
    for (run, (create, types, titles, expected)) in runs.iter().zip(&table) {
        ok(run);
        let made: Vec<&str> = ["b", "c"]
            .into_iter()
            .filter(|f| run.file(f).is_some())
            .chain(
                ["x", "y"]
                    .into_iter()
                    .filter(|n| run.reported(&format!("Notify[{n}]"))),
            )
            .collect();
        assert_eq!(
            &made[..],
            *expected,
            "create {create}, types_create_exception {types}, titles_create_exception {titles}: {}",
            run.show()
        );
        for file in ["b", "c"] {
            assert_eq!(
                run.file(file).is_some(),
                run.reported(&format!("File[@D/out/{file}]")),
                "{}",
                run.show()
            );
        }
    }
}

/// `types_filter` and `titles_filter`: only what they list is processed
/// (updated or created); empty lists filter nothing.
#[test]
fn the_filters_limit_what_is_processed() {
    let configuration = json!({
        "file": {"@D/out/a": {"content": "data a\n"}, "@D/out/b": {"content": "b\n"}},
        "notify": {"n1": {"message": "data n1"}, "x": {"message": "x"}},
    });
    let table: [(Json, Json, &str, bool, &str, bool); 4] = [
        (json!([]), json!([]), "data a\n", true, "data n1", true),
        (
            json!(["notify"]),
            json!([]),
            "manifest a\n",
            false,
            "data n1",
            true,
        ),
        (
            json!([]),
            json!(["n1", "@D/out/b"]),
            "manifest a\n",
            true,
            "data n1",
            false,
        ),
        (
            json!(["file"]),
            json!(["n1", "@D/out/b"]),
            "manifest a\n",
            true,
            "manifest n1",
            false,
        ),
    ];
    let cases = table
        .iter()
        .map(|(types, titles, ..)| {
            let options = json!({"types_filter": types, "titles_filter": titles});
            Case::new(
                "filters",
                MANIFEST,
                with(configuration.clone(), options, json!(null)),
            )
        })
        .collect();
    let runs = apply(cases);
    for (run, (types, titles, a, b, n1, x)) in runs.iter().zip(&table) {
        ok(run);
        let what = format!(
            "types_filter {types}, titles_filter {titles}: {}",
            run.show()
        );
        assert_eq!(run.file("a").unwrap().0, *a, "{what}");
        assert_eq!(run.file("b").is_some(), *b, "{what}");
        assert!(run.notices().contains(&n1.to_string()), "{what}");
        assert_eq!(run.reported("Notify[x]"), *x, "{what}");
    }
}

/// `defaults` go to every updated or created resource of their type,
/// below the data's own parameters; resources the data does not name keep
/// the manifest's values.
#[test]
fn defaults_fill_in_below_the_data() {
    let configuration = json!({
        "file": {
            "@D/out/a": {"content": "data a\n"},
            "@D/out/b": {"mode": "0600"},
        },
        "notify": {"n1": {}, "made": {"message": "own message"}},
    });
    let defaults = json!({
        "file": {"mode": "0640", "content": "default\n"},
        "notify": {"message": "default message"},
        // A type the configuration does not use: nothing to apply it to.
        "exec": {"timeout": 5},
    });
    let runs = apply(vec![Case::new(
        "defaults",
        MANIFEST,
        with(configuration, json!(null), defaults),
    )]);
    let run = &runs[0];
    ok(run);
    assert_eq!(
        run.file("a"),
        Some(("data a\n".into(), 0o640)),
        "{}",
        run.show()
    );
    assert_eq!(
        run.file("b"),
        Some(("default\n".into(), 0o600)),
        "{}",
        run.show()
    );
    assert_eq!(
        run.file("untouched"),
        Some(("manifest untouched\n".into(), 0o644)),
        "{}",
        run.show()
    );
    let mut notices = run.notices();
    notices.sort();
    assert_eq!(
        notices,
        ["default message", "manifest n2", "own message"],
        "{}",
        run.show()
    );
}

/// `include hierad_resources::override` merges the three keys over the hierarchy:
/// `hash` (the default) lets a type at a more specific level replace the
/// same type below it; `merge => deep` combines titles from every level.
#[test]
fn the_one_line_class_merges_the_levels() {
    let cluster = json!({
        "configuration": {
            "file": {"@D/out/b": {"content": "cluster b\n"}},
            "notify": {"n1": {"message": "cluster n1"}},
        },
        "defaults": {"file": {"mode": "0600"}},
    });
    let node = json!({"configuration": {"file": {"@D/out/c": {"content": "node c\n"}}}});
    let manifest_deep = "notify { 'n1': message => 'manifest n1' }\nclass { 'hierad_resources::override': merge => 'deep' }\n";
    let manifest_hash =
        "notify { 'n1': message => 'manifest n1' }\ninclude hierad_resources::override\n";
    let case = |name, manifest: &str| Case {
        name,
        manifest: manifest.into(),
        node: node.clone(),
        cluster: cluster.clone(),
        noop: false,
    };
    let runs = apply(vec![
        case("hash", manifest_hash),
        case("deep", manifest_deep),
    ]);
    for run in &runs {
        ok(run);
        assert_eq!(
            run.file("c"),
            Some(("node c\n".into(), 0o600)),
            "{}",
            run.show()
        );
        assert_eq!(run.notices(), ["cluster n1"], "{}", run.show());
    }
    assert_eq!(runs[0].file("b"), None, "{}", runs[0].show());
    assert_eq!(
        runs[1].file("b"),
        Some(("cluster b\n".into(), 0o600)),
        "{}",
        runs[1].show()
    );
}

/// The type's own parameters win over `configuration_options`.
#[test]
fn the_types_own_parameters_win_over_the_options() {
    let manifest = r#"
notify { 'n1': message => 'manifest n1' }
override_resources { 'local':
  configuration => lookup('configuration', Hash, 'hash', {}),
  options       => lookup('configuration_options', Hash, 'hash', {}),
  create        => false,
  types_filter  => ['notify'],
}
"#;
    let data = with(
        json!({
            "notify": {"n1": {"message": "data n1"}, "x": {"message": "x"}},
            "file": {"@D/out/b": {"content": "b\n"}},
        }),
        json!({"create": true, "types_filter": ["file"]}),
        json!(null),
    );
    let runs = apply(vec![Case::new("parameters", manifest, data)]);
    let run = &runs[0];
    ok(run);
    assert_eq!(run.notices(), ["data n1"], "{}", run.show());
    assert!(
        !run.reported("Notify[x]") && run.file("b").is_none(),
        "{}",
        run.show()
    );
}

/// What cannot be applied fails the run before any resource is: a type
/// that is not in the modulepath (named), a parameter the type does not
/// have, a value the type refuses, a misspelt option, a `create` that is
/// not a boolean, a title that maps to a list. A type filtered out is not
/// looked at.
#[test]
fn data_that_cannot_be_applied_fails_the_run_naming_the_problem() {
    let a = json!({"@D/out/a": {"content": "data a\n"}});
    let table: [(&str, Json, &str); 7] = [
        (
            "unknown type",
            with(json!({"fiel": a.clone()}), json!(null), json!(null)),
            "the type 'fiel' (configuration.fiel) is not found in the modulepath of environment production",
        ),
        (
            "unknown type in defaults",
            with(
                json!({}),
                json!(null),
                json!({"servise": {"ensure": "running"}}),
            ),
            "the type 'servise' (defaults.servise) is not found in the modulepath",
        ),
        (
            "unknown parameter",
            with(
                json!({"file": {"@D/out/a": {"contnet": "x"}}}),
                json!(null),
                json!(null),
            ),
            "configuration.file.@D/out/a.contnet: the type 'file' has no parameter 'contnet'",
        ),
        (
            "refused value",
            with(
                json!({"file": {"@D/out/a": {"mode": "rwxq"}}}),
                json!(null),
                json!(null),
            ),
            "The file mode specification is invalid: \"rwxq\"",
        ),
        (
            "misspelt option",
            with(
                json!({"file": a.clone()}),
                json!({"types_create": ["file"]}),
                json!(null),
            ),
            "configuration_options: unknown option \"types_create\"",
        ),
        (
            "create: maybe",
            with(json!({"file": a}), json!({"create": "maybe"}), json!(null)),
            "configuration_options.create: expected true or false, got String \"maybe\"",
        ),
        (
            "title to a list",
            with(
                json!({"notify": {"n1": ["message"]}}),
                json!(null),
                json!(null),
            ),
            "configuration.notify.n1: expected a Hash, got Array",
        ),
    ];
    let mut cases: Vec<Case> = table
        .iter()
        .map(|(name, data, _)| Case::new(name, MANIFEST, data.clone()))
        .collect();
    cases.push(Case::new(
        "unknown type filtered out",
        MANIFEST,
        with(
            json!({"fiel": {"x": {}}, "notify": {"n1": {"message": "data n1"}}}),
            json!({"types_filter": ["notify"]}),
            json!(null),
        ),
    ));
    let runs = apply(cases);
    for (run, (_, _, message)) in runs.iter().zip(&table) {
        assert_eq!(run.outcome.status, 1, "{}", run.show());
        let wanted = message.replace("@D", &run.dir.to_string_lossy());
        assert!(
            run.stderr().contains(&wanted),
            "wanted {wanted:?}: {}",
            run.show()
        );
        // Nothing was applied: not even the manifest's own resources.
        assert_eq!(run.file("a"), None, "{}", run.show());
        assert!(run.notices().is_empty(), "{}", run.show());
    }
    let run = runs.last().unwrap();
    ok(run);
    assert!(
        run.notices().contains(&"data n1".to_owned()),
        "{}",
        run.show()
    );
}
