# Shared by the bench scripts (sourced). Most begin with `prepare NAME`;
# the others set `work` (a temporary folder) and `pids` (the servers their
# cleanup stops) themselves before calling `start`.

# prepare NAME: BIN (the release build, made unless BIN names one; also
# as `bin`), OUT (target/bench-results unless set, created), a temporary
# folder `work`, and `pids`; at exit every server in `pids` is stopped
# and `work` removed.
prepare() {
  if [ -z "${BIN:-}" ]; then
    cargo build --release --quiet
    BIN=$PWD/target/release/hierad
  fi
  bin=$BIN
  OUT=${OUT:-target/bench-results}
  work=$(mktemp -d "${TMPDIR:-/tmp}/hierad-$1.XXXXXX")
  pids=()
  trap stop_all EXIT
  mkdir -p "$OUT"
}

# The exit trap of `prepare`.
stop_all() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}

# address_in LOG: the URL of a server's `listening on` line, once the line
# is whole (a server writes it in pieces: a half-written line read as
# `http://` or `http://127.0.0.1:4`); nothing before.
address_in() {
  local line
  [ -f "$1" ] || return 0
  while IFS= read -r line; do
    case $line in
      "listening on "*) echo "${line#listening on }"; return ;;
    esac
  done <"$1"
}

# start NAME CMD…: runs a server until it answers; sets PID and URL.
start() {
  local name=$1; shift
  HIERAD_LOG=${LOG:-warn} "$@" 2>"$work/$name.log" &
  PID=$!
  pids+=("$PID")
  for _ in $(seq 200); do
    URL=$(address_in "$work/$name.log")
    [ -n "$URL" ] && curl -s -o /dev/null "$URL/" && return 0
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "$name did not start:" >&2
  cat "$work/$name.log" >&2
  exit 1
}

# generated N: N generated nodes in $work/env (the plan: $work/env/bench-plan.json),
# imported through a server into $work/env.db, which is then stopped.
generated() {
  "$bin" bench generate --nodes "$1" "$work/env" >/dev/null 2>&1
  start import "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample
  "$bin" bench load "$work/env" --server "$URL" >/dev/null 2>&1
  kill "$PID"
  wait "$PID" 2>/dev/null || true
}

# rss_kib PID: a process's resident memory in KiB.
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# cpu_ns PID: the CPU time (user + system) a process's threads have used,
# in nanoseconds: the scheduler's own count per thread
# (/proc/PID/task/*/schedstat), not /proc/PID/stat's clock ticks, which
# are 10 ms (a bare server's 20,000 requests are a few dozen ticks).
# Counts only the threads alive when read: a server's runtime workers
# live as long as it does; where schedstat is missing, whole ticks.
cpu_ns() {
  local stats=(/proc/"$1"/task/*/schedstat)
  if [ -r "${stats[0]}" ]; then
    cat "${stats[@]}" 2>/dev/null | awk '{ s += $1 } END { printf("%.0f\n", s) }'
  else
    awk -v hz="$(getconf CLK_TCK)" '{ printf("%.0f\n", ($14 + $15) * 1e9 / hz) }' "/proc/$1/stat"
  fi
}

# cpu_ticks PID: "USER SYSTEM", a process's CPU time in clock ticks
# (`getconf CLK_TCK` a second: 10 ms on Linux), all its threads, from /proc/PID/stat (read past the command's
# name, which may hold blanks): coarse, for the split between the two.
cpu_ticks() {
  sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12, $13 }'
}

# Reports of per-round runs named $OUT/PREFIX-NAME-cC-rROUND.json (bench
# --json), for ROUNDS rounds, measured against a server named `bare`:
# round_ratio PREFIX NAME C: the median over rounds of NAME's requests/s
# ÷ the bare server's in the same round, with min..max.
round_ratio() {
  local prefix=$1 name=$2 c=$3
  for round in $(seq "$ROUNDS"); do
    jq -s '.[0].lookups_per_s / .[1].lookups_per_s' \
      "$OUT/$prefix-$name-c$c-r$round.json" "$OUT/$prefix-bare-c$c-r$round.json"
  done | sort -g | awk '{ r[NR] = $1 } END { printf("%.2f (%.2f..%.2f)", r[int((NR + 1) / 2)], r[1], r[NR]) }'
}

# round_median PREFIX NAME C JQ-EXPR: the median over rounds of a figure
# of NAME's reports.
round_median() {
  for round in $(seq "$ROUNDS"); do jq "$4" "$OUT/$1-$2-c$3-r$round.json"; done |
    sort -g | awk '{ v[NR] = $1 } END { printf("%.0f", v[int((NR + 1) / 2)]) }'
}
