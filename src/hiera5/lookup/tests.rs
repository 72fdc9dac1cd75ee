use super::*;
use std::collections::BTreeMap;

/// Files as a map of texts.
struct Texts(BTreeMap<String, String>);

impl Files for Texts {
    fn read(&self, path: &str) -> Option<String> {
        self.0.get(path).cloned()
    }
    fn is_file(&self, path: &str) -> bool {
        self.0.contains_key(path)
    }
    fn is_dir(&self, path: &str) -> bool {
        let dir = format!("{}/", path.trim_end_matches('/'));
        self.0.keys().any(|k| k.starts_with(&dir))
    }
    fn glob(&self, pattern: &str) -> Vec<String> {
        let (dir, suffix) = pattern.split_once('*').unwrap();
        self.0
            .keys()
            .filter(|k| k.starts_with(dir) && k.ends_with(suffix))
            .cloned()
            .collect()
    }
}

fn tree(files: &[(&str, &str)]) -> Texts {
    Texts(
        files
            .iter()
            .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
            .collect(),
    )
}

const ENV_CONFIG: &str = "version: 5\ndefaults: {data_hash: yaml_data}\nhierarchy:\n- {name: node, path: 'nodes/%{trusted.certname}.yaml'}\n- {name: common, path: common.yaml}\n";

fn lookup_in(files: &Texts, key: &str, merge: Option<&Strategy>) -> Result<Option<Value>> {
    let mut facts = Hash::default();
    facts.insert(Value::str("clientcert"), Value::str("web1"));
    let lookup = Lookup::new(
        Tree {
            global_config: "/conf/hiera.yaml".into(),
            environment_dir: Some("/env".into()),
        },
        files,
        Scope::for_node(facts, "production"),
    );
    lookup.lookup(&[key.to_owned()], merge)
}

fn yaml(text: &str) -> Value {
    crate::hiera::yaml::load(text).unwrap()
}

#[test]
fn lookup_options_pick_the_merge_and_the_layers_merge() {
    let files = tree(&[
        ("/env/hiera.yaml", ENV_CONFIG),
        ("/env/data/nodes/web1.yaml", "h: {a: 1}\nl: [x]\n"),
        (
            "/env/data/common.yaml",
            "h: {b: 2}\nl: [y, x]\nlookup_options: {h: {merge: deep}}\n",
        ),
        ("/conf/data/common.yaml", "l: [z]\n"),
    ]);
    assert_eq!(
        lookup_in(&files, "h", None).unwrap(),
        Some(yaml("{b: 2, a: 1}"))
    );
    assert_eq!(lookup_in(&files, "l", None).unwrap(), Some(yaml("[z]")));
    assert_eq!(
        lookup_in(&files, "l", Some(&Strategy::Unique)).unwrap(),
        Some(yaml("[z, x, y]"))
    );
    assert_eq!(lookup_in(&files, "h.a", None).unwrap(), Some(Value::Int(1)));
    assert_eq!(lookup_in(&files, "lookup_options", None).unwrap(), None);
}

#[test]
fn interpolation_reaches_scope_and_other_keys() {
    let files = tree(&[
        ("/env/hiera.yaml", ENV_CONFIG),
        (
            "/env/data/common.yaml",
            "a: \"%{lookup('b')}-%{trusted.certname}-%{literal('%')}\"\nb: x\nc: \"%{alias('d')}\"\nd: [1]\ne: \"%{lookup('e')}\"\nf: \"%{bad('x')}\"\n",
        ),
    ]);
    assert_eq!(
        lookup_in(&files, "a", None).unwrap(),
        Some(Value::str("x-web1-%"))
    );
    assert_eq!(lookup_in(&files, "c", None).unwrap(), Some(yaml("[1]")));
    assert!(matches!(
        lookup_in(&files, "e", None),
        Err(Error::Recursive(_) | Error::Global { .. })
    ));
    let err = lookup_in(&files, "f", None).unwrap_err();
    assert_eq!(err.to_string(), "Unknown interpolation method 'bad'");
}

#[test]
fn a_broken_module_file_fails_only_that_modules_keys() {
    let files = tree(&[
        ("/env/hiera.yaml", ENV_CONFIG),
        ("/env/data/common.yaml", "a: 1\n"),
        (
            "/env/modules/m/hiera.yaml",
            "version: 5\nhierarchy:\n- {name: c, path: common.yaml, data_hash: yaml_data}\n",
        ),
        ("/env/modules/m/data/common.yaml", "m::x: [1\n"),
    ]);
    assert_eq!(lookup_in(&files, "a", None).unwrap(), Some(Value::Int(1)));
    assert!(matches!(
        lookup_in(&files, "m::x", None),
        Err(Error::Data(_))
    ));
}

#[test]
fn an_explanation_shows_each_location_and_the_merge() {
    let files = tree(&[
        ("/env/hiera.yaml", ENV_CONFIG),
        ("/env/data/nodes/web1.yaml", "h: {a: 1}\n"),
        (
            "/env/data/common.yaml",
            "h: {b: 2}\nlookup_options: {h: {merge: hash}}\n",
        ),
    ]);
    let mut facts = Hash::default();
    facts.insert(Value::str("clientcert"), Value::str("web1"));
    let tree = Tree {
        global_config: "/conf/hiera.yaml".into(),
        environment_dir: Some("/env".into()),
    };
    let lookup = Lookup::new(tree, &files, Scope::for_node(facts, "production")).explaining();
    let found = lookup.lookup(&["h".to_owned()], None).unwrap();
    assert_eq!(found, Some(yaml("{b: 2, a: 1}")));
    let text = lookup.explanation(None).unwrap();
    for want in [
        "Searching for \"lookup_options\"\n",
        "Using merge options from \"lookup_options\" hash\nSearching for \"h\"\n",
        "          Path \"/env/data/nodes/web1.yaml\"\n            Original path: \"nodes/%{trusted.certname}.yaml\"\n            Found key: \"h\" value: {\n              \"a\" => 1\n            }\n",
        "    Merged result: {\n      \"b\" => 2,\n      \"a\" => 1\n    }\n",
    ] {
        assert!(text.contains(want), "{want:?} not in\n{text}");
    }
    // The global layer has no hiera.yaml and no data: not found there.
    assert!(text.contains(
        "    Global Data Provider (hiera configuration version 5)\n      No such key: \"h\"\n"
    ));
}

#[test]
fn an_eyaml_entry_without_key_files_answers_its_blocks_as_stored() {
    // Files with no key pair (a store's): a block is answered as it is,
    // its text around it interpolated; plain values as yaml_data's.
    let block = "ENC[PKCS7,MIIBeQYJKoZIhvcNAQcDoIIBajCCAWYCAQAxggEhMIIBHQIBADAFMAACAQEw]";
    let files = tree(&[
        (
            "/env/hiera.yaml",
            "version: 5\nhierarchy:\n- {name: s, lookup_key: eyaml_lookup_key, path: common.eyaml, options: {pkcs7_private_key: /k/private.pem}}\n",
        ),
        (
            "/env/data/common.eyaml",
            &format!("plain: '%{{environment}}'\nsecret: {block}\n"),
        ),
    ]);
    assert_eq!(
        lookup_in(&files, "plain", None).unwrap(),
        Some(Value::str("production"))
    );
    assert_eq!(
        lookup_in(&files, "secret", None).unwrap(),
        Some(Value::str(block))
    );
}

#[test]
fn an_eyaml_entry_whose_keys_cannot_be_read_fails_only_for_blocks() {
    struct NoKeys(Texts);
    impl Files for NoKeys {
        fn read(&self, path: &str) -> Option<String> {
            self.0.read(path)
        }
        fn is_file(&self, path: &str) -> bool {
            self.0.is_file(path)
        }
        fn is_dir(&self, path: &str) -> bool {
            self.0.is_dir(path)
        }
        fn glob(&self, pattern: &str) -> Vec<String> {
            self.0.glob(pattern)
        }
        fn eyaml_keys(&self, private: &str, _: &str) -> Option<Result<EyamlKeys, Error>> {
            Some(Err(Error::Data(format!("cannot read {private}"))))
        }
    }
    let files = NoKeys(tree(&[
        (
            "/env/hiera.yaml",
            "version: 5\nhierarchy:\n- {name: s, lookup_key: eyaml_lookup_key, path: common.eyaml}\n",
        ),
        (
            "/env/data/common.eyaml",
            "plain: clear\nsecret: ENC[PKCS7,MIIB]\n",
        ),
    ]));
    let lookup = |key: &str| {
        Lookup::new(
            Tree {
                global_config: "/conf/hiera.yaml".into(),
                environment_dir: Some("/env".into()),
            },
            &files,
            Scope::for_node(Hash::default(), "production"),
        )
        .lookup(&[key.to_owned()], None)
    };
    assert_eq!(lookup("plain").unwrap(), Some(Value::str("clear")));
    let e = lookup("secret").unwrap_err().to_string();
    assert!(
        e.contains("decrypting the value of 'secret' in /env/data/common.eyaml")
            && e.contains("cannot read ./keys/private_key.pkcs7.pem"),
        "{e}"
    );
}
