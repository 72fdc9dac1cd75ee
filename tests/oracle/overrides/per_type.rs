//! The specification's own form of `override_resources`
//! (docs/spec/override-resources.md): an instance
//! titled with a type's name (`override_resources {'package': ...}`)
//! whose `configuration` maps titles to parameters and whose `defaults`
//! are parameters, both of that type. The specification's block runs word for word
//! (tests/fixtures/seeds/override_resources.pp); every rule of rules.rs
//! runs again in this form; a title that names no type keeps the nested
//! form, and data in the wrong form is refused naming the form it was
//! read in.

use super::{Applied, Case, apply};
use serde_json::json;

/// The specification's block, verbatim (tests/fixtures/seeds/SOURCES.md).
const SEEDS_BLOCK: &str = include_str!("../../fixtures/seeds/override_resources.pp");

/// The specification's block again, after the manifest's own `mc`: the block
/// updates it rather than declaring a second one.
const SEEDS_BLOCK_OVER_A_MANIFEST: &str = concat!(
    "package { 'mc': ensure => 'absent' }\n",
    include_str!("../../fixtures/seeds/override_resources.pp")
);

fn ok(run: &Applied) {
    assert_eq!(run.outcome.status, 0, "{}", run.show());
    assert!(!run.stderr().contains("Error:"), "{}", run.show());
}

fn installed(package: &str) -> bool {
    std::process::Command::new("dpkg-query")
        .args(["-W", "-f", "${Status}", package])
        .output()
        .is_ok_and(|o| o.stdout.ends_with(b" installed"))
}

/// The block as the specification prints it, applied with `--noop` (it names real
/// packages): the catalog gets both packages with `ensure => latest`;
/// before, Puppet refused it (`configuration.fontconfig-config.ensure:
/// expected a Hash, got String "latest"`).
#[test]
fn the_seeds_block_runs_word_for_word() {
    let case = |name, manifest| Case {
        noop: true,
        ..Case::new(name, manifest, json!({}))
    };
    let runs = apply(vec![
        case("seeds' block", SEEDS_BLOCK),
        case("seeds' block over a manifest", SEEDS_BLOCK_OVER_A_MANIFEST),
    ]);
    for run in &runs {
        ok(run);
        for package in ["Package[fontconfig-config]", "Package[mc]"] {
            assert!(run.reported(package), "{package}: {}", run.show());
        }
        // Where mc is not installed, noop says what it would do; the
        // manifest's `ensure => 'absent'` alone would be in sync.
        if !installed("mc") {
            assert!(
                run.stdout().contains(
                    "Package[mc]/ensure: current_value 'purged', should be 'latest' (noop)"
                ),
                "{}",
                run.show()
            );
        }
    }
}

/// Update, creation and `defaults` in the per-type form: the type's
/// defaults (`<parameter> => value`) below each title's own parameters;
/// a resource of another type with the same title is not touched.
#[test]
fn the_per_type_form_updates_creates_and_fills_in_defaults() {
    let manifest = r#"
file { '@D/out/a': content => "manifest a\n", mode => '0644' }
file { '@D/out/untouched': content => "manifest untouched\n", mode => '0644' }
notify { '@D/out/a': message => 'manifest notify' }
notify { 'n1': message => 'manifest n1' }
override_resources { 'file':
  configuration => {
    '@D/out/a'   => { 'content' => "data a\n" },
    '@D/out/new' => { 'content' => "created\n", 'mode' => '0600' },
  },
  defaults      => { 'mode' => '0640' },
}
override_resources { 'notify':
  configuration => { 'n1' => {}, 'made' => { 'message' => 'own message' } },
  defaults      => { 'message' => 'default message' },
}
"#;
    let runs = apply(vec![Case::new("per type", manifest, json!({}))]);
    let run = &runs[0];
    ok(run);
    assert_eq!(
        run.file("a"),
        Some(("data a\n".into(), 0o640)),
        "{}",
        run.show()
    );
    assert_eq!(
        run.file("new"),
        Some(("created\n".into(), 0o600)),
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
        ["default message", "manifest notify", "own message"],
        "{}",
        run.show()
    );
    assert!(
        run.reported("File[@D/out/new]") && run.reported("Notify[made]"),
        "{}",
        run.show()
    );
}

/// `create` and its exception lists, given as `options` or as the type's
/// own parameters, in both senses: with create true the lists name what
/// is not created, with create false the only things that are.
#[test]
fn create_and_its_exception_lists_in_the_per_type_form() {
    let table: [(&'static str, &[&str]); 7] = [
        ("options => {}", &["b", "c"]),
        (
            "options => {'create' => true, 'titles_create_exception' => ['@D/out/b']}",
            &["c"],
        ),
        ("options => {'types_create_exception' => ['file']}", &[]),
        ("options => {'create' => false}", &[]),
        (
            "options => {'create' => false, 'titles_create_exception' => ['@D/out/b']}",
            &["b"],
        ),
        (
            "create => false, types_create_exception => ['file']",
            &["b", "c"],
        ),
        // The type's own parameter wins over the options.
        (
            "options => {'create' => false}, create => true",
            &["b", "c"],
        ),
    ];
    let cases = table
        .iter()
        .map(|(options, _)| {
            let manifest = format!(
                "file {{ '@D/out/a': content => \"manifest a\\n\" }}\n\
                 override_resources {{ 'file':\n  configuration => {{\n    \
                 '@D/out/a' => {{ 'content' => \"data a\\n\" }},\n    \
                 '@D/out/b' => {{ 'content' => \"b\\n\" }},\n    \
                 '@D/out/c' => {{ 'content' => \"c\\n\" }},\n  }},\n  {options},\n}}\n"
            );
            Case::new("create", manifest, json!({}))
        })
        .collect();
    let runs = apply(cases);
    for (run, (options, expected)) in runs.iter().zip(&table) {
        ok(run);
        let made: Vec<&str> = ["b", "c"]
            .into_iter()
            .filter(|f| run.file(f).is_some())
            .collect();
        assert_eq!(&made[..], *expected, "{options}: {}", run.show());
        // Updating does not depend on create.
        assert_eq!(
            run.file("a").unwrap().0,
            "data a\n",
            "{options}: {}",
            run.show()
        );
    }
}

/// `titles_filter` and `types_filter` in the per-type form: only the
/// titles listed are processed; a types_filter without the title's type
/// processes nothing.
#[test]
fn the_filters_in_the_per_type_form() {
    let table: [(&'static str, &str, bool); 4] = [
        ("options => {'titles_filter' => []}", "data a\n", true),
        (
            "options => {'titles_filter' => ['@D/out/b']}",
            "manifest a\n",
            true,
        ),
        ("titles_filter => ['@D/out/a']", "data a\n", false),
        (
            "options => {'types_filter' => ['notify']}",
            "manifest a\n",
            false,
        ),
    ];
    let cases = table
        .iter()
        .map(|(options, ..)| {
            let manifest = format!(
                "file {{ '@D/out/a': content => \"manifest a\\n\" }}\n\
                 override_resources {{ 'file':\n  configuration => {{\n    \
                 '@D/out/a' => {{ 'content' => \"data a\\n\" }},\n    \
                 '@D/out/b' => {{ 'content' => \"b\\n\" }},\n  }},\n  {options},\n}}\n"
            );
            Case::new("filters", manifest, json!({}))
        })
        .collect();
    let runs = apply(cases);
    for (run, (options, a, b)) in runs.iter().zip(&table) {
        ok(run);
        assert_eq!(run.file("a").unwrap().0, *a, "{options}: {}", run.show());
        assert_eq!(run.file("b").is_some(), *b, "{options}: {}", run.show());
    }
}

/// The per-type form fed by Hiera: one type's slice of the node's data,
/// as a manifest that keeps the nested data for other instances writes it.
#[test]
fn the_per_type_form_takes_one_types_slice_of_the_data() {
    let manifest = r#"
notify { 'n1': message => 'manifest n1' }
$configuration = lookup('configuration', Hash, 'hash', {})
$defaults = lookup('defaults', Hash, 'hash', {})
override_resources { 'notify':
  configuration => $configuration['notify'],
  defaults      => $defaults['notify'],
  options       => lookup('configuration_options', Hash, 'hash', {}),
}
"#;
    let data = json!({
        "configuration": {
            "notify": {"n1": {}, "x": {"message": "x"}, "y": {}},
            "file": {"@D/out/b": {"content": "b\n"}},
        },
        "configuration_options": {"titles_create_exception": ["y"]},
        "defaults": {"notify": {"message": "default"}},
    });
    let runs = apply(vec![Case::new("slice", manifest, data)]);
    let run = &runs[0];
    ok(run);
    let mut notices = run.notices();
    notices.sort();
    assert_eq!(notices, ["default", "x"], "{}", run.show());
    assert!(run.file("b").is_none(), "{}", run.show());
}

/// Data in the other form than the title selects fails the run before
/// anything is applied, saying which form the title selected; the
/// specification's block under a misspelt type is one of them.
#[test]
fn data_in_the_other_form_is_refused_naming_the_form() {
    let table: [(&str, &'static str, &str); 4] = [
        (
            "nested data, titled with a type",
            "override_resources { 'file': configuration => { 'file' => { '@D/out/a' => { 'content' => 'x' } } } }",
            "configuration.file.@D/out/a: the type 'file' has no parameter '@D/out/a' (the title 'file' names a type, \
             so configuration is <title> => <parameters> and defaults <parameter> => value, both of type 'file')",
        ),
        (
            "nested defaults, titled with a type",
            "override_resources { 'file': defaults => { 'file' => { 'mode' => '0600' } } }",
            "defaults.file: the type 'file' has no parameter 'file' (the title 'file' names a type",
        ),
        (
            "per-type data under a misspelt type",
            "override_resources {'pakage': configuration => {'mc' => {'ensure' => 'latest'}}}",
            "configuration.mc.ensure: expected a Hash, got String \"latest\" (the title 'pakage' names no type \
             in the modulepath, so configuration is <type> => <title> => <parameters>",
        ),
        (
            "a refused value",
            "override_resources { 'file': configuration => { '@D/out/a' => { 'mode' => 'rwxq' } } }",
            "The file mode specification is invalid: \"rwxq\"",
        ),
    ];
    let cases = table
        .iter()
        .map(|(name, block, _)| {
            let manifest = format!(
                "file {{ '@D/out/a': content => \"manifest a\\n\" }}\nnotify {{ 'n1': }}\n{block}\n"
            );
            Case::new(name, manifest, json!({}))
        })
        .collect();
    let runs = apply(cases);
    for (run, (name, _, message)) in runs.iter().zip(&table) {
        assert_eq!(run.outcome.status, 1, "{name}: {}", run.show());
        let wanted = message.replace("@D", &run.dir.to_string_lossy());
        assert!(
            run.stderr().contains(&wanted),
            "{name}: wanted {wanted:?}: {}",
            run.show()
        );
        assert_eq!(run.file("a"), None, "{name}: {}", run.show());
        assert!(run.notices().is_empty(), "{name}: {}", run.show());
    }
}
