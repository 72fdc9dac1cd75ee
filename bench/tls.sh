#!/usr/bin/env bash
# What TLS and authentication cost (issue 10), side by side in one run:
# the same data served twice, by a plain HTTP server without an auth file
# and by a TLS server (rustls, an ECDSA P-256 certificate made at run time
# by openssl) with `--auth FILE`; the TLS server loaded once with a bearer
# token, once with HTTP Basic (argon2id hash, verified passwords cached)
# and once with a client certificate from the same CA (`--tls-client-ca`;
# a Puppet master's own certificate, checked once per connection).
# Keep-alive connections, at c=CONNS and at c=1, ROUNDS
# interleaved rounds (the order turned around every other round); per
# round the ratios TLS+auth / plain of lookups/s, p50 and p99, and of the
# server's capacity: lookups per second of the server's own CPU time
# (/proc/PID/stat around each run). Goal from the issue: under 10 %
# throughput loss. On 2 vCPUs the client's TLS work shares the machine,
# so the capacity ratio is the server's figure; the client's CPU use is
# printed to show which side limited the timed runs.
#
# Then, with valgrind, the same four servers' instructions per lookup
# once connected and per connection (callgrind, counting only while INSTR_N
# and then 3 x INSTR_N measured lookups run after a warm-up): figures the
# machine's load does not move, and the profile of what TLS and
# authentication add (callgrind_annotate of the saved outputs in OUT).
#
#   bash bench/tls.sh                 # about 5 minutes after the release build
#
# PIN=1 (the default where taskset and 2 CPUs are): the servers run on CPU
# 0 and the bench client on CPU 1, so a server's lookups/s measure its own
# cost per lookup, not the client's TLS work on the same cores (PIN=0:
# both anywhere, as in the runs before 26 November, 22:30).
#
# Environment: DURATION (seconds per run, 10), ROUNDS (3; 0: none, only
# the instruction counts), CONNS (32),
# TLS_NODES (100), INSTR_N (2000; 0 skips the instruction counts), OUT
# (target/bench-results), BIN (target/release/hierad, built). All traffic stays on 127.0.0.1; the certificates, the auth file
# and the databases live in a temporary folder removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-32}
TLS_NODES=${TLS_NODES:-100}
INSTR_N=${INSTR_N:-2000}
PIN=${PIN:-1}
if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then PIN=0; fi
on_server=() on_client=()
if [ "$PIN" = 1 ]; then on_server=(taskset -c 0) on_client=(taskset -c 1); fi
command -v valgrind >/dev/null || INSTR_N=0
OUT=${OUT:-target/bench-results}
command -v openssl >/dev/null || { echo "bench/tls.sh needs the openssl command (Debian's openssl package)" >&2; exit 1; }
# prepare and start (bench/lib.sh): BIN, work, pids, OUT; servers.
source bench/lib.sh
prepare tls

# field FILE KEY: the first number of KEY in a one-line JSON report (the
# top-level latency's p50 and p99 come before any other).
field() { grep -o "\"$2\":[0-9.eE+-]*" "$1" | head -n 1 | cut -d: -f2; }

echo "== tls: a CA and the server's certificate (openssl, ECDSA P-256)" >&2
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
  # A client certificate from the same CA, as a Puppet master's from the
  # Puppet CA: the way of authenticating that costs nothing per request.
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "/CN=bench-master" -keyout client.key -out client.csr 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' >client.ext
  openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile client.ext -out client.pem 2>/dev/null
)

echo "== tls: $TLS_NODES nodes, an auth file with a token and a user" >&2
"$BIN" bench generate --nodes "$TLS_NODES" "$work/gen" >/dev/null 2>&1
"$BIN" bench load "$work/gen" --db "$work/plain.db" >/dev/null
cp "$work/plain.db" "$work/tls.db"
umask 077
printf 'bench-password-%s\n' "$RANDOM$RANDOM" >"$work/user.pw"
token=$("$BIN" auth add-token --file "$work/auth.toml" --role read bench 2>/dev/null)
"$BIN" auth add-user --file "$work/auth.toml" --role read --password-file "$work/user.pw" bench >/dev/null 2>&1
printf '\n[[client_cert]]\ncn = "bench-master"\nrole = "read"\n' >>"$work/auth.toml"

start plain "${on_server[@]}" "$BIN" serve --listen 127.0.0.1:0 --db "$work/plain.db" --no-sample
plain_url=$URL plain_pid=$PID
# curl (start's probe) trusts the bench CA through CURL_CA_BUNDLE.
CURL_CA_BUNDLE=$work/ca.pem start tls "${on_server[@]}" "$BIN" serve --listen 127.0.0.1:0 --db "$work/tls.db" \
  --no-sample --auth "$work/auth.toml" --tls-cert "$work/server.pem" --tls-key "$work/server.key" \
  --tls-client-ca "$work/ca.pem"
tls_url=$URL tls_pid=$PID
case $tls_url in https://*) ;; *) echo "the TLS server listens on $tls_url" >&2; exit 1 ;; esac

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
plan=$work/gen/bench-plan.json
# run NAME CONNS ROUND: one bench run, its report in OUT; also the server's
# CPU time per lookup (µs, from /proc, over the whole run: no warm-up, so
# every request the server answered is counted) and the client's CPU use
# (% of one CPU, /usr/bin/time), appended to the report's line in CPU_LOG.
run() {
  local name=$1 conns=$2 round=$3 pid=$tls_pid
  [ "$name" = plain ] && pid=$plain_pid
  local report=$OUT/tls-$name-c$conns-r$round.json client_time=$work/client-time
  local before after
  before=$(cpu_ns "$pid")
  case $name in
    plain) timed "${on_client[@]}" "$BIN" bench --server "$plain_url" --plan "$plan" -c "$conns" -d "${DURATION}s" \
      --warmup 0s --label "$name c=$conns" --json >"$report" ;;
    bearer) HIERAD_TOKEN=$token timed "${on_client[@]}" "$BIN" bench --server "$tls_url" --cacert "$work/ca.pem" \
      --plan "$plan" -c "$conns" -d "${DURATION}s" --warmup 0s --label "tls+bearer c=$conns" --json >"$report" ;;
    basic) timed "${on_client[@]}" "$BIN" bench --server "$tls_url" --cacert "$work/ca.pem" --user bench \
      --password-file "$work/user.pw" --plan "$plan" -c "$conns" -d "${DURATION}s" \
      --warmup 0s --label "tls+basic c=$conns" --json >"$report" ;;
    cert) timed "${on_client[@]}" "$BIN" bench --server "$tls_url" --cacert "$work/ca.pem" \
      --client-cert "$work/client.pem" --client-key "$work/client.key" --plan "$plan" -c "$conns" \
      -d "${DURATION}s" --warmup 0s --label "tls+cert c=$conns" --json >"$report" ;;
  esac
  after=$(cpu_ns "$pid")
  local errors
  errors=$(grep -o '"errors":{"total":[0-9]*' "$report" | grep -o '[0-9]*$')
  if [ "$errors" != 0 ]; then
    echo "$name c=$conns round $round: $errors failed requests" >&2
    exit 1
  fi
  "$BIN" bench summary --run "$report" >&2
  local requests client_s
  requests=$(grep -o '"requests":[0-9]*' "$report" | head -n 1 | cut -d: -f2)
  client_s=$(cat "$client_time")
  server_us[$name,$conns,$round]=$(awk -v t=$((after - before)) -v n="$requests" \
    'BEGIN { printf("%.2f", t / n / 1e3) }')
  client_pct[$name,$conns,$round]=$(awk -v c="$client_s" -v d="$DURATION" 'BEGIN { printf("%.0f", c / d * 100) }')
  echo "$name c=$conns: server CPU ${server_us[$name,$conns,$round]} µs/lookup, client ${client_pct[$name,$conns,$round]}% of a CPU" >&2
}
# timed CMD…: runs CMD, its user + system CPU seconds into $client_time.
timed() { /usr/bin/time -f '%U %S' -o "$client_time.raw" "$@" && awk '{ print $1 + $2 }' "$client_time.raw" >"$client_time"; }
declare -A server_us=() client_pct=()

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf("%.3f", a / b) }'; }
declare -A ratios=()
for round in $(seq "$ROUNDS"); do
  echo "== tls: round $round of $ROUNDS" >&2
  order=(plain bearer basic cert)
  [ $((round % 2)) = 0 ] && order=(cert basic bearer plain)
  for conns in "$CONNS" 1; do
    for name in "${order[@]}"; do run "$name" "$conns" "$round"; done
    p=$OUT/tls-plain-c$conns-r$round.json
    for name in bearer basic cert; do
      t=$OUT/tls-$name-c$conns-r$round.json
      ratios[$name,$conns]+="$(ratio "$(field "$t" lookups_per_s)" "$(field "$p" lookups_per_s)") "
      ratios[$name,$conns,p50]+="$(ratio "$(field "$t" p50)" "$(field "$p" p50)") "
      ratios[$name,$conns,p99]+="$(ratio "$(field "$t" p99)" "$(field "$p" p99)") "
      # Lookups per CPU-second of the server: what it can answer when it,
      # not the client, is what limits.
      ratios[$name,$conns,cpu]+="$(ratio "${server_us[plain,$conns,$round]}" "${server_us[$name,$conns,$round]}") "
    done
  done
done

# mean FILES…: the mean of a field over the rounds' reports.
mean() { local key=$1; shift; for f in "$@"; do field "$f" "$key"; done | awk '{ s += $1 } END { printf("%.0f", s / NR) }'; }
# ROUNDS=0: only the instruction counts.
if [ "$ROUNDS" -gt 0 ]; then
{
  echo "TLS and authentication (bench/tls.sh, $TLS_NODES nodes, ${DURATION}s x $ROUNDS rounds, PIN=$PIN, load before: $load_before)"
  printf '%-12s %5s %12s %9s %9s %14s %12s\n' server conns lookups/s p50_us p99_us server_cpu_us client_cpu%
  for conns in "$CONNS" 1; do
    for name in plain bearer basic cert; do
      files=("$OUT"/tls-$name-c$conns-r*.json)
      cpu=() pct=()
      for round in $(seq "$ROUNDS"); do
        cpu+=("${server_us[$name,$conns,$round]}") pct+=("${client_pct[$name,$conns,$round]}")
      done
      printf '%-12s %5s %12s %9s %9s %14s %12s\n' "$name" "$conns" "$(mean lookups_per_s "${files[@]}")" \
        "$(mean p50 "${files[@]}")" "$(mean p99 "${files[@]}")" "$(echo "${cpu[*]}" | median)" \
        "$(echo "${pct[*]}" | median)"
    done
  done
  echo "(server_cpu_us: the server's CPU time per lookup, median of the rounds; client_cpu%: the bench"
  echo " client's CPU use, median: near 100 means the client, not the server, limited lookups/s)"
  echo "server capacity TLS+auth / plain: lookups per CPU-second of the server, per round (median):"
  for conns in "$CONNS" 1; do
    for name in bearer basic cert; do
      printf '  c=%-3s %-6s %s(%s)\n' "$conns" "$name" "${ratios[$name,$conns,cpu]}" \
        "$(echo "${ratios[$name,$conns,cpu]}" | median)"
    done
  done
  echo "ratios TLS+auth / plain, per round (median):"
  for conns in "$CONNS" 1; do
    for name in bearer basic cert; do
      printf '  c=%-3s %-6s lookups/s %s(%s)  p50 %s(%s)  p99 %s(%s)\n' "$conns" "$name" \
        "${ratios[$name,$conns]}" "$(echo "${ratios[$name,$conns]}" | median)" \
        "${ratios[$name,$conns,p50]}" "$(echo "${ratios[$name,$conns,p50]}" | median)" \
        "${ratios[$name,$conns,p99]}" "$(echo "${ratios[$name,$conns,p99]}" | median)"
    done
  done
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/tls.txt"
fi
[ "$INSTR_N" -gt 0 ] || exit 0
for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
pids=()

# count NAME CLIENT-ARGS -- SERVER-ARGS…: sets COUNT, the server's
# instructions per lookup once connected, and CONNECT, per connection
# (accept, the TLS handshake), c=4, the plan's mix, after 300 lookups of
# warm-up. Each measured run is a new client process, so it opens its 4
# connections again: two runs, of N and 3N lookups, each counted on its
# own (callgrind_control --dump zeroes the counts), tell the two apart:
# per lookup (B - A) / 2N, per connection (A - N x per lookup) / 4.
# Without the answer cache (--cache-mib 0, as bench/instructions.sh):
# every lookup a full one, whatever the run's length (a longer run
# repeats more requests, and a cache would answer more of them).
# Counting both in one figure put 4 handshakes (x25519, ECDSA, HKDF under
# valgrind's generic code paths: about 8,000 instructions a lookup at
# N=1000) on the lookups. (Not in a $(…) subshell: the cleanup must see
# the server.)
count() {
  local name=$1 client=() server=()
  shift
  while [ "$1" != "--" ]; do client+=("$1"); shift; done
  shift
  server=("$@")
  local out=$OUT/tls-$name.callgrind log=$work/$name-callgrind.log url=""
  rm -f "$out" "$out".[0-9]*
  HIERAD_LOG=warn valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
    "$BIN" serve --listen 127.0.0.1:0 --no-sample --cache-mib 0 "${server[@]}" 2>"$log" &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 600); do
    url=$(address_in "$log")
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "$name: the server did not start under callgrind" >&2; cat "$log" >&2; exit 1; }
  "$BIN" bench --server "$url" --plan "$plan" -c 4 -n 300 "${client[@]}" >/dev/null
  callgrind_control -i on "$pid" >/dev/null 2>&1
  "$BIN" bench --server "$url" --plan "$plan" -c 4 -n "$INSTR_N" --warmup 0s "${client[@]}" >/dev/null
  callgrind_control -d "$pid" >/dev/null 2>&1
  "$BIN" bench --server "$url" --plan "$plan" -c 4 -n $((3 * INSTR_N)) --warmup 0s "${client[@]}" >/dev/null
  callgrind_control -d "$pid" >/dev/null 2>&1
  callgrind_control -i off "$pid" >/dev/null 2>&1
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  local a b
  a=$(total_of "$out.1") b=$(total_of "$out.2")
  # The 3N run's profile, mostly lookups, for callgrind_annotate.
  mv "$out.2" "$out"
  rm -f "$out".[0-9]*
  COUNT=$(((b - a) / (2 * INSTR_N)))
  CONNECT=$(((a - INSTR_N * COUNT) / 4))
}

# total_of FILE: the instructions a callgrind output counted.
total_of() {
  local total
  total=$(callgrind_annotate "$1" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
  [ -n "$total" ] || { echo "no instruction count in $1" >&2; exit 1; }
  echo "$total"
}

echo "== tls: instructions per lookup (callgrind, $INSTR_N and $((3 * INSTR_N)) lookups each)" >&2
tls_server=(--auth "$work/auth.toml" --tls-cert "$work/server.pem" --tls-key "$work/server.key"
  --tls-client-ca "$work/ca.pem")
count plain -- --db "$work/plain.db"
plain=$COUNT plain_connect=$CONNECT
HIERAD_TOKEN=$token count bearer --cacert "$work/ca.pem" -- --db "$work/tls.db" "${tls_server[@]}"
bearer=$COUNT bearer_connect=$CONNECT
count basic --cacert "$work/ca.pem" --user bench --password-file "$work/user.pw" -- \
  --db "$work/tls.db" "${tls_server[@]}"
basic=$COUNT basic_connect=$CONNECT
count cert --cacert "$work/ca.pem" --client-cert "$work/client.pem" --client-key "$work/client.key" -- \
  --db "$work/tls.db" "${tls_server[@]}"
cert=$COUNT cert_connect=$CONNECT
{
  echo "server instructions per full lookup (no answer cache) once connected, and per connection"
  echo "(callgrind, c=4, runs of $INSTR_N and $((3 * INSTR_N)) lookups after 300 of warm-up; valgrind hides SHA-NI, so"
  echo "SHA-256 (a bearer token's hash) counts its portable code):"
  printf '  %-8s %9d %28s %12d per connection\n' plain "$plain" "" "$plain_connect"
  printf '  %-8s %9d  %s x plain, +%-8d %12d per connection\n' bearer "$bearer" "$(ratio "$bearer" "$plain")" $((bearer - plain)) "$bearer_connect"
  printf '  %-8s %9d  %s x plain, +%-8d %12d per connection\n' basic "$basic" "$(ratio "$basic" "$plain")" $((basic - plain)) "$basic_connect"
  printf '  %-8s %9d  %s x plain, +%-8d %12d per connection\n' cert "$cert" "$(ratio "$cert" "$plain")" $((cert - plain)) "$cert_connect"
} | tee -a "$OUT/tls.txt"
