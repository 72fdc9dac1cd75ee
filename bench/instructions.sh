#!/usr/bin/env bash
# Instructions per lookup, by key class, counted by callgrind: a figure that
# does not move with the machine's load (requests/s on a shared 2-core
# machine do), for telling whether a change to the lookup path helps.
#
#   bash bench/instructions.sh        # about a minute after the release build; needs valgrind
#
# Each class runs against its own `hierad serve --cache-mib 0` (every
# request a full lookup) under callgrind, which counts only while the
# measured requests run (after start-up and a warm-up). The bare hyper
# server of bench/run.sh answers the same requests as the baseline.
# The last two rows are one node's whole effective `astute` (GET
# /api/v1/data/…, Hiera 5's data_hash) from the bare server sending the
# same bytes and from hierad.
# `large-nomemo` is the large class with `--memo-mib 0`; `bare-large` the
# bare server sending network_metadata's answer (the large class's bytes).
# The fixed cost of a request (CACHED=1): a small lookup from the answer
# cache (`cached`, `--key fqdn`, every node warmed first), a Fuel node's
# 30 KB effective `astute` through the data route (`data30`, its root
# level tests/fixtures/fuel's neut_vlan.ceph.controller-ephemeral-ceph.yaml)
# and through the config route (`effective30`, `GET …/values?effective`),
# and revalidated with its ETag (`etag30`, `etag-eff30`: 304), each
# against the bare server sending the data route's bytes (none for the
# 304s).
# Environment: NODES (1000), N (requests per class, 300; `large` gets N/5),
# CLASSES (the lookup classes, all six by default), DOCUMENT (0: skip the
# document rows), CACHED (0: skip the fixed-cost rows), BIN (the hierad
# binary; default: the release build),
# CLIENT (the binary whose `bench` sends the lookups and runs the bare
# server; default: BIN),
# LOG (the measured servers' HIERAD_LOG, warn: no access line; `info`,
# the default of `hierad serve`, writes one a request),
# OUT (target/bench-results; the table, and each class's callgrind output,
# instructions-CLASS.callgrind, for callgrind_annotate).
set -euo pipefail
# A failure inside $(count …) stops the run too.
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
# address_in LOG (bench/lib.sh): a server's URL once its line is whole.
source bench/lib.sh
NODES=${NODES:-1000}
N=${N:-300}
CLASSES=${CLASSES:-priority interpolated hash array missing large}
DOCUMENT=${DOCUMENT:-1}
CACHED=${CACHED:-1}
OUT=${OUT:-target/bench-results}

if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet
  BIN=$PWD/target/release/hierad
fi
bin=$BIN
# The load generator: CLIENT, or the same binary. An older server with the
# current client gets the requests as today's shim sends them to it.
client=${CLIENT:-$BIN}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$OUT"

"$bin" bench generate --nodes "$NODES" "$work/env" >/dev/null 2>&1
HIERAD_LOG=warn "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample 2>"$work/import.log" &
import_pid=$!
url=""
for _ in $(seq 200); do
  url=$(address_in "$work/import.log")
  [ -n "$url" ] && break
  sleep 0.05
done
"$bin" bench load "$work/env" --server "$url" >/dev/null 2>&1
kill "$import_pid"
wait "$import_pid" 2>/dev/null || true

# count LABEL REQUESTS SERVER-ARGS… -- BENCH-ARGS…: instructions per request,
# after WARM requests (100).
count() {
  local label=$1 n=$2
  shift 2
  local server=() bench=()
  while [ "$1" != "--" ]; do server+=("$1"); shift; done
  shift
  bench=("$@")
  local out=$OUT/instructions-$label.callgrind log=$work/$label.log
  # The bare server is part of the bench tools: CLIENT's.
  local server_bin=$bin
  [ "${server[0]}" = bench ] && server_bin=$client
  HIERAD_LOG=${LOG:-warn} valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
    "$server_bin" "${server[@]}" --listen 127.0.0.1:0 2>"$log" &
  local pid=$! url=""
  for _ in $(seq 600); do
    url=$(address_in "$log")
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { kill "$pid"; echo "$label: the server did not start" >&2; cat "$log" >&2; exit 1; }
  local plan=("--plan" "$work/env/bench-plan.json" -c 4 "${bench[@]}")
  "$client" bench --server "$url" "${plan[@]}" -n "${WARM:-100}" >"$work/$label.warmup" 2>&1 || {
    kill "$pid"
    fail "$label: the warm-up failed" "$work/$label.warmup"
  }
  toggle on "$label" "$pid"
  local ran=ok
  "$client" bench --server "$url" "${plan[@]}" -n "$n" --warmup 0s >"$work/$label.bench" 2>&1 || ran=failed
  toggle off "$label" "$pid"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  # A figure only from a run that answered every request: a run against
  # a half-read address (`http://127.0.0.1:4`) failed silently and once
  # printed 465 instructions per request for `missing`.
  [ "$ran" = ok ] || fail "$label: the measured run failed" "$work/$label.bench"
  grep -q "^ *errors *0 " "$work/$label.bench" ||
    fail "$label: the measured run had errors" "$work/$label.bench"
  local total
  total=$(callgrind_annotate "$out" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
  [ -n "$total" ] || fail "$label: callgrind_annotate found no totals in $out" /dev/null
  # No request costs fewer than a thousand instructions: less means the
  # counted window missed the requests.
  [ $((total / n)) -ge 1000 ] ||
    fail "$label: only $total instructions counted for $n requests" "$work/$label.bench"
  echo $((total / n))
}

# fail MESSAGE FILE: stops the whole run, showing FILE.
fail() {
  echo "$1" >&2
  cat "$2" >&2
  exit 1
}

# toggle on|off LABEL PID: callgrind's counting, confirmed (else the
# server is stopped and the run with it).
toggle() {
  local said
  said=$(callgrind_control -i "$1" "$3" 2>&1) || true
  case $said in
    *OK*) ;;
    *) kill "$3"; echo "$2: callgrind_control -i $1 did not confirm" >&2; echo "$said" >&2; exit 1 ;;
  esac
}

# fixed_cost_rows: the 30 KB document's rows (see the top).
fixed_cost_rows() {
  cp -r "$work/env" "$work/env30"
  cp tests/fixtures/fuel/neut_vlan.ceph.controller-ephemeral-ceph.yaml "$work/env30/root/astute.yaml"
  "$bin" bench load "$work/env30" --db "$work/env30.db" >/dev/null 2>&1
  local node one url="" etag
  node=$(jq -r '.nodes[0]' "$work/env/bench-plan.json")
  one="/api/v1/data/1/astute?level=nodes=$node"
  HIERAD_LOG=warn "$bin" serve --listen 127.0.0.1:0 --db "$work/env30.db" --no-sample 2>"$work/doc30.log" &
  local doc_pid=$!
  for _ in $(seq 200); do
    url=$(address_in "$work/doc30.log")
    [ -n "$url" ] && curl -sf -D "$work/doc30.head" -o "$work/doc30.json" "$url$one" && break
    sleep 0.05
  done
  kill "$doc_pid"
  wait "$doc_pid" 2>/dev/null || true
  [ -s "$work/doc30.json" ] || fail "the 30 KB document could not be read at $url$one" "$work/doc30.log"
  etag=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *\([^\r]*\).*/\1/p' "$work/doc30.head")
  : >"$work/empty"
  local bare per
  bare=$(count bare-data30 "$N" bench baseline-server --body "$work/doc30.json" -- --get "$one")
  per=$(count data30 "$N" serve --db "$work/env30.db" --no-sample -- --get "$one")
  printf '%-14s %12d %8s\n' bare-data30 "$bare" "($(wc -c <"$work/doc30.json") B)"
  printf '%-14s %12d %8.2f\n' data30 "$per" "$(echo "$per / $bare" | bc -l)"
  # The same node's whole effective `astute` through the config route.
  local effective="/api/v1/config/environments/1/nodes/$node/resources/astute/values?effective"
  per=$(count effective30 "$N" serve --db "$work/env30.db" --no-sample -- --get "$effective")
  printf '%-14s %12d %8.2f\n' effective30 "$per" "$(echo "$per / $bare" | bc -l)"
  bare=$(count bare-empty "$N" bench baseline-server --body "$work/empty" -- --get "$one")
  per=$(count etag30 "$N" serve --db "$work/env30.db" --no-sample -- --get "$one" --header "If-None-Match: $etag")
  printf '%-14s %12d %8s\n' bare-empty "$bare" "(0 B)"
  printf '%-14s %12d %8.2f\n' etag30 "$per" "$(echo "$per / $bare" | bc -l)"
  per=$(count etag-eff30 "$N" serve --db "$work/env30.db" --no-sample -- --get "$effective" --header "If-None-Match: $etag")
  printf '%-14s %12d %8.2f\n' etag-eff30 "$per" "$(echo "$per / $bare" | bc -l)"
}

base=$(count baseline "$N" bench baseline-server -- --mix priority=1)
{
  printf '%-14s %12s %8s\n' class instr/req ratio
  printf '%-14s %12d %8s\n' bare-hyper "$base" 1.00
  for class in $CLASSES; do
    n=$N
    [ "$class" = large ] && n=$((N / 5))
    per=$(count "$class" "$n" serve --db "$work/env.db" --no-sample --cache-mib 0 -- --mix "$class=1")
    printf '%-14s %12d %8.2f\n' "$class" "$per" "$(echo "$per / $base" | bc -l)"
  done
  # The large class without the snapshot's answer memo (configdb/memo.rs):
  # every request merges and encodes its answer.
  if [[ " $CLASSES " == *" large "* ]]; then
    per=$(count large-nomemo $((N / 5)) serve --db "$work/env.db" --no-sample --cache-mib 0 --memo-mib 0 -- --mix large=1)
    printf '%-14s %12d %8.2f\n' large-nomemo "$per" "$(echo "$per / $base" | bc -l)"
  fi
  if [ "$CACHED" = 1 ]; then
    per=$(WARM=$((5 * NODES)) count cached "$N" serve --db "$work/env.db" --no-sample -- --key fqdn)
    printf '%-14s %12d %8.2f\n' cached "$per" "$(echo "$per / $base" | bc -l)"
    fixed_cost_rows
  fi
  [ "$DOCUMENT" = 0 ] && exit 0
  data='/api/v1/data/1/astute?level=nodes={node}'
  node=$(grep -A1 '"nodes"' "$work/env/bench-plan.json" | tail -1 | tr -d ' ",')
  HIERAD_LOG=warn "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample 2>"$work/doc.log" &
  doc_pid=$!
  url=""
  for _ in $(seq 200); do
    url=$(address_in "$work/doc.log")
    [ -n "$url" ] && curl -sf -o "$work/doc.json" "$url${data//\{node\}/$node}" && break
    sleep 0.05
  done
  kill "$doc_pid"
  wait "$doc_pid" 2>/dev/null || true
  # One node: after the warm-up, its document is encoded and kept.
  one=${data//\{node\}/$node}
  # The bare server sending network_metadata's answer, as the large class's
  # baseline.
  probe="{\"environment\":1,\"level\":\"nodes=$node\",\"key\":\"network_metadata\",\"resolution\":\"hash\",\"scope\":{\"::fqdn\":\"$node\"}}"
  HIERAD_LOG=warn "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample 2>"$work/large.log" &
  large_pid=$!
  for _ in $(seq 200); do
    url=$(address_in "$work/large.log")
    [ -n "$url" ] && curl -sf -X POST -H 'Content-Type: application/json' -d "$probe" -o "$work/large.json" "$url/api/v1/lookup" && break
    sleep 0.05
  done
  kill "$large_pid"
  wait "$large_pid" 2>/dev/null || true
  bare=$(count bare-large $((N / 5)) bench baseline-server --body "$work/large.json" -- --mix large=1)
  printf '%-14s %12d %8s\n' bare-large "$bare" "($(wc -c <"$work/large.json") B)"
  bare=$(count bare-doc "$N" bench baseline-server --body "$work/doc.json" -- --get "$one")
  per=$(count document "$N" serve --db "$work/env.db" --no-sample -- --get "$one")
  printf '%-14s %12d %8.2f\n' bare-document "$bare" 1.00
  printf '%-14s %12d %8.2f\n' document "$per" "$(echo "$per / $bare" | bc -l)"
} | tee "$OUT/instructions.txt"
