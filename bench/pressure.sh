#!/usr/bin/env bash
# Memory pressure from readers (the limits in docs/operations.md,
# "Connections and requests"): the server's RSS
# and /healthz latency (p50, p99 of PROBES probes) idle, under clients that
# pipeline GETs of a large document and never read (its latest version, an
# old one, and one of its keys: an answer made per request), and under
# concurrent large lookups. Loopback only; every loop bounded.
#
#   bash bench/pressure.sh            # after the release build
#   BIN=target/debug/hierad bash bench/pressure.sh
#
# Environment: BIN (the hierad binary; default: the release build), READERS
# (never-reading connections, 250), LOOKUPS (concurrent ~1 MiB lookups,
# 150), DOC_MIB (the document, 14), PROBES (200), EXTRA (more `hierad serve`
# flags), OUT (target/bench-results).
# The Basic-auth flood of item 1 is bench/auth-flood.sh's: run here when
# that script exists (its own table).
set -euo pipefail
cd "$(dirname "$0")/.."
READERS=${READERS:-250}
LOOKUPS=${LOOKUPS:-150}
DOC_MIB=${DOC_MIB:-14}
PROBES=${PROBES:-200}
EXTRA=${EXTRA:-}

source bench/lib.sh
prepare pressure

# shellcheck disable=SC2086
start pressure "$bin" serve --listen 127.0.0.1:0 --db "$work/p.db" --no-sample $EXTRA
server_pid=$PID

python3 - "$URL" "$server_pid" "$READERS" "$LOOKUPS" "$DOC_MIB" "$PROBES" <<'EOF'
import json, socket, sys, threading, time, urllib.request

url, pid, readers, lookups, doc_mib, probes = sys.argv[1], int(sys.argv[2]), *map(int, sys.argv[3:])
host, port = url.removeprefix("http://").split(":")
port = int(port)

def call(method, path, body=None):
    req = urllib.request.Request(url + path, data=body, method=method,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code

def rss_mib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0

def healthz_ms():
    start = time.monotonic()
    s = socket.create_connection((host, port), timeout=60)
    s.sendall(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
    while s.recv(65536):
        pass
    s.close()
    return (time.monotonic() - start) * 1000

def probe(load=None):
    """PROBES /healthz probes (10 ms apart) while `load` runs; the peak RSS."""
    done = threading.Event()
    runner = None
    if load:
        runner = threading.Thread(target=lambda: (load(), done.set()))
        runner.start()
    times, peak = [], rss_mib()
    for _ in range(probes):
        times.append(healthz_ms())
        peak = max(peak, rss_mib())
        time.sleep(0.01)
    if runner:
        runner.join()
    peak = max(peak, rss_mib())
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, len(times) * 99 // 100)], peak

assert call("POST", "/api/v1/config/components",
            json.dumps({"name": "app", "resource_definitions": [{"name": "big"}]}).encode()) == 201
assert call("POST", "/api/v1/config/environments",
            b'{"id": 5, "components": ["app"], "hierarchy_levels": ["nodes"]}') == 201
doc = "/api/v1/config/environments/5/resources/big/values"
for fill in "xy":
    body = json.dumps({"big": fill * (doc_mib * 1024 * 1024)}).encode()
    assert call("PUT", doc, body) == 204

rows = []
p50, p99, peak = probe()
rows.append(("idle", p50, p99, peak, ""))

held = []
def readers_load():
    paths = [doc, doc + "?version=1", doc + "?key=big"]
    for i in range(readers):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect((host, port))
        s.sendall(f"GET {paths[i % 3]} HTTP/1.1\r\nhost: localhost\r\n\r\n".encode() * 5)
        held.append(s)
p50, p99, peak = probe(readers_load)
rows.append((f"{readers} never-reading readers", p50, p99, peak, "latest, version=1, key=big; 5 GETs each"))
for s in held:
    s.close()
held.clear()
time.sleep(2)

scope = {f"v{i:06}": "abcdefghij" for i in range(40000)}
lookup = json.dumps({"environment": 5, "key": "k", "scope": scope}).encode()
statuses = {}
def lookups_load():
    def one():
        st = call("POST", "/api/v1/lookup", lookup)
        statuses[st] = statuses.get(st, 0) + 1
    threads = [threading.Thread(target=one) for _ in range(lookups)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
p50, p99, peak = probe(lookups_load)
answers = ", ".join(f"{n}× {st}" for st, n in sorted(statuses.items()))
rows.append((f"{lookups} concurrent {len(lookup) // 1024} KiB lookups", p50, p99, peak, answers))

print(f"| load | /healthz p50 ms | /healthz p99 ms | peak RSS MiB | notes |")
print(f"| --- | --- | --- | --- | --- |")
for name, p50, p99, peak, notes in rows:
    print(f"| {name} | {p50:.1f} | {p99:.1f} | {peak:.0f} | {notes} |")
EOF

if [ -x bench/auth-flood.sh ]; then
  BIN=$bin bash bench/auth-flood.sh
else
  echo "(item 1, the Basic-auth flood: bench/auth-flood.sh, not in this tree)" >&2
fi
