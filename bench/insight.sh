#!/usr/bin/env bash
# Issue 33's routes over NODES registered nodes of `hierad bench generate`'s
# environment, through one server, each timed with curl and put against
# a plain effective read of one node in the same run:
#   - a dry-run of a root-level change (`PUT …/keys/K?dry_run=true`),
#   - `nodes/changed?since=G` after that change is written,
#   - an effective read at the generation before the write against the
#     same read of the newest (goal: within 2x).
# The dry-run and nodes/changed figures are the median of RUNS requests;
# the reads' are medians of RUNS rounds of READS requests each over one
# connection, the old generation's and the newest's rounds taken in turn
# (a read takes about a millisecond: one request a figure is mostly
# noise). The first read at an old generation, which builds its
# snapshot, is left out and printed apart.
#
#   BIN=target/debug/hierad NODES=1000 bash bench/insight.sh
#
# Environment: NODES (1000), RUNS (5), READS (50), BIN (default: the
# release build), OUT (target/bench-results).
set -euo pipefail
cd "$(dirname "$0")/.."
NODES=${NODES:-1000}
RUNS=${RUNS:-5}
READS=${READS:-50}

source bench/lib.sh
prepare insight
generated "$NODES"
start hierad "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample
api=$URL/api/v1/config/environments/1
node=$(jq -r '.nodes[0]' "$work/env/bench-plan.json")
jq -c '.nodes' "$work/env/bench-plan.json" |
  curl -sf -o /dev/null -X PUT -H 'Content-Type: application/json' --data-binary @- \
    "$api/hierarchy_levels/nodes/register"

# median_s METHOD URL [BODY]: the median of RUNS requests' seconds; every
# answer must be 200.
median_s() {
  local method=$1 url=$2 body=${3:-}
  for _ in $(seq "$RUNS"); do
    timed "$method" "$url" "$body"
  done | sort -g | awk '{ v[NR] = $1 } END { printf("%.3f", v[int((NR + 1) / 2)]) }'
}
timed() {
  local out
  out=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 60 -X "$1" \
    -H 'Content-Type: application/json' ${3:+--data-binary "$3"} "$2")
  [ "${out%% *}" = 200 ] || { echo "$1 $2 answered ${out%% *}" >&2; exit 1; }
  echo "${out#* }"
}
# reads URL: each of READS GETs' seconds, over one connection; every
# answer must be 200.
reads() {
  local args=()
  for _ in $(seq "$READS"); do args+=(-o /dev/null "$1"); done
  curl -s -w '%{http_code} %{time_total}\n' --max-time 60 "${args[@]}" |
    while read -r code seconds; do
      [ "$code" = 200 ] || { echo "GET $1 answered $code" >&2; exit 1; }
      echo "$seconds"
    done
}
median() { sort -g | awk '{ v[NR] = $1 } END { printf("%.5f", v[int((NR + 1) / 2)]) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf("%.1f", a / b) }'; }

read_url="$api/nodes/$node/resources/astute/values?effective"
base=$(reads "$read_url" | median)
key="$api/resources/astute/values/keys/bench_insight"
dry=$(median_s PUT "$key?dry_run=true" '{"changed": true}')
before=$(curl -sf -D - -o /dev/null "$URL/api/v1/changes?since=0" | awk -F': ' 'tolower($1) == "x-hierad-generation" { print $2 + 0 }')
curl -sf -o /dev/null -X PUT -H 'Content-Type: application/json' -d '{"changed": true}' "$key"
changed=$(median_s GET "$api/nodes/changed?since=$before")
first_old=$(timed GET "$read_url&generation=$before")
for _ in $(seq "$RUNS"); do
  reads "$read_url" >>"$work/newest"
  reads "$read_url&generation=$before" >>"$work/old"
done
newest=$(median <"$work/newest")
old=$(median <"$work/old")
echo "$NODES registered nodes, medians of $RUNS (reads: of $RUNS x $READS); baseline: an effective read of one node, $base s"
echo "dry-run of a root-level change: $dry s ($(ratio "$dry" "$base")x the baseline)"
echo "nodes/changed since the generation before it: $changed s ($(ratio "$changed" "$base")x)"
echo "read at generation $before: $old s against the newest's $newest s ($(ratio "$old" "$newest")x; its first read, building the snapshot: $first_old s)"
