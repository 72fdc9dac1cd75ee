//! The Puppet tree the suite looks up in, written at test time: a global
//! layer (CONFDIR/hiera.yaml), environments with hiera.yaml version 5
//! (paths, globs, mapped_paths, json_data, lookup_options), modules with
//! their own data, and facts files. All the data is made up here.

use std::path::Path;

/// (path under the tree's root, text).
pub(crate) const FILES: &[(&str, &str)] = &[
    // The global layer: one level, its own lookup_options.
    (
        "conf/hiera.yaml",
        "---\nversion: 5\nhierarchy:\n  - name: global common\n    path: common.yaml\n    data_hash: yaml_data\n",
    ),
    (
        "conf/data/common.yaml",
        "global_only: from global\nlayered: [global]\nlayered_hash: {g: 1, shared: global}\nmymod::layered: [global]\nlookup_options:\n  layered_hash:\n    merge: hash\n",
    ),
    // The environment layer.
    (
        "envs/production/hiera.yaml",
        r#"---
version: 5
defaults:
  datadir: data
  data_hash: yaml_data
hierarchy:
  - name: node
    path: "nodes/%{trusted.certname}.yaml"
  - name: os and role
    paths:
      - "os/%{facts.os.family}.yaml"
      - "roles/%{::role}.yaml"
  - name: services
    mapped_paths: [facts.services, svc, "services/%{svc}.yaml"]
  - name: globbed
    glob: "glob/*.yaml"
  - name: globbed twice
    globs: ["many/a*.yaml", "many/**/z.yaml"]
  - name: json
    path: common.json
    data_hash: json_data
  - name: other datadir
    datadir: extra
    path: "extra.yaml"
  - name: common
    path: common.yaml
"#,
    ),
    (
        "envs/production/data/nodes/web1.example.com.yaml",
        "greeting: hello from web1\nlist: [node1, shared]\nhash_deep: {a: {x: 1}, b: [1]}\nlayered: [env-node]\nlayered_hash: {e: 2}\nko: {keep: 1, drop: '--'}\nko_list: ['--gone', kept]\nsorted: [c, a]\nhash_arrays: [{a: 1}]\nstrategy_only: {a: 1}\nconv_int: '42'\n",
    ),
    (
        "envs/production/data/os/Debian.yaml",
        "greeting: hello from Debian\nos_only: debian value\nlist: [debian]\nhash_deep: {a: {y: 2}, c: 3}\nre_one: [os]\n",
    ),
    (
        "envs/production/data/roles/web.yaml",
        "role_only: web role\nlist: [role]\nnull_value: ~\nre_one: [role]\n",
    ),
    (
        "envs/production/data/services/ntp.yaml",
        "svc_value: from ntp\nsvc_list: [ntp]\n",
    ),
    (
        "envs/production/data/services/dns.yaml",
        "svc_value: from dns\nsvc_list: [dns]\n",
    ),
    (
        "envs/production/data/glob/one.yaml",
        "glob_value: one\nglob_list: [one]\n",
    ),
    (
        "envs/production/data/glob/two.yaml",
        "glob_value: two\nglob_list: [two]\n",
    ),
    (
        "envs/production/data/many/alpha.yaml",
        "many_list: [alpha]\n",
    ),
    (
        "envs/production/data/many/deep/er/z.yaml",
        "many_list: [z]\n",
    ),
    (
        "envs/production/data/common.json",
        r#"{"json_value": {"n": 1.5, "t": true, "s": "from json"}, "list": ["json"]}"#,
    ),
    (
        "envs/production/extra/extra.yaml",
        "extra_value: from extra datadir\n",
    ),
    (
        "envs/production/data/common.yaml",
        r#"greeting: hello from common
list: [common, shared]
hash_deep: {a: {z: 3}, b: [2], d: 4}
layered: [env-common]
layered_hash: {shared: env}
int: 42
float: 1.5
big: 123456789012345678901234567890
yes_string: "yes"
bool: true
nil_value: ~
empty_string: ""
multiline: "line one\nline two"
colon: "a: b"
ko: {old: 1}
ko_list: [gone, other]
sorted: [b]
hash_arrays: [{b: 2}]
strategy_only: {b: 2}
re_one: [common]
re_two: [common]
conv_array: "abc"
conv_int: '7'
conv_hash_array: {k: v}
"dotted.key": dotted value
"quoted": {"a.b": {c: deep}}
nested: {list: [zero, one], map: {inner: value}}
interp_scope: "os=%{facts.os.family} env=%{::environment} cert=%{trusted.certname} role=%{role}"
interp_scope_fn: "%{scope('facts.os.family')}|%{scope('role')}"
interp_quoted: "%{facts.\"os\".family}|%{facts.'os'.release.major}"
interp_lookup: "%{lookup('int')} and %{hiera('greeting')}"
interp_lookup_dotted: "%{lookup('nested.map.inner')}"
interp_lookup_missing: "[%{lookup('no_such_key')}]"
interp_alias: "%{alias('nested')}"
interp_alias_list: "%{alias('list')}"
interp_literal: "%{literal('%')}{not interpolated}"
interp_empty: "a%{}b%{::}c"
interp_undefined: "[%{no_such_var}]"
interp_hash_in_string: "%{lookup('nested.map')}"
interp_in_hash: {"%{facts.os.family}_key": "%{role}"}
interp_in_array: ["%{role}", "%{lookup('int')}"]
interp_bad_method: "%{nosuch('x')}"
interp_alias_partial: "x %{alias('list')}"
interp_loop: "%{lookup('interp_loop')}"
interp_loop_a: "%{lookup('interp_loop_b')}"
interp_loop_b: "%{lookup('interp_loop_a')}"
interp_syntax: "%{facts..os}"
lookup_options:
  hash_deep:
    merge: deep
  layered:
    merge: unique
  ko:
    merge:
      strategy: deep
      knockout_prefix: "--"
  sorted:
    merge: {strategy: deep, sort_merged_arrays: true}
  strategy_only:
    merge: {strategy: hash}
  "^re_.*":
    merge: unique
  re_two:
    merge: first
  svc_list:
    merge: unique
  glob_list:
    merge: unique
  many_list:
    merge: unique
  conv_array:
    convert_to: Array
  conv_int:
    convert_to: Integer
  conv_hash_array:
    convert_to: Array
  bad_merge:
    merge: deeper
bad_merge: [x]
"#,
    ),
    // A module with its own layer and lookup_options.
    (
        "envs/production/modules/mymod/hiera.yaml",
        "---\nversion: 5\ndefaults:\n  data_hash: yaml_data\nhierarchy:\n  - name: module common\n    path: common.yaml\n",
    ),
    (
        "envs/production/modules/mymod/data/common.yaml",
        "mymod::only: from the module\nmymod::layered: [module]\nmymod::merged: {m: 1}\nmymod::interp: \"%{lookup('greeting')} / %{lookup('mymod::only')}\"\nunqualified: dropped with a warning\nlookup_options:\n  mymod::merged:\n    merge: hash\n  \"^mymod::lay.*\":\n    merge: unique\n",
    ),
    (
        "envs/production/data/nodes/web2.example.com.yaml",
        "mymod::merged: {n: 2}\ngreeting: hello from web2\n",
    ),
    // A module whose data does not parse: only its keys fail.
    (
        "envs/production/modules/broken/hiera.yaml",
        "---\nversion: 5\nhierarchy:\n  - name: module common\n    path: common.yaml\n    data_hash: yaml_data\n",
    ),
    (
        "envs/production/modules/broken/data/common.yaml",
        "broken::key: [unclosed\n",
    ),
    // An environment with a data file that does not parse: every lookup
    // reads lookup_options from it, so every lookup fails.
    (
        "envs/broken/hiera.yaml",
        "---\nversion: 5\ndefaults: {data_hash: yaml_data}\nhierarchy:\n  - {name: bad, path: bad.yaml}\n  - {name: common, path: common.yaml}\n",
    ),
    ("envs/broken/data/bad.yaml", "key: [1\nother: 2\n"),
    ("envs/broken/data/common.yaml", "fine: value\n"),
    // YAML as Puppet reads it: aliases and merge keys (which Hiera 3's
    // reader refuses), and a date in another file (refused, naming it).
    (
        "envs/yamlish/hiera.yaml",
        "---\nversion: 5\ndefaults: {data_hash: yaml_data}\nhierarchy:\n  - {name: common, path: common.yaml}\n",
    ),
    (
        "envs/yamlish/data/common.yaml",
        "base: &base\n  port: 80\n  hosts: &hosts [a, b]\nsite:\n  <<: *base\n  port: 8080\nmirror: *base\nall_hosts: [*hosts, *hosts]\n",
    ),
    (
        "envs/dated/hiera.yaml",
        "---\nversion: 5\ndefaults: {data_hash: yaml_data}\nhierarchy:\n  - {name: common, path: common.yaml}\n",
    ),
    ("envs/dated/data/common.yaml", "released: 2024-01-02\n"),
    // Files that leave `defaults` or `hierarchy` to Puppet's own.
    (
        "envs/nodefaults/hiera.yaml",
        "---\nversion: 5\nhierarchy:\n  - {name: common, path: common.yaml}\n",
    ),
    (
        "envs/nodefaults/data/common.yaml",
        "plain: read as yaml_data\n",
    ),
    (
        "envs/nohierarchy/hiera.yaml",
        "---\nversion: 5\ndefaults: {datadir: other, data_hash: yaml_data}\n",
    ),
    (
        "envs/nohierarchy/other/common.yaml",
        "elsewhere: from other/\n",
    ),
    ("envs/versiononly/hiera.yaml", "---\nversion: 5\n"),
    ("envs/versiononly/data/common.yaml", "only: the version\n"),
    // Odd data: an empty file and a list (warned about, read as {}), a
    // Symbol (not Puppet data), a merge Hash with an option deep does not
    // take, convert_to of several types, interpolated Hash keys.
    (
        "envs/odd/hiera.yaml",
        "---\nversion: 5\ndefaults: {datadir: data, data_hash: yaml_data}\nhierarchy:\n  - {name: node, path: \"nodes/%{trusted.certname}.yaml\"}\n  - {name: empty, path: empty.yaml}\n  - {name: list, path: list.yaml}\n  - {name: common, path: common.yaml}\n",
    ),
    ("envs/odd/data/empty.yaml", ""),
    ("envs/odd/data/list.yaml", "- a\n"),
    (
        "envs/odd/data/nodes/web1.example.com.yaml",
        "uh: [2]\nhh: {b: 2}\nma: [{c: 3}]\n",
    ),
    (
        "envs/odd/data/common.yaml",
        r#"uh: {a: 1}
hh: [1]
sym: :a_symbol
bogus: {a: 1}
al_missing: "%{alias('nope')}"
lk_hash: "x%{lookup('uh')}y"
tr: "%{trusted}"
keyi: {"%{trusted.certname}": "%{facts.os.family}"}
ca: [1, 2]
ci: 3
cs: "true"
ma: [{a: 1}, {b: 2}]
lookup_options:
  ca: {convert_to: [Array]}
  ci: {convert_to: String}
  cs: {convert_to: Boolean}
  bogus: {merge: {strategy: deep, no_such_option: 1}}
"#,
    ),
    // Two hierarchy entries of one name: Puppet refuses the environment.
    (
        "envs/twice/hiera.yaml",
        "---\nversion: 5\ndefaults: {data_hash: yaml_data}\nhierarchy:\n  - {name: a, path: a.yaml}\n  - {name: a, path: b.yaml}\n",
    ),
    ("envs/twice/data/a.yaml", "k: v\n"),
    // An environment without hiera.yaml: only the global layer answers.
    ("envs/bare/manifests/site.pp", "\n"),
    // Facts: the four trusted ones together, as Puppet requires.
    (
        "facts.json",
        r#"{"clientcert": "web1.example.com", "hostname": "web1", "domain": "example.com", "fqdn": "web1.example.com", "role": "web", "os": {"family": "Debian", "release": {"major": "12"}}, "services": ["ntp", "dns"]}"#,
    ),
    (
        "facts.yaml",
        "clientcert: web2.example.com\nhostname: web2\ndomain: example.com\nfqdn: web2.example.com\nos: {family: RedHat}\nservices: dns\n",
    ),
];

/// Writes the tree under `root`.
pub(crate) fn write(root: &Path) {
    for (path, text) in FILES {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}
