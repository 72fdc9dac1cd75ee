#!/usr/bin/env bash
# Large lookup answers, every request a full lookup:
# hash lookups of the ~55 KB `network_metadata` (deeper merge of 3 layers)
# with `--unique` (a scope variable no data reads: the answer cache never
# helps), against a bare hyper server sending the same answer's bytes,
# same client (`hierad bench`), at c=32 and with one client.
#
#   bash bench/large.sh               # about 3 minutes after the release build
#
# Servers: hierad as it runs by default (its snapshot's answer memo on),
# hierad with `--memo-mib 0` (no memo: every request merges and encodes),
# and BEFORE if given. Then the RSS of each hierad after the runs.
# Environment: DURATION (seconds per run, 5), ROUNDS (3), NODES (1000),
# BEFORE (another hierad binary measured in the same rounds, e.g. the
# previous commit's), BIN (the hierad binary; default: the release build),
# OUT (target/bench-results).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
NODES=${NODES:-1000}
BEFORE=${BEFORE:-}
OUT=${OUT:-target/bench-results}

# prepare and start (bench/lib.sh): BIN, work, pids, OUT; servers.
source bench/lib.sh
prepare large

echo "== generating and importing $NODES nodes" >&2
generated "$NODES"
plan=$work/env/bench-plan.json
node=$(jq -r '.nodes[0]' "$plan")

start memo "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample
memo_pid=$PID memo_url=$URL
start nomemo "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample --memo-mib 0
nomemo_pid=$PID nomemo_url=$URL
names=(bare memo nomemo)
if [ -n "$BEFORE" ]; then
  start before "$BEFORE" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample
  before_url=$URL
  names+=(before)
fi
# The answer every node gets (network_metadata is shared), as the bare
# server's body.
probe="{\"environment\":1,\"level\":\"nodes=$node\",\"key\":\"network_metadata\",\"resolution\":\"hash\",\"scope\":{\"::fqdn\":\"$node\"}}"
curl -sf -X POST -H 'Content-Type: application/json' -d "$probe" -o "$work/body.json" "$memo_url/api/v1/lookup"
curl -sf -X POST -H 'Content-Type: application/json' -d "$probe" -o "$work/nomemo.json" "$nomemo_url/api/v1/lookup"
cmp -s "$work/body.json" "$work/nomemo.json" || { echo "the two servers answer differently" >&2; exit 1; }
start bare "$bin" bench baseline-server --listen 127.0.0.1:0 --body "$work/body.json"
bare_url=$URL
echo "answer: $(wc -c <"$work/body.json") bytes" >&2

run() { # NAME URL CONNS: requests/s and p99 (µs)
  local name=$1 url=$2 conns=$3
  "$bin" bench --server "$url" --plan "$plan" -c "$conns" -d "${DURATION}s" \
    --key network_metadata --resolution hash --unique \
    --label "$name" --json >"$OUT/large-$name-c$conns-r$round.json"
  jq -r --arg n "$name" --arg c "$conns" \
    '"\($n) c=\($c): \(.lookups_per_s | floor)/s p99 \(.latency_us.p99) µs, errors \(.errors.total), \(.bytes_received / (.requests | if . == 0 then 1 else . end) | floor) bytes each"' \
    "$OUT/large-$name-c$conns-r$round.json" >&2
}

for round in $(seq "$ROUNDS"); do
  echo "== round $round of $ROUNDS" >&2
  for c in 32 1; do
    for name in "${names[@]}"; do
      url_var=${name}_url
      run "$name" "${!url_var}" "$c"
    done
  done
done

{
  printf '%-8s %-5s %12s %10s %s\n' server conns 'req/s' 'p99 µs' '÷ bare (min..max)'
  for c in 32 1; do
    for name in "${names[@]}"; do
      printf '%-8s %-5s %12s %10s %s\n' "$name" "$c" "$(round_median large "$name" "$c" .lookups_per_s)" \
        "$(round_median large "$name" "$c" .latency_us.p99)" "$(round_ratio large "$name" "$c")"
    done
  done
  echo "answer $(wc -c <"$work/body.json") bytes; RSS after the runs ($NODES nodes): memo on" \
    "$(($(rss_kib "$memo_pid") / 1024)) MiB, memo off $(($(rss_kib "$nomemo_pid") / 1024)) MiB"
} | tee "$OUT/large.txt"
