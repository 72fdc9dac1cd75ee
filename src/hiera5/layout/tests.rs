use super::*;
use crate::hiera::yaml;

fn layout(text: &str) -> Result<Layout, Unexpressible> {
    let text = text.replacen(
        "hierarchy:",
        "defaults: {data_hash: yaml_data}\nhierarchy:",
        1,
    );
    let config = Config::from_value("hiera.yaml", &yaml::load(&text).unwrap()).unwrap();
    Layout::of(&config)
}

const CONTROL: &str = "version: 5\nhierarchy:\n  - name: Nodes\n    path: nodes/%{trusted.certname}.yaml\n  - name: OS\n    path: os/%{facts.os.family}.yaml\n  - name: Common\n    paths: [common.yaml, \"%{::role}.yaml\"]\n";

#[test]
fn files_are_placed_at_the_level_their_path_interpolates() {
    let l = layout(CONTROL).unwrap();
    assert_eq!(l.levels(), ["role", "facts.os.family", "trusted.certname"]);
    let at = |path: &str| {
        l.places(path)
            .into_iter()
            .map(|p| (p.level, p.resource))
            .collect::<Vec<_>>()
    };
    let lv = |l: &str, v: &str| Some((l.to_owned(), v.to_owned()));
    assert_eq!(
        at("data/nodes/web1.yaml"),
        [(lv("trusted.certname", "web1"), "nodes".into())]
    );
    assert_eq!(
        at("data/os/Debian.yaml"),
        [(lv("facts.os.family", "Debian"), "os".into())]
    );
    // Both locations name it: a node whose role is `common` reads it too.
    assert_eq!(
        at("data/common.yaml"),
        [
            (None, "common".to_owned()),
            (lv("role", "common"), "role".into())
        ]
    );
    assert_eq!(at("data/db.yaml"), [(lv("role", "db"), "role".into())]);
    assert_eq!(at("data/nodes/a/b.yaml"), []);
    assert_eq!(at("data/nodes/.yaml"), []);
    assert_eq!(at("other/common.yaml"), []);
}

#[test]
fn what_has_no_form_is_refused_naming_the_entry() {
    for (entry, reason) in [
        ("- name: G\n    glob: \"%{facts.x}/*.yaml\"", "interpolates"),
        ("- name: E\n    glob: \"x/*\"", "extension"),
        ("- name: U\n    uri: \"http://x\"", "no path, glob"),
        (
            "- name: M\n    mapped_paths: [facts.x, y, \"%{facts.z}.yaml\"]",
            "not its key y",
        ),
        (
            "- name: N\n    mapped_paths: [facts.x, y, \"fixed.yaml\"]",
            "does not interpolate its key",
        ),
        (
            "- name: Two\n    path: \"%{facts.a}/%{facts.b}.yaml\"",
            "more than one variable",
        ),
        (
            "- name: F\n    path: \"%{lookup('x')}.yaml\"",
            "not a variable",
        ),
        (
            "- name: H\n    path: hiera.yaml",
            "where the layer keeps its hiera.yaml",
        ),
        (
            "- name: O\n    path: hiera-origin.yaml",
            "where the layer keeps the directory it was imported from",
        ),
        ("- name: Up\n    path: ../x.yaml", "outside"),
    ] {
        let e = layout(&format!("version: 5\nhierarchy:\n  {entry}\n")).unwrap_err();
        assert!(e.to_string().contains(reason), "{e}");
        assert_eq!(e.entry, entry[8..].split('\n').next().unwrap());
    }
    let e = layout("version: 5\nhierarchy:\n  - name: A\n    path: x/%{facts.a}.yaml\n  - name: B\n    path: x.yaml\n").unwrap_err();
    assert_eq!(e.entry, "B");
    assert!(e.to_string().contains("one resource \"x\""), "{e}");
}

#[test]
fn a_mapped_path_is_a_level_named_for_the_mapped_variable() {
    let l = layout("version: 5\nhierarchy:\n  - name: S\n    mapped_paths: [facts.services, tmp, \"service/%{tmp}.yaml\"]\n").unwrap();
    assert_eq!(l.levels(), ["facts.services"]);
    let place = &l.places("data/service/db.yaml")[0];
    assert_eq!(
        (&place.level, place.resource.as_str()),
        (&Some(("facts.services".into(), "db".into())), "service")
    );
    assert_eq!(l.sources()[0].form, Form::Mapped);
}

#[test]
fn an_eyaml_entrys_files_are_resources_of_their_own() {
    let l = layout(concat!(
        "version: 5\nhierarchy:\n",
        "  - name: S\n    lookup_key: eyaml_lookup_key\n",
        "    paths: [\"nodes/%{trusted.certname}.eyaml\", common.eyaml]\n",
        "  - name: G\n    lookup_key: eyaml_lookup_key\n    glob: \"shared/*.eyaml\"\n",
        "  - name: Y\n    paths: [\"nodes/%{trusted.certname}.yaml\", common.yaml]\n",
    ))
    .unwrap();
    let at = |path: &str| {
        l.places(path)
            .into_iter()
            .map(|p| (p.level, p.resource))
            .collect::<Vec<_>>()
    };
    let web1 = Some(("trusted.certname".to_owned(), "web1".to_owned()));
    assert_eq!(
        at("data/nodes/web1.eyaml"),
        [(web1.clone(), "nodes.eyaml".to_owned())]
    );
    assert_eq!(at("data/nodes/web1.yaml"), [(web1, "nodes".to_owned())]);
    assert_eq!(at("data/common.eyaml"), [(None, "common.eyaml".to_owned())]);
    assert_eq!(at("data/common.yaml"), [(None, "common".to_owned())]);
    assert_eq!(
        at("data/shared/a.eyaml"),
        [(None, "shared/a.eyaml".to_owned())]
    );
    assert_eq!(
        l.glob_paths(
            "data/shared/*.eyaml",
            ["shared/a.eyaml", "shared/b", "common.eyaml"].into_iter()
        ),
        ["data/shared/a.eyaml"]
    );
}

#[test]
fn a_glob_names_a_fixed_set_of_files_each_its_own_resource() {
    let l = layout("version: 5\nhierarchy:\n  - name: G\n    glob: \"shared/*.yaml\"\n  - name: C\n    path: common.yaml\n").unwrap();
    let at = |path: &str| {
        l.places(path)
            .into_iter()
            .map(|p| (p.level, p.resource, p.glob))
            .collect::<Vec<_>>()
    };
    let glob = Some("data/shared/*.yaml".to_owned());
    assert_eq!(
        at("data/shared/a.yaml"),
        [(None, "shared/a".to_owned(), glob.clone())]
    );
    assert_eq!(at("data/shared/a.json"), []);
    assert_eq!(at("data/shared/x/a.yaml"), []);
    let kept = ["common", "hiera", "shared/b", "shared/a", "shared"];
    assert_eq!(
        l.glob_paths("data/shared/*.yaml", kept.into_iter()),
        ["data/shared/a.yaml", "data/shared/b.yaml"]
    );
    assert!(
        l.glob_paths("data/other/*.yaml", kept.into_iter())
            .is_empty()
    );
    // A glob over the datadir never names the layer's hiera.yaml.
    let l = layout("version: 5\nhierarchy:\n  - name: G\n    glob: \"*.yaml\"\n").unwrap();
    assert_eq!(
        l.glob_paths("data/*.yaml", ["hiera", "a"].into_iter()),
        ["data/a.yaml"]
    );
    let l =
        layout("version: 5\nhierarchy:\n  - name: G\n    datadir: .\n    glob: \"**/*.yaml\"\n")
            .unwrap();
    assert_eq!(l.places("modules/ntp/hiera.yaml"), []);
    assert_eq!(l.places("hiera.yaml"), []);
    assert_eq!(l.places("x/y.yaml")[0].resource, "x/y");
}

#[test]
fn a_modules_files_are_kept_under_its_name() {
    let mut l = layout(CONTROL).unwrap();
    let module = |text: &str| Config::from_value("hiera.yaml", &yaml::load(text).unwrap()).unwrap();
    l.add_module(
        "ntp",
        &module("version: 5\nhierarchy:\n  - {name: OS, path: \"os/%{facts.os.family}.yaml\", data_hash: yaml_data}\n  - {name: C, path: common.yaml, data_hash: yaml_data}\n"),
    )
    .unwrap();
    let at = |path: &str| {
        l.places(path)
            .into_iter()
            .map(|p| (p.module, p.level.map(|(_, v)| v), p.resource))
            .collect::<Vec<_>>()
    };
    let ntp = Some("ntp".to_owned());
    assert_eq!(
        at("modules/ntp/data/os/Debian.yaml"),
        [(ntp.clone(), Some("Debian".into()), "modules/ntp/os".into())]
    );
    assert_eq!(
        at("modules/ntp/data/common.yaml"),
        [(ntp, None, "modules/ntp/common".into())]
    );
    assert_eq!(at("modules/apache/data/common.yaml"), []);
    // The levels are shared; the printed hierarchy is the environment's.
    assert_eq!(l.levels(), ["role", "facts.os.family", "trusted.certname"]);
    assert!(
        l.sources()
            .iter()
            .all(|s| !s.resource.starts_with("modules/"))
    );
    assert_eq!(config_module(&module_config_resource("ntp")), Some("ntp"));
    assert_eq!(config_module("modules/ntp/os"), None);
    let e = l
        .add_module(
            "bad",
            &module(
                "version: 5\nhierarchy:\n  - {name: H, path: hiera.yaml, data_hash: yaml_data}\n",
            ),
        )
        .unwrap_err();
    assert_eq!(e.module.as_deref(), Some("bad"));
    assert!(
        e.to_string()
            .starts_with("module \"bad\": hierarchy entry \"H\""),
        "{e}"
    );
}
