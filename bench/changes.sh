#!/usr/bin/env bash
# The change feed's long poll: the memory WAITERS clients add to a server
# while each waits (`GET /api/v1/changes?since=G&wait=25`), and how soon
# after a write every one of them has its answer (p50, p99, max), over
# ROUNDS writes. One Python asyncio client holds every connection, so the
# client's own cost is not the server's.
#
#   bash bench/changes.sh                  # 5,000 waiters, about a minute
#   WAITERS=200 BIN=target/debug/hierad bash bench/changes.sh   # a quick check
#
# Memory: the server's RSS (VmRSS) with every waiter connected and
# waiting, minus its RSS just before they connected, the same server.
# Wake: from the write's answer (the writer's `curl` returning) to each
# waiter's answer, in milliseconds; a waiter answered before the writer's
# own answer counts 0. With it, the CPU seconds the server and this client
# spent from the write to the last answer: on a 2-core machine the
# client's share bounds how soon the last waiter can be read.
# Environment: WAITERS (5000), ROUNDS (3), BIN (the hierad binary;
# default: the release build), OUT (target/bench-results).
set -euo pipefail
cd "$(dirname "$0")/.."
WAITERS=${WAITERS:-5000}
ROUNDS=${ROUNDS:-3}

source bench/lib.sh
prepare changes
ulimit -n $((WAITERS + 1024)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"

"$bin" import data --env 1 --db "$work/env.db" >/dev/null
start hierad "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample \
  --max-connections $((WAITERS + 100)) --max-change-waiters $((WAITERS + 100))
server_pid=$PID
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$server_pid/status"; }

for round in $(seq "$ROUNDS"); do
  before=$(rss)
  write="curl -sf -o /dev/null -X PUT -H 'Content-Type: application/json' -d '{\"round\": $round}' $URL/api/v1/config/environments/1/resources/astute/values/keys/bench_round"
  timeout 120 python3 - "$URL" "$WAITERS" "$write" "$server_pid" "$before" <<'PY'
import asyncio, os, subprocess, sys, time, urllib.request
url, n, write, pid, before = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
host, port = url.removeprefix("http://").rsplit(":", 1)
gen = int(urllib.request.urlopen(url + "/api/v1/changes?since=0").headers["X-Hierad-Generation"])

def rss():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

async def waiter(ready, done):
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET /api/v1/changes?since={gen}&wait=25 HTTP/1.1\r\nhost: {host}\r\n\r\n".encode())
    await writer.drain()
    ready.append(1)
    head = await reader.readuntil(b"\r\n\r\n")
    done.append(time.monotonic())
    writer.close()
    return head.split(b" ", 2)[1]

async def main():
    ready, done = [], []
    tasks = [asyncio.create_task(waiter(ready, done)) for _ in range(n)]
    while len(ready) < n:
        await asyncio.sleep(0.05)
    await asyncio.sleep(2)  # every request read and waiting
    held = rss()
    def cpu():  # the server's user + system seconds
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    server, client = cpu(), time.process_time()
    subprocess.run(write, shell=True, check=True)
    wrote = time.monotonic()
    statuses = await asyncio.wait_for(asyncio.gather(*tasks), 60)
    server, client = cpu() - server, time.process_time() - client
    bad = [s for s in statuses if s != b"200"]
    ms = sorted(max(0.0, (t - wrote) * 1000) for t in done)
    pick = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]
    print(f"{n} waiters: +{(held - before) / 1024:.1f} MiB RSS ({before / 1024:.1f} -> {held / 1024:.1f} MiB); "
          f"woken after the write: p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {ms[-1]:.1f} ms; "
          f"{len(bad)} not 200; CPU from the write to the last answer: server {server:.2f} s, "
          f"this client {client:.2f} s")

asyncio.run(main())
PY
done
