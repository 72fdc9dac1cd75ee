#!/usr/bin/env bash
# Benchmark: `hierad lookup` per call against the real `hiera` per call, on
# the Fuel node data in data/ (15-level hierarchy, deeper merges, 87 KB
# astute.yaml). Prints the mean time per call of each and their ratio, per
# lookup kind, measured side by side in one run with hyperfine.
#
#   bash bench/lookup-cli.sh            # needs hiera (Debian) and hyperfine
#
# Targets (BENCHMARKS.md): hierad <= 5 ms per call, >= 30x faster than hiera.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
command -v hiera >/dev/null || { echo "needs hiera (apt-get install hiera ruby-deep-merge)" >&2; exit 1; }
cargo build --release --quiet
bin=target/release/hierad
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
scope="::fqdn=node-126.test.domain.local"
cases=(
  "priority:keystone_auth_uri"
  "priority-large:network_metadata"
  "array:-a dns_nameservers"
  "hash:-h nova"
  "hash-large:-h network_scheme"
  "missing:no_such_key fallback"
)
printf '%-16s %12s %12s %8s\n' lookup "hierad (ms)" "hiera (ms)" ratio
for case in "${cases[@]}"; do
  name=${case%%:*}; args=${case#*:}
  hyperfine -N --warmup 3 --runs "${RUNS:-20}" --export-json "$out/$name.json" \
    "$bin lookup -c data/hiera.yaml $args $scope" \
    "hiera -c data/hiera.yaml $args $scope" >/dev/null
  ruby -rjson -e '
    r = JSON.parse(File.read(ARGV[0]))["results"]
    ours, theirs = r.map { |x| x["mean"] * 1000 }
    printf("%-16s %12.2f %12.2f %7.0fx\n", ARGV[1], ours, theirs, theirs / ours)
  ' "$out/$name.json" "$name"
done
