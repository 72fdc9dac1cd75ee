#!/usr/bin/env bash
# Server CPU per request, by lookup class (BENCHMARKS.md: small hash and
# array lookups at <= 2.5x a bare server's CPU per request): user + system
# time of the server's threads over N requests (the scheduler's count,
# bench/lib.sh `cpu_ns`), against the bare hyper server of bench/run.sh
# answering the same requests with the same client. Every hierad request
# is a full lookup (`--cache-mib 0`). CPU time, unlike instructions
# (bench/instructions.sh), includes the kernel's work on the sockets,
# which both servers pay; it moves with the machine's load, so compare
# the ratios of one run.
#
#   bash bench/cpu.sh               # a minute or two after the release build
#
# Environment: NODES (1000), N (requests per class, 20000), CLASSES
# (priority hash array missing), ROUNDS (3; the median ratio is printed
# with min..max), BEFORE (another hierad binary measured in the same
# rounds, e.g. the previous commit's), BIN (the hierad binary; default:
# the release build), OUT (target/bench-results), PIN (0: server and
# client anywhere, as in every run so far; 1, where taskset and 2 CPUs
# are: every server on CPU 0 and the client on CPU 1, which takes the
# cost of moving between CPUs out of both servers' figures), CONNS (the
# client's connections, 4). On loopback the server's CPU time includes
# waking the client for each answer (the receiving side's work runs on
# the sender's CPU): when the client has gone idle waiting, that wake-up
# crosses CPUs and costs a few microseconds in a VM (perf: 9 % of a hash
# lookup at c=4 on 27 November), and a slower server finds the client
# idle more often. With more connections the client idles less, for
# both servers.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
NODES=${NODES:-1000}
N=${N:-20000}
CLASSES=${CLASSES:-priority hash array missing}
ROUNDS=${ROUNDS:-3}
BEFORE=${BEFORE:-}
OUT=${OUT:-target/bench-results}
PIN=${PIN:-0}
CONNS=${CONNS:-4}
if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then PIN=0; fi
on_server=() on_client=()
if [ "$PIN" = 1 ]; then on_server=(taskset -c 0) on_client=(taskset -c 1); fi

# prepare and start (bench/lib.sh): BIN, work, pids, OUT; servers.
source bench/lib.sh
prepare cpu

generated "$NODES"

# cpu LABEL BINARY SERVER-ARGS… -- BENCH-ARGS…: microseconds of server
# CPU per request.
cpu() {
  local label=$1 server_bin=$2
  shift 2
  local server=()
  while [ "$1" != "--" ]; do server+=("$1"); shift; done
  shift
  start "$label" "${on_server[@]}" "$server_bin" "${server[@]}" --listen 127.0.0.1:0
  local plan=(--server "$URL" --plan "$work/env/bench-plan.json" -c "$CONNS" "$@")
  local before after ran=ok
  "${on_client[@]}" "$bin" bench "${plan[@]}" -n 1000 >"$work/$label.bench" 2>&1 || ran=failed
  before=$(cpu_ns "$PID")
  [ "$ran" = failed ] || "${on_client[@]}" "$bin" bench "${plan[@]}" -n "$N" --warmup 0s >"$work/$label.bench" 2>&1 || ran=failed
  after=$(cpu_ns "$PID")
  # Stopped before any check: a server left running would hold $(cpu …) open.
  kill "$PID"
  wait "$PID" 2>/dev/null || true
  [ "$ran" = ok ] && grep -q "^ *errors *0 " "$work/$label.bench" || {
    echo "$label: the run failed or had errors" >&2
    cat "$work/$label.bench" >&2
    exit 1
  }
  echo "($after - $before) / 1000 / $N" | bc -l
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# row LABEL RATIOS… : the median ratio and its range.
row() {
  local label=$1 hierad=$2 bare=$3
  shift 3
  printf '%-16s %14.1f %14.1f %8.2f %6.2f..%.2f\n' "$label" "$hierad" "$bare" \
    "$(printf '%s\n' "$@" | median)" \
    "$(printf '%s\n' "$@" | sort -g | head -1)" \
    "$(printf '%s\n' "$@" | sort -g | tail -1)"
}

{
  echo "server CPU per request (bench/cpu.sh: $N requests per class and round, $ROUNDS rounds, c=$CONNS, PIN=$PIN)"
  printf '%-16s %14s %14s %8s %14s\n' class 'hierad us/req' 'bare us/req' ratio 'min..max'
  for class in $CLASSES; do
    ratios=() hierad=() bare=() old_ratios=() old=()
    for _ in $(seq "$ROUNDS"); do
      b=$(cpu bare "$bin" bench baseline-server -- --mix "$class=1")
      h=$(cpu "$class" "$bin" serve --db "$work/env.db" --no-sample --cache-mib 0 -- --mix "$class=1")
      bare+=("$b") hierad+=("$h")
      ratios+=("$(echo "$h / $b" | bc -l)")
      if [ -n "$BEFORE" ]; then
        o=$(cpu "$class" "$BEFORE" serve --db "$work/env.db" --no-sample --cache-mib 0 -- --mix "$class=1")
        old+=("$o")
        old_ratios+=("$(echo "$o / $b" | bc -l)")
      fi
    done
    b=$(printf '%s\n' "${bare[@]}" | median)
    row "$class" "$(printf '%s\n' "${hierad[@]}" | median)" "$b" "${ratios[@]}"
    if [ -n "$BEFORE" ]; then
      row "$class (before)" "$(printf '%s\n' "${old[@]}" | median)" "$b" "${old_ratios[@]}"
    fi
  done
} | tee "$OUT/cpu.txt"
