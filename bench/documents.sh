#!/usr/bin/env bash
# Whole effective documents: hierad sending a node's
# whole effective `astute` against a bare hyper server sending the same
# bytes, same client (`hierad bench --get`), at c=32 and with one client.
#
#   bash bench/documents.sh           # about 4 minutes after the release build
#
# Requests: `GET …/nodes/<fqdn>/resources/astute/values?effective` (the
# config API), `GET /api/v1/data/1/astute?level=nodes=<fqdn>` (Hiera 5's
# data_hash), both over every node at random, and the latter revalidated
# with its ETag (one node, `If-None-Match`: 304). Then the memory the
# encoded documents cost: RSS before and after every node's document was
# sent once through each route.
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
prepare documents

echo "== generating and importing $NODES nodes" >&2
generated "$NODES"

plan=$work/env/bench-plan.json
node=$(jq -r '.nodes[0]' "$plan")
# Every node registered, as Fuel registers its nodes: each config API read
# at a node's path is checked against the register.
jq -r '.nodes[]' "$plan" | xargs "$bin" register add --env 1 --level nodes --db "$work/env.db" >/dev/null
effective='/api/v1/config/environments/1/nodes/{node}/resources/astute/values?effective'
data='/api/v1/data/1/astute?level=nodes={node}'

start hierad "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample
hierad_pid=$PID hierad_url=$URL
if [ -n "$BEFORE" ]; then
  start before "$BEFORE" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample
  before_url=$URL
fi
one=${data//\{node\}/$node}
curl -sf -D "$work/headers" -o "$work/body.json" "$hierad_url$one"
etag=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *\([^\r]*\).*/\1/p' "$work/headers")
start bare "$bin" bench baseline-server --listen 127.0.0.1:0 --body "$work/body.json"
bare_url=$URL
echo "document: $(wc -c <"$work/body.json") bytes, ETag $etag" >&2

# Memory: RSS before and after every node's document went out once
# through each route (each is then encoded and kept).
before_kib=$(rss_kib "$hierad_pid")
jq -r '.nodes[]' "$plan" | while read -r n; do
  curl -sf -o /dev/null "$hierad_url${data//\{node\}/$n}"
  curl -sf -o /dev/null "$hierad_url${effective//\{node\}/$n}"
done
after_kib=$(rss_kib "$hierad_pid")

run() { # NAME URL CONNS PATH [ARGS…]: requests/s and p99 (µs)
  local name=$1 url=$2 conns=$3 path=$4; shift 4
  "$bin" bench --server "$url" --plan "$plan" -c "$conns" -d "${DURATION}s" --get "$path" \
    --label "$name" --json "$@" >"$OUT/doc-$name-c$conns-r$round.json"
  jq -r --arg n "$name" --arg c "$conns" \
    '"\($n) c=\($c): \(.lookups_per_s | floor)/s p99 \(.latency_us.p99) µs, errors \(.errors.total), \(.bytes_received / (.requests | if . == 0 then 1 else . end) | floor) bytes each"' \
    "$OUT/doc-$name-c$conns-r$round.json" >&2
}

for round in $(seq "$ROUNDS"); do
  echo "== round $round of $ROUNDS" >&2
  for c in 32 1; do
    run bare "$bare_url" "$c" "$data"
    run effective "$hierad_url" "$c" "$effective"
    run data "$hierad_url" "$c" "$data"
    run etag "$hierad_url" "$c" "$one" --header "If-None-Match: $etag"
    if [ -n "$BEFORE" ]; then
      run before-effective "$before_url" "$c" "$effective"
      run before-data "$before_url" "$c" "$data"
    fi
  done
done

{
  printf '%-18s %-5s %12s %10s %s\n' request conns 'req/s' 'p99 µs' '÷ bare (min..max)'
  names=(bare effective data etag)
  [ -n "$BEFORE" ] && names+=(before-effective before-data)
  for c in 32 1; do
    for name in "${names[@]}"; do
      printf '%-18s %-5s %12s %10s %s\n' "$name" "$c" "$(round_median doc "$name" "$c" .lookups_per_s)" \
        "$(round_median doc "$name" "$c" .latency_us.p99)" "$(round_ratio doc "$name" "$c")"
    done
  done
  echo "document $(wc -c <"$work/body.json") bytes; RSS $((before_kib / 1024)) MiB before," \
    "$((after_kib / 1024)) MiB after every one of $NODES nodes' documents was sent through both routes"
} | tee "$OUT/documents.txt"
