#!/usr/bin/env bash
# Instructions per Hiera 5 lookup (`POST /api/v1/lookup` in an environment
# made by `hierad import-environment` from tests/fixtures/control-repo),
# counted by callgrind as bench/instructions.sh counts them: only while
# the measured requests run, after a warm-up, against a server with the
# answer cache off (`--cache-mib 0`: every request a full lookup). The
# baseline, measured in the same run, is `GET /healthz` on the same
# server: a request's fixed cost.
#
#   bash bench/hiera5-lookup.sh                           # needs valgrind
#   BIN=target/debug/hierad bash bench/hiera5-lookup.sh   # skip the release build
#
# Environment: N (requests per row, 200), KEYS (the keys looked up for
# node web1, each a row), BIN, OUT (target/bench-results: each row's
# callgrind output, hiera5-ROW.callgrind).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source bench/lib.sh
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
N=${N:-200}
KEYS=${KEYS:-profile::base::setting_3 profile::users profile::motd}
prepare hiera5-lookup

cp -r tests/fixtures/control-repo "$work/production"
start import "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample
"$bin" import-environment "$work/production" --server "$URL" --env 5 >/dev/null 2>"$work/import.out"
kill "$PID"
wait "$PID" 2>/dev/null || true

# send URL N KIND [KEY]: N requests on one keep-alive connection, each
# answered 200 (a lookup: found).
send() {
  python3 - "$@" <<'PY'
import http.client, json, sys
from urllib.parse import urlsplit
url, n, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
u = urlsplit(url)
c = http.client.HTTPConnection(u.hostname, u.port)
facts = {"clientcert": "web1.example.com", "fqdn": "web1.example.com",
         "hostname": "web1", "domain": "example.com", "role": "web",
         "datacenter": "ams", "os": {"family": "Debian"}}
body = json.dumps({"environment": 5, "key": sys.argv[4] if len(sys.argv) > 4 else "",
                   "scope": facts})
for _ in range(n):
    if kind == "lookup":
        c.request("POST", "/api/v1/lookup", body, {"Content-Type": "application/json"})
    else:
        c.request("GET", "/healthz")
    r = c.getresponse()
    data = r.read()
    if r.status != 200 or (kind == "lookup" and not data.startswith(b'{"found":true')):
        sys.exit(f"{kind}: {r.status} {data[:200]!r}")
PY
}

# toggle on|off PID: callgrind's counting, confirmed.
toggle() {
  local said
  said=$(callgrind_control -i "$1" "$2" 2>&1) || true
  case $said in
    *OK*) ;;
    *) echo "callgrind_control -i $1 did not confirm: $said" >&2; exit 1 ;;
  esac
}

# count ROW KIND [KEY]: instructions per request.
count() {
  local row=$1 out=$OUT/hiera5-$1.callgrind
  shift
  HIERAD_LOG=warn valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
    "$bin" serve --db "$work/env.db" --cache-mib 0 --listen 127.0.0.1:0 2>"$work/$row.log" &
  local pid=$! url=""
  pids+=("$pid")
  for _ in $(seq 600); do
    url=$(address_in "$work/$row.log")
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "$row: the server did not start" >&2; cat "$work/$row.log" >&2; exit 1; }
  send "$url" 20 "$@"
  toggle on "$pid"
  send "$url" "$N" "$@"
  toggle off "$pid"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  local total
  total=$(callgrind_annotate "$out" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
  [ -n "$total" ] && [ $((total / N)) -ge 1000 ] || { echo "$row: counted ${total:-nothing}" >&2; exit 1; }
  echo $((total / N))
}

base=$(count healthz health)
printf '%-28s %14s %8s\n' request instructions ratio
printf '%-28s %14s %8s\n' "GET /healthz" "$base" 1.00
i=0
for key in $KEYS; do
  i=$((i + 1))
  n=$(count "lookup-$i" lookup "$key")
  printf '%-28s %14s %8s\n' "$key" "$n" "$(awk -v a="$n" -v b="$base" 'BEGIN { printf "%.2f", a / b }')"
done
