#!/usr/bin/env bash
# Replicas on PostgreSQL (BENCHMARKS.md), side by side with SQLite in one run:
#
#   a. write to visible on another replica: VISIBLE_WRITES key writes
#      through replica A, each read back through replica B on the same
#      PostgreSQL database until it shows (p50/p99; goal p99 < 50 ms);
#   b. lookup throughput of a PostgreSQL replica (B, not written to)
#      against a server on SQLite, same data, ROUNDS interleaved rounds
#      (goal: the same within noise, lookups never touch the database);
#   c. write throughput of each store: the import rate of one generated
#      environment through the import API, and sequential key writes of
#      one client (1 / p50 of the acknowledgement).
#
#   bash bench/replicas.sh            # about 2 minutes after the release build
#
# It starts a throwaway PostgreSQL (Debian's `postgresql` package, as
# `nobody` when run as root since PostgreSQL refuses root) in a temporary
# folder on a free port of 127.0.0.1, with its durable defaults (fsync on),
# and stops it at the end. Environment: VISIBLE_WRITES (1000), DURATION
# (seconds per lookup run, 10), ROUNDS (3), CONNS (32), REPLICA_NODES
# (100), OUT (target/bench-results), BIN (target/release/hierad, built).
set -euo pipefail
cd "$(dirname "$0")/.."
VISIBLE_WRITES=${VISIBLE_WRITES:-1000}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-32}
REPLICA_NODES=${REPLICA_NODES:-100}
OUT=${OUT:-target/bench-results}
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet
  BIN=$PWD/target/release/hierad
fi
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ ! -x "$pgbin/initdb" ]; then
  echo "bench/replicas.sh needs PostgreSQL's server (Debian's postgresql package; bash .ci/run installs it)" >&2
  exit 1
fi
work=$(mktemp -d)
pids=()
pg_up=
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi; }
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -n "$pg_up" ] && as_pg "$pgbin/pg_ctl" -D "$work/pg/data" stop -m fast -w -t 30 >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$OUT" "$work/pg"
chmod 755 "$work"
[ "$(id -u)" = 0 ] && chown nobody: "$work/pg"

# A port nobody answers on (bash's /dev/tcp connects or fails).
free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

echo "== replicas: a throwaway PostgreSQL" >&2
as_pg "$pgbin/initdb" -U hierad --auth=trust --encoding=UTF8 -D "$work/pg/data" >/dev/null
for attempt in 1 2 3; do
  port=$(free_port)
  if as_pg "$pgbin/pg_ctl" -D "$work/pg/data" -l "$work/pg/server.log" -w -t 60 \
    -o "-p $port -h 127.0.0.1 -k $work/pg -c max_connections=300" start >/dev/null; then
    pg_up=1
    break
  fi
  [ "$attempt" = 3 ] && { cat "$work/pg/server.log" >&2; exit 1; }
done
db="postgres://hierad@127.0.0.1:$port/postgres"

# start NAME CMD… (bench/lib.sh): sets PID and URL.
source bench/lib.sh

# field FILE KEY: a number of a one-line JSON report.
field() { grep -o "\"$2\":[0-9.eE+-]*" "$1" | head -n 1 | cut -d: -f2; }

"$BIN" bench generate --nodes "$REPLICA_NODES" "$work/gen" >/dev/null
start pg-a "$BIN" serve --listen 127.0.0.1:0 --db "$db" --no-sample
a_url=$URL
start sqlite "$BIN" serve --listen 127.0.0.1:0 --db "$work/sqlite.db" --no-sample
s_url=$URL

echo "== replicas: write throughput, import of $REPLICA_NODES nodes" >&2
"$BIN" bench load "$work/gen" --server "$a_url" --json >"$OUT/replicas-load-pg.json"
"$BIN" bench load "$work/gen" --server "$s_url" --json >"$OUT/replicas-load-sqlite.json"
start pg-b "$BIN" serve --listen 127.0.0.1:0 --db "$db" --no-sample
b_url=$URL

echo "== replicas: write to visible, $VISIBLE_WRITES writes" >&2
"$BIN" bench visible --write "$a_url" --read "$b_url" -n "$VISIBLE_WRITES" --json >"$OUT/replicas-visible-pg.json"
"$BIN" bench visible --write "$a_url" --read "$a_url" -n "$VISIBLE_WRITES" --json >"$OUT/replicas-same-pg.json"
"$BIN" bench visible --write "$s_url" --read "$s_url" -n "$VISIBLE_WRITES" --json >"$OUT/replicas-same-sqlite.json"

echo "== replicas: lookup throughput, $ROUNDS rounds" >&2
ratios=()
for round in $(seq "$ROUNDS"); do
  for store in pg sqlite; do
    url=$b_url
    [ "$store" = sqlite ] && url=$s_url
    "$BIN" bench --server "$url" --plan "$work/gen/bench-plan.json" -c "$CONNS" -d "${DURATION}s" \
      --label "replica-$store" --json >"$OUT/replicas-lookup-$store-r$round.json"
  done
  pg=$(field "$OUT/replicas-lookup-pg-r$round.json" lookups_per_s)
  sq=$(field "$OUT/replicas-lookup-sqlite-r$round.json" lookups_per_s)
  ratios+=("$(awk -v a="$pg" -v b="$sq" 'BEGIN { printf("%.0f/%.0f = %.2f", a, b, a / b) }')")
done

ms() { awk -v us="$1" 'BEGIN { printf("%.2f", us / 1000) }'; }
per_s() { awk -v us="$1" 'BEGIN { printf("%.0f", 1e6 / us) }'; }
v=$OUT/replicas-visible-pg.json
lp=$OUT/replicas-load-pg.json ls=$OUT/replicas-load-sqlite.json
ap=$(field "$OUT/replicas-same-pg.json" ack_p50_us) as=$(field "$OUT/replicas-same-sqlite.json" ack_p50_us)
{
  echo "Replicas on PostgreSQL (bench/replicas.sh, $VISIBLE_WRITES writes, $REPLICA_NODES nodes, c=$CONNS, ${DURATION}s x $ROUNDS)"
  echo "write to visible on replica B: p50 $(ms "$(field "$v" visible_p50_us)") ms, p99 $(ms "$(field "$v" visible_p99_us)") ms, max $(ms "$(field "$v" visible_max_us)") ms (goal p99 < 50 ms; $(field "$v" reads_per_write) reads per write)"
  echo "lookups/s, PostgreSQL replica / SQLite, per round: ${ratios[*]}"
  echo "import documents/s: PostgreSQL $(field "$lp" documents_per_s), SQLite $(field "$ls" documents_per_s), ratio $(awk -v a="$(field "$lp" documents_per_s)" -v b="$(field "$ls" documents_per_s)" 'BEGIN { printf("%.2f", a / b) }')"
  echo "key writes, one client: PostgreSQL ack p50 $(ms "$ap") ms ($(per_s "$ap")/s), SQLite $(ms "$as") ms ($(per_s "$as")/s), ratio $(awk -v a="$ap" -v b="$as" 'BEGIN { printf("%.2f", b / a) }')"
} | tee "$OUT/replicas.txt"
