#!/usr/bin/env bash
# Server CPU per request, by class (BENCHMARKS.md, the fixed cost of a
# request): user + system time of the server's threads over N requests
# (the scheduler's count, bench/lib.sh `cpu_ns`), against the bare hyper
# server of bench/run.sh answering the same bytes to the same client, in
# the same round. CPU time, unlike instructions (bench/instructions.sh),
# includes the kernel's work on the sockets, which both servers pay; it
# moves with the machine's load, so compare the ratios of one run.
#
#   bash bench/cpu.sh               # 20-40 minutes after the release build
#   CLASSES="cached data30" CONNS="4" bash bench/cpu.sh   # a few of them
#
# The classes (CLASSES, all by default):
#   effective30  a Fuel node's 30 KB effective `astute` (GET …?effective),
#                its root level tests/fixtures/fuel's
#                neut_vlan.ceph.controller-ephemeral-ceph.yaml, one node,
#                from the encoded-document cache
#   data30       the same document through Hiera 5's data route
#                (GET /api/v1/data/1/astute?level=nodes=NODE)
#   etag30       that request revalidated with its ETag: 304 (the bare
#                server sends an empty body)
#   cached       a small lookup answered from the answer cache
#                (`--key fqdn`, every node warmed first)
#   doc125       the generated 125 KB effective `astute`, data route
#   priority hash array missing
#                full small lookups (`--cache-mib 0`): every request a
#                lookup; the bare server sends its short lookup answer
#   tls-bearer   a full priority lookup over TLS with a bearer token
#                (`--auth`), against the bare server over the same TLS
#                configuration (needs openssl)
#
# `hierad bench`'s table also gives each server's share of its CPU time in
# user mode (the rest is the kernel's, on the sockets), from clock ticks
# of 10 ms: where a gap is, not how large.
# Each class is measured with two clients: `hierad bench` (N requests)
# and wrk (Debian's: `apt-get install wrk`; WRK_SECONDS a run after a
# warm-up, bench/wrk.lua sending the lookup classes' POST bodies), an
# independent client, whose table gives the requests per second of both
# servers and their ratio, and the server CPU per request under it.
# Environment: NODES (1000), N (requests per run, 10000), CLASSES, CONNS
# (the client's connections, "4 32": each class at each), ROUNDS (3; the
# median ratio is printed with min..max), BEFORE (another hierad binary
# measured in the same rounds, e.g. the previous commit's), CLIENTS
# ("bench wrk": which clients' tables; wrk's is skipped, saying so, where
# wrk is not installed), WRK_SECONDS (5), LOG (the servers' HIERAD_LOG:
# info, the default of `hierad serve`, one access line a request, whose
# cost is part of the fixed path; warn leaves it out), BIN (the
# hierad binary; default: the release build), OUT
# (target/bench-results), PIN (0: server and client anywhere; 1, where
# taskset and 2 CPUs are: every server on CPU 0 and the client on CPU 1,
# which takes the cost of moving between CPUs out of both servers'
# figures), SERVER_CPUS and CLIENT_CPUS (taskset CPU lists, over PIN's:
# on a quiet many-core machine e.g. SERVER_CPUS=0-3 CLIENT_CPUS=4-15,
# the servers on four cores and the clients on the rest), WRK_THREADS
# (wrk's threads, 2; as many as CLIENT_CPUS has, there). On loopback the
# server's CPU time includes waking the client for each answer (the receiving side's work runs on the sender's CPU):
# when the client has gone idle waiting, that wake-up crosses CPUs and
# costs a few microseconds in a VM, and a slower server finds the client
# idle more often. With more connections the client idles less, for
# both servers.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
NODES=${NODES:-1000}
N=${N:-10000}
CLASSES=${CLASSES:-effective30 data30 etag30 cached doc125 priority hash array missing tls-bearer}
CONNS=${CONNS:-4 32}
ROUNDS=${ROUNDS:-3}
BEFORE=${BEFORE:-}
OUT=${OUT:-target/bench-results}
PIN=${PIN:-0}
CLIENTS=${CLIENTS:-bench wrk}
WRK_SECONDS=${WRK_SECONDS:-5}
# Read by bench/lib.sh's `start`, whose own default is warn.
LOG=${LOG:-info}
if [[ " $CLIENTS " == *" wrk "* ]] && ! command -v wrk >/dev/null; then
  echo "wrk is not installed (apt-get install wrk): only hierad bench's figures" >&2
  CLIENTS=${CLIENTS//wrk/}
fi
if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then PIN=0; fi
on_server=() on_client=()
if [ "$PIN" = 1 ]; then on_server=(taskset -c 0) on_client=(taskset -c 1); fi
if [ -n "${SERVER_CPUS:-}${CLIENT_CPUS:-}" ]; then
  command -v taskset >/dev/null || { echo "SERVER_CPUS and CLIENT_CPUS need taskset (util-linux)" >&2; exit 1; }
  # Each list whole: taskset alone accepts a list that names some CPUs
  # this machine lacks, and runs on the others.
  for cpus in ${SERVER_CPUS:-} ${CLIENT_CPUS:-}; do
    listed=0
    IFS=, read -ra parts <<<"$cpus"
    for part in "${parts[@]}"; do
      case $part in
        *-*) listed=$((listed + ${part#*-} - ${part%-*} + 1)) ;;
        *) listed=$((listed + 1)) ;;
      esac
    done
    [ "$(taskset -c "$cpus" nproc 2>/dev/null)" = "$listed" ] ||
      { echo "CPUs $cpus: not all of them are here (nproc: $(nproc))" >&2; exit 1; }
  done
  [ -n "${SERVER_CPUS:-}" ] && on_server=(taskset -c "$SERVER_CPUS")
  [ -n "${CLIENT_CPUS:-}" ] && on_client=(taskset -c "$CLIENT_CPUS")
fi
WRK_THREADS=${WRK_THREADS:-2}
# placement: where the servers and the clients ran, for the tables' heads.
placement() {
  echo "PIN=$PIN, servers on CPUs ${on_server[2]:-any}, clients on ${on_client[2]:-any}, $(nproc) CPUs"
}

# prepare and start (bench/lib.sh): BIN, work, pids, OUT; servers.
source bench/lib.sh
prepare cpu

generated "$NODES"
plan=$work/env/bench-plan.json
node=$(jq -r '.nodes[0]' "$plan")
effective="/api/v1/config/environments/1/nodes/$node/resources/astute/values?effective"
data="/api/v1/data/1/astute?level=nodes=$node"

# The 30 KB environment: the generated one with a real Fuel deployment's
# smallest astute.yaml as its root level.
cp -r "$work/env" "$work/env30"
cp tests/fixtures/fuel/neut_vlan.ceph.controller-ephemeral-ceph.yaml "$work/env30/root/astute.yaml"
"$bin" bench load "$work/env30" --db "$work/env30.db" >/dev/null

# The bytes each bare server sends, taken from hierad's own answers.
start bodies "$bin" serve --listen 127.0.0.1:0 --db "$work/env30.db" --no-sample
curl -sf -o "$work/effective30.body" "$URL$effective"
curl -sf -D "$work/data30.head" -o "$work/data30.body" "$URL$data"
etag=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *\([^\r]*\).*/\1/p' "$work/data30.head")
: >"$work/etag30.body"
kill "$PID"
start bodies "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample
curl -sf -o "$work/doc125.body" "$URL$data"
# What `--key fqdn` is answered: the node's name.
printf '{"found":true,"value":"%s"}' "$node" >"$work/cached.body"
# wrk's lookups name the plan's hierarchy by its id, as `hierad bench`
# does; each server registers it before its run (wrk_run).
hierarchy=$(jq -c '{hierarchy}' "$plan")
hierarchy_id=$(curl -sf -X POST -H 'Content-Type: application/json' -d "$hierarchy" \
  "$URL/api/v1/hierarchies" | jq -r .id)
kill "$PID"
# lookup_bodies CLASS COUNT [KEY]: COUNT of wrk's bodies for CLASS, one a
# line, over the nodes and the calling classes in turn (`cached`: KEY
# fqdn, every node once).
lookup_bodies() {
  jq -r --arg id "$hierarchy_id" --arg class "$1" --argjson count "$2" --arg key "${3:-}" '
    . as $p | ($p.classes[] | select(.name == $class)) as $k
    | range(0; $count) as $i
    | $p.nodes[$i % ($p.nodes | length)] as $n
    | $p.calling_classes[$i % ($p.calling_classes | length)] as $cc
    | {environment: $p.environment, level: ($p.level + "=" + $n), hierarchy_id: $id,
       scope: {"::fqdn": $n, calling_class: $cc, calling_module: ($cc | split("::")[0])},
       resolution: $k.resolution,
       key: (if $key != "" then $key else $k.keys[$i % ($k.keys | length)] end)}
    | tojson' "$plan"
}
if [[ " $CLIENTS " == *" wrk "* ]]; then
  for class in priority hash array missing; do lookup_bodies "$class" 1000 >"$work/$class.bodies"; done
  lookup_bodies priority "$NODES" fqdn >"$work/cached.bodies"
fi
echo "bodies: effective30 $(wc -c <"$work/effective30.body") B, data30 $(wc -c <"$work/data30.body") B" \
  "(ETag $etag), doc125 $(wc -c <"$work/doc125.body") B, cached $(wc -c <"$work/cached.body") B" >&2

tls=()
if [[ " $CLASSES " == *" tls-bearer "* ]]; then
  command -v openssl >/dev/null || { echo "tls-bearer needs the openssl command (Debian's openssl package)" >&2; exit 1; }
  (
    cd "$work"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
      -subj "/CN=hierad bench CA" -keyout ca.key -out ca.pem \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -subj "/CN=localhost" -keyout server.key -out server.csr 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -extfile server.ext -out server.pem 2>/dev/null
  )
  umask 077
  HIERAD_TOKEN=$("$bin" auth add-token --file "$work/auth.toml" --role read bench 2>/dev/null)
  export HIERAD_TOKEN
  tls=(--tls-cert "$work/server.pem" --tls-key "$work/server.key")
  # start's probe trusts the bench CA.
  export CURL_CA_BUNDLE=$work/ca.pem
fi

# server_args CLASS, bare_args CLASS, bench_args CLASS: what `hierad
# serve`, the bare server and the client get for CLASS, one word a line.
server_args() {
  case $1 in
    effective30 | data30 | etag30) printf '%s\n' --db "$work/env30.db" --no-sample ;;
    cached | doc125) printf '%s\n' --db "$work/env.db" --no-sample ;;
    tls-bearer) printf '%s\n' --db "$work/env.db" --no-sample --cache-mib 0 --auth "$work/auth.toml" "${tls[@]}" ;;
    *) printf '%s\n' --db "$work/env.db" --no-sample --cache-mib 0 ;;
  esac
}

bare_args() {
  case $1 in
    effective30 | data30 | etag30 | cached | doc125) printf '%s\n' --body "$work/$1.body" ;;
    tls-bearer) printf '%s\n' "${tls[@]}" ;;
    *) ;;
  esac
}

bench_args() {
  case $1 in
    effective30) printf '%s\n' --get "$effective" ;;
    data30 | doc125) printf '%s\n' --get "$data" ;;
    etag30) printf '%s\n' --get "$data" --header "If-None-Match: $etag" ;;
    cached) printf '%s\n' --key fqdn ;;
    tls-bearer) printf '%s\n' --mix priority=1 --cacert "$work/ca.pem" ;;
    *) printf '%s\n' --mix "$1=1" ;;
  esac
}

# cpu LABEL CONNS WARMUP BINARY SERVER-ARGS… -- BENCH-ARGS…: "US SHARE",
# microseconds of server CPU per request after WARMUP requests, and the
# share of it in user mode (from clock ticks: coarse; the rest is the
# kernel's, which both servers pay alike when their CPU ratio follows
# their instructions).
cpu() {
  local label=$1 conns=$2 warmup=$3 server_bin=$4
  shift 4
  local server=()
  while [ "$1" != "--" ]; do server+=("$1"); shift; done
  shift
  start "$label" "${on_server[@]}" "$server_bin" "${server[@]}" --listen 127.0.0.1:0
  local plan=(--server "$URL" --plan "$work/env/bench-plan.json" -c "$conns" "$@")
  local before after ticks_before ticks_after ran=ok
  "${on_client[@]}" "$bin" bench "${plan[@]}" -n "$warmup" >"$work/$label.bench" 2>&1 || ran=failed
  before=$(cpu_ns "$PID") ticks_before=$(cpu_ticks "$PID")
  [ "$ran" = failed ] || "${on_client[@]}" "$bin" bench "${plan[@]}" -n "$N" --warmup 0s >"$work/$label.bench" 2>&1 || ran=failed
  after=$(cpu_ns "$PID") ticks_after=$(cpu_ticks "$PID")
  # Stopped before any check: a server left running would hold $(cpu …) open.
  kill "$PID"
  wait "$PID" 2>/dev/null || true
  [ "$ran" = ok ] && grep -q "^ *errors *0 " "$work/$label.bench" || {
    echo "$label: the run failed or had errors" >&2
    cat "$work/$label.bench" >&2
    exit 1
  }
  local per share
  per=$(echo "($after - $before) / 1000 / $N" | bc -l)
  # Under ten ticks the split says nothing: nan.
  share=$(echo "$ticks_before $ticks_after" | awk '{
    u = $3 - $1; t = u + $4 - $2; if (t < 10) print "nan"; else printf("%.0f\n", 100 * u / t) }')
  echo "$per $share"
}

# wrk_args CLASS: wrk's words for CLASS, one a line: the request's path,
# then options, then `--` and bench/wrk.lua's arguments for a lookup class.
wrk_args() {
  case $1 in
    effective30) printf '%s\n' "$effective" ;;
    data30 | doc125) printf '%s\n' "$data" ;;
    etag30) printf '%s\n' "$data" -H "If-None-Match: $etag" ;;
    tls-bearer) printf '%s\n' / -H "Authorization: Bearer $HIERAD_TOKEN" -s bench/wrk.lua -- "$work/priority.bodies" ;;
    *) printf '%s\n' / -s bench/wrk.lua -- "$work/$1.bodies" ;;
  esac
}

# wrk_run LABEL CONNS WARMUP-SECONDS BINARY SERVER-ARGS… -- WRK-WORDS…:
# "REQUESTS/S CPU-US/REQUEST" of one wrk run of WRK_SECONDS (WRK_THREADS),
# after a warm-up; a run with an error, a timeout or an answer other than
# 2xx/3xx stops the script.
wrk_run() {
  local label=$1 conns=$2 warmup=$3 server_bin=$4
  shift 4
  local server=() opts=() tail=()
  while [ "$1" != "--" ]; do server+=("$1"); shift; done
  shift
  local path=$1
  shift
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
  tail=("$@")
  start "$label" "${on_server[@]}" "$server_bin" "${server[@]}" --listen 127.0.0.1:0
  if [ "$label" != bare ]; then
    local auth=()
    [ -n "${HIERAD_TOKEN:-}" ] && auth=(-H "Authorization: Bearer $HIERAD_TOKEN")
    curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' "${auth[@]}" \
      -d "$hierarchy" "$URL/api/v1/hierarchies"
  fi
  local run=(wrk -t"$WRK_THREADS" -c"$conns" "${opts[@]}" "$URL$path" "${tail[@]}")
  local before after ran=ok
  "${on_client[@]}" "${run[@]:0:3}" -d"${warmup}s" "${run[@]:3}" >"$work/$label.wrk" 2>&1 || ran=failed
  before=$(cpu_ns "$PID")
  [ "$ran" = failed ] || "${on_client[@]}" "${run[@]:0:3}" -d"${WRK_SECONDS}s" "${run[@]:3}" >"$work/$label.wrk" 2>&1 || ran=failed
  after=$(cpu_ns "$PID")
  kill "$PID"
  wait "$PID" 2>/dev/null || true
  if [ "$ran" = failed ] || grep -qE 'Non-2xx|Socket errors' "$work/$label.wrk"; then
    echo "$label: wrk's run failed or had errors" >&2
    cat "$work/$label.wrk" >&2
    exit 1
  fi
  awk -v cpu=$((after - before)) '
    / requests in / { n = $1 }
    /^Requests\/sec:/ { rate = $2 }
    END { if (n == 0) exit 1; printf("%.0f %.2f\n", rate, cpu / 1000 / n) }' "$work/$label.wrk"
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# row LABEL HIERAD BARE RATIOS… HIERAD-USER BARE-USER: the medians, the
# median ratio and its range, and each server's user-mode share (%).
row() {
  local label=$1 hierad=$2 bare=$3
  shift 3
  local ratios=("${@:1:$#-2}") shares=("${@: -2}")
  printf '%-24s %14.1f %14.1f %8.2f %6.2f..%.2f %8s/%s\n' "$label" "$hierad" "$bare" \
    "$(printf '%s\n' "${ratios[@]}" | median)" \
    "$(printf '%s\n' "${ratios[@]}" | sort -g | head -1)" \
    "$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)" \
    "${shares[0]}" "${shares[1]}"
}

# class_args CLASS: s_args, b_args (the servers') and warmup for CLASS.
class_args() {
  # Every node's answer cached before the count: draws at random
  # over NODES nodes need some five times as many requests.
  warmup=1000
  [ "$1" = cached ] && warmup=$((5 * NODES))
  mapfile -t s_args < <(server_args "$1")
  mapfile -t b_args < <(bare_args "$1")
}

# bench_table: each class with `hierad bench` as the client.
bench_table() {
  echo "server CPU per request (bench/cpu.sh: $N requests per run, $ROUNDS rounds, $(placement), HIERAD_LOG=$LOG, load $(cut -d' ' -f1-3 /proc/loadavg))"
  printf '%-24s %14s %14s %8s %14s %12s\n' class 'hierad us/req' 'bare us/req' ratio 'min..max' 'user % h/b'
  for c in $CONNS; do
    for class in $CLASSES; do
      class_args "$class"
      mapfile -t c_args < <(bench_args "$class")
      ratios=() hierad=() bare=() old_ratios=() old=() h_user=() b_user=() o_user=()
      for _ in $(seq "$ROUNDS"); do
        # $(…), not < <(…): a failed run's exit stops the script.
        out=$(cpu bare "$c" 1000 "$bin" bench baseline-server --nodelay "${b_args[@]}" -- "${c_args[@]}")
        read -r b bu <<<"$out"
        out=$(cpu "$class" "$c" "$warmup" "$bin" serve "${s_args[@]}" -- "${c_args[@]}")
        read -r h hu <<<"$out"
        bare+=("$b") hierad+=("$h") b_user+=("$bu") h_user+=("$hu")
        ratios+=("$(echo "$h / $b" | bc -l)")
        if [ -n "$BEFORE" ]; then
          out=$(cpu "$class" "$c" "$warmup" "$BEFORE" serve "${s_args[@]}" -- "${c_args[@]}")
          read -r o ou <<<"$out"
          old+=("$o") o_user+=("$ou")
          old_ratios+=("$(echo "$o / $b" | bc -l)")
        fi
      done
      b=$(printf '%s\n' "${bare[@]}" | median)
      bare_user=$(printf '%s\n' "${b_user[@]}" | median)
      row "$class c=$c" "$(printf '%s\n' "${hierad[@]}" | median)" "$b" "${ratios[@]}" \
        "$(printf '%s\n' "${h_user[@]}" | median)" "$bare_user"
      if [ -n "$BEFORE" ]; then
        row "$class c=$c (before)" "$(printf '%s\n' "${old[@]}" | median)" "$b" "${old_ratios[@]}" \
          "$(printf '%s\n' "${o_user[@]}" | median)" "$bare_user"
      fi
    done
  done
}

# wrk_table: each class with wrk as the client.
wrk_table() {
  echo "wrk -t$WRK_THREADS: requests/s and server CPU per request ($WRK_SECONDS s per run, $ROUNDS rounds, $(placement), HIERAD_LOG=$LOG, load $(cut -d' ' -f1-3 /proc/loadavg))"
  printf '%-24s %10s %10s %8s %12s %8s %12s\n' class 'hierad/s' 'bare/s' ratio 'min..max' 'CPU x' 'min..max'
  for c in $CONNS; do
    for class in $CLASSES; do
      class_args "$class"
      mapfile -t w_args < <(wrk_args "$class")
      # Seconds of warm-up: the cached class sends every node's lookup.
      secs=1
      [ "$class" = cached ] && secs=3
      rates=() cpus=() hrates=() brates=()
      for _ in $(seq "$ROUNDS"); do
        # $(…), not < <(…): a failed run's exit stops the script.
        out=$(wrk_run bare "$c" 1 "$bin" bench baseline-server --nodelay "${b_args[@]}" -- "${w_args[@]}")
        read -r br bc <<<"$out"
        out=$(wrk_run "$class" "$c" "$secs" "$bin" serve "${s_args[@]}" -- "${w_args[@]}")
        read -r hr hc <<<"$out"
        brates+=("$br") hrates+=("$hr")
        rates+=("$(echo "$hr / $br" | bc -l)") cpus+=("$(echo "$hc / $bc" | bc -l)")
      done
      printf '%-24s %10.0f %10.0f %8.2f %5.2f..%.2f %8.2f %5.2f..%.2f\n' "$class c=$c" \
        "$(printf '%s\n' "${hrates[@]}" | median)" "$(printf '%s\n' "${brates[@]}" | median)" \
        "$(printf '%s\n' "${rates[@]}" | median)" \
        "$(printf '%s\n' "${rates[@]}" | sort -g | head -1)" "$(printf '%s\n' "${rates[@]}" | sort -g | tail -1)" \
        "$(printf '%s\n' "${cpus[@]}" | median)" \
        "$(printf '%s\n' "${cpus[@]}" | sort -g | head -1)" "$(printf '%s\n' "${cpus[@]}" | sort -g | tail -1)"
    done
  done
}

{
  if [[ " $CLIENTS " == *" bench "* ]]; then bench_table; fi
  if [[ " $CLIENTS " == *" wrk "* ]]; then wrk_table; fi
} | tee "$OUT/cpu.txt"
