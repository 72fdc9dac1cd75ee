#!/usr/bin/env bash
# Benchmark: `hierad puppet-lookup` per call against the real `puppet
# lookup` per call, on the same Hiera 5 tree, facts and flags (the tree of
# the oracle suite, tests/oracle/hiera5/tree.rs, written by hand here in
# small: global, environment and module layers, lookup_options,
# interpolation). Prints the mean time per call of each and their ratio,
# per lookup kind, measured side by side in one run with hyperfine.
#
#   bash bench/puppet-lookup.sh                    # needs puppet 7 and hyperfine
#   BIN=target/debug/hierad bash bench/puppet-lookup.sh   # skip the release build
#
# Each case first checks that both print the same answer.
# Environment: RUNS (hyperfine runs per command, 10), BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
command -v puppet >/dev/null || { echo "needs puppet 7 (apt-get install puppet)" >&2; exit 1; }
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet
  BIN=target/release/hierad
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/conf/data "$work"/envs/production/data/nodes "$work"/envs/production/data/os \
  "$work"/envs/production/modules/mymod/data
cat >"$work"/conf/hiera.yaml <<'YAML'
version: 5
hierarchy:
  - {name: global, path: common.yaml, data_hash: yaml_data}
YAML
echo 'global_key: from global' >"$work"/conf/data/common.yaml
cat >"$work"/envs/production/hiera.yaml <<'YAML'
version: 5
defaults: {datadir: data, data_hash: yaml_data}
hierarchy:
  - {name: node, path: "nodes/%{trusted.certname}.yaml"}
  - {name: os, path: "os/%{facts.os.family}.yaml"}
  - {name: common, path: common.yaml}
YAML
cat >"$work"/envs/production/data/nodes/web1.example.com.yaml <<'YAML'
settings: {a: {x: 1}}
packages: [vim]
YAML
cat >"$work"/envs/production/data/os/Debian.yaml <<'YAML'
settings: {a: {y: 2}, b: 3}
packages: [curl]
YAML
cat >"$work"/envs/production/data/common.yaml <<'YAML'
message: "hello %{trusted.certname} on %{facts.os.family}, %{lookup('global_key')}"
settings: {c: 4}
packages: [git]
lookup_options:
  settings: {merge: deep}
  packages: {merge: unique}
YAML
cat >"$work"/envs/production/modules/mymod/hiera.yaml <<'YAML'
version: 5
hierarchy:
  - {name: module, path: common.yaml, data_hash: yaml_data}
YAML
echo 'mymod::port: 8080' >"$work"/envs/production/modules/mymod/data/common.yaml
cat >"$work"/facts.json <<'JSON'
{"clientcert": "web1.example.com", "hostname": "web1", "domain": "example.com",
 "fqdn": "web1.example.com", "os": {"family": "Debian"}}
JSON
flags="--confdir $work/conf --vardir $work/var --codedir $work/code --environmentpath $work/envs --node web1.example.com --facts $work/facts.json"
cases=(
  "interpolated:message"
  "deep-merged:settings"
  "unique-merged:packages"
  "module:mymod::port"
  "missing:--default none no_such_key"
)
printf '%-14s %16s %16s %8s\n' lookup "hierad (ms)" "puppet (ms)" ratio
for case in "${cases[@]}"; do
  name=${case%%:*}; args=${case#*:}
  # The same answer first: a figure for a different answer means nothing.
  # shellcheck disable=SC2086
  if [ "$($BIN puppet-lookup $flags $args)" != "$(puppet lookup $flags $args)" ]; then
    echo "$name: hierad puppet-lookup and puppet lookup answer differently" >&2
    exit 1
  fi
  hyperfine -N --warmup 2 --runs "${RUNS:-10}" --export-json "$work/$name.json" \
    "$BIN puppet-lookup $flags $args" \
    "puppet lookup $flags $args" >/dev/null
  ruby -rjson -e '
    r = JSON.parse(File.read(ARGV[0]))["results"]
    ours, theirs = r.map { |x| x["mean"] * 1000 }
    printf("%-14s %16.2f %16.2f %7.0fx\n", ARGV[1], ours, theirs, theirs / ours)
  ' "$work/$name.json" "$name"
done
