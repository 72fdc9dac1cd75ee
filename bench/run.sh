#!/usr/bin/env bash
# The benchmark of BENCHMARKS.md: hierad's five figures, measured side by
# side in one run, each printed with its ratio to its baseline.
#
#   bash bench/run.sh                 # about 6 minutes after the release build
#
# 27 runs of DURATION + 1 s warm-up, plus generating, importing and figure 5.
#
#   1. throughput: hierad doing full Hiera lookups (Fuel's 17-level
#      hierarchy, 1,000 nodes' data) against a bare hyper server answering
#      a fixed body, same client (hierad bench), c=32;
#   2. large answers: hash lookups of the ~55 KB network_metadata;
#   3. scale: 1,000 nodes against 10 (throughput), server RSS, start-up
#      until the first answer, import rate through the import API;
#   4. writes under read load: p99 while a new version is published every
#      100 ms, against the p99 of the same load without writes;
#   5. `hierad lookup` per call against `hiera` per call
#      (bench/lookup-cli.sh);
#   6. write to visible: VISIBLE_WRITES key writes through one server, each
#      read back through a second server on the same SQLite file until it
#      shows (p50/p99), against the same rounds on one server;
#   7. replicas on PostgreSQL (bench/replicas.sh, a throwaway PostgreSQL):
#      write to visible across two replicas, lookup throughput of a replica
#      on PostgreSQL against one on SQLite, write throughput of each store
#      (REPLICAS=0 skips it);
#   8. TLS and authentication (bench/tls.sh): TLS servers, alone and with
#      an auth file (bearer token, Basic, client certificate), each loaded
#      together with a plain server on the same data, c=CONNS and c=1
#      (TLS=0 skips it; needs openssl).
#
# Runs 1, 2 and 4 are repeated in ROUNDS interleaved rounds; ratios are
# taken within a round, then the median across rounds is printed.
# Environment: DURATION (seconds per run, 10), ROUNDS (3), CONNS (32),
# NODES (1000), SMALL (10), CLI_RUNS (10; 0 skips figure 5), VISIBLE_WRITES (1000),
# REPLICAS (1; 0 skips figure 7), TLS (1; 0 skips figure 8),
# OUT (target/bench-results). All traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-32}
NODES=${NODES:-1000}
SMALL=${SMALL:-10}
CLI_RUNS=${CLI_RUNS:-10}
VISIBLE_WRITES=${VISIBLE_WRITES:-1000}
REPLICAS=${REPLICAS:-1}
TLS=${TLS:-1}
OUT=${OUT:-target/bench-results}

# prepare and start (bench/lib.sh): BIN, work, pids, OUT; servers.
source bench/lib.sh
prepare run
rm -f "$OUT"/*.json "$OUT"/*.svg "$OUT"/*.txt

stop() {
  kill "$1"
  wait "$1" 2>/dev/null || true
}

echo "== generating $NODES and $SMALL nodes" >&2
"$bin" bench generate --nodes "$NODES" "$work/big"
"$bin" bench generate --nodes "$SMALL" "$work/small"

echo "== importing through the import API" >&2
start import-big "$bin" serve --listen 127.0.0.1:0 --db "$work/big.db" --no-sample
"$bin" bench load "$work/big" --server "$URL" --json >"$OUT/import-big.json"
stop "$PID"
start import-small "$bin" serve --listen 127.0.0.1:0 --db "$work/small.db" --no-sample
"$bin" bench load "$work/small" --server "$URL" --json >"$OUT/import-small.json"
stop "$PID"

echo "== start-up on the $NODES-node database" >&2
# From the process start to the first lookup answered.
probe='{"environment":1,"level":"nodes=node-1.test.domain.local","key":"fqdn","scope":{"::fqdn":"node-1.test.domain.local"}}'
t0=$(date +%s.%N)
start big "$bin" serve --listen 127.0.0.1:0 --db "$work/big.db" --no-sample
big_pid=$PID big_url=$URL
until curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -d "$probe" "$big_url/api/v1/lookup"; do sleep 0.01; done
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf("{\"startup_s\": %.3f}\n", b - a) }' >"$OUT/startup.json"
start small "$bin" serve --listen 127.0.0.1:0 --db "$work/small.db" --no-sample
small_url=$URL
start baseline "$bin" bench baseline-server --listen 127.0.0.1:0
base_url=$URL

run() { # NAME URL PLAN [ARGS…]
  local name=$1 url=$2 plan=$3; shift 3
  "$bin" bench --server "$url" --plan "$plan" -c "$CONNS" -d "${DURATION}s" \
    --label "$name" --json "$@" >"$OUT/$name-r$round.json"
  "$bin" bench summary --run "$OUT/$name-r$round.json" >&2
}

for round in $(seq "$ROUNDS"); do
  echo "== round $round of $ROUNDS" >&2
  run baseline "$base_url" "$work/big/bench-plan.json"
  run hierad-big "$big_url" "$work/big/bench-plan.json"
  run hierad-small "$small_url" "$work/small/bench-plan.json"
  run large "$big_url" "$work/big/bench-plan.json" --key network_metadata --resolution hash
  run writes "$big_url" "$work/big/bench-plan.json" --write-every 100ms
  run idle "$big_url" "$work/big/bench-plan.json"
  # Last: a flood of distinct lookups fills the answer cache for a while.
  run hierad-unique "$big_url" "$work/big/bench-plan.json" --unique
  run hierad-small-unique "$small_url" "$work/small/bench-plan.json" --unique
  run large-unique "$big_url" "$work/big/bench-plan.json" --key network_metadata --resolution hash --unique
done
awk '/^VmRSS:/ { rss = $2 * 1024 } /^VmHWM:/ { peak = $2 * 1024 }
  END { printf("{\"rss_bytes\": %.0f, \"peak_rss_bytes\": %.0f}\n", rss, peak) }' \
  "/proc/$big_pid/status" >"$OUT/memory.json"

echo "== write to visible: another server on the same SQLite file" >&2
# The same rounds through one server (write and read on it) are the
# baseline: what an acknowledged write costs before anyone else can see it.
start replica "$bin" serve --listen 127.0.0.1:0 --db "$work/big.db" --no-sample
replica_url=$URL
"$bin" bench visible --write "$big_url" --read "$big_url" -n "$VISIBLE_WRITES" --json >"$OUT/visible-same.json"
"$bin" bench visible --write "$big_url" --read "$replica_url" -n "$VISIBLE_WRITES" --json >"$OUT/visible.json"
stop "$PID"

if [ "$REPLICAS" -gt 0 ]; then
  echo "== replicas on PostgreSQL" >&2
  # Its own servers: stop this run's first, so they do not share the cores.
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  pids=()
  BIN=$bin OUT=$OUT DURATION=$DURATION ROUNDS=$ROUNDS CONNS=$CONNS VISIBLE_WRITES=$VISIBLE_WRITES \
    bash bench/replicas.sh >&2
fi

if [ "$TLS" -gt 0 ]; then
  echo "== TLS and authentication" >&2
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  pids=()
  BIN=$bin OUT=$OUT DURATION=$DURATION ROUNDS=$ROUNDS CONNS=$CONNS bash bench/tls.sh >&2
fi

if [ "$CLI_RUNS" -gt 0 ]; then
  echo "== hierad lookup against hiera, per call" >&2
  RUNS=$CLI_RUNS bash bench/lookup-cli.sh | tee "$OUT/cli.txt" >&2
fi

"$bin" bench chart -o "$OUT/latency.svg" "$OUT"/baseline-r1.json "$OUT"/hierad-big-r1.json \
  "$OUT"/hierad-small-r1.json "$OUT"/hierad-unique-r1.json "$OUT"/large-r1.json "$OUT"/writes-r1.json
"$bin" bench summary "$OUT" | tee "$OUT/summary.txt"
if [ -f "$OUT/replicas.txt" ]; then cat "$OUT/replicas.txt"; fi
if [ -f "$OUT/tls.txt" ]; then cat "$OUT/tls.txt"; fi
