#!/usr/bin/env bash
# The change feed's long poll: the memory WAITERS clients add to a server
# while each waits (`GET /api/v1/changes?since=G&wait=25`), and how soon
# after a write every one of them has its answer (p50, p99, max), over
# ROUNDS writes. The client is `hierad bench waiters` (src/bench/waiters.rs):
# one thread, one event loop, raw HTTP on non-blocking sockets, so its cost
# is small beside the server's (its CPU is printed with the server's).
# The server has every core, as deployed: tokio's workers share the wake
# (5,000 waiters cost the server 0.1 s of CPU, 22-44 us each, most of it
# the kernel's loopback sends). PIN=1 pins the server to SERVER_CPUS and
# the client to CLIENT_CPUS instead, for the wake on one core.
#
#   bash bench/changes.sh                  # 5,000 waiters, about a minute
#   WAITERS=200 BIN=target/debug/hierad bash bench/changes.sh   # a quick check
#
# Memory: the server's RSS (VmRSS) with every waiter connected and
# waiting, minus its RSS just before they connected, a fresh server each
# round.
# Wake: from the write's acknowledgement (its answer read by the client)
# to each waiter's answer, in milliseconds; a waiter answered before it
# counts 0. Each waiter's connection stays open until every waiter has
# its answer, as a long-poll client's does to ask again: closing each as
# it was answered put the server's close path into the wake's figures.
# With it, the CPU seconds the server and the client spent from the write
# to the last answer, user and kernel apart: the server's
# kernel share is the TCP sends (on loopback the receiving side's work
# too) and epoll, its user share hierad, hyper and tokio.
# Environment: WAITERS (5000), ROUNDS (3), BIN (the hierad binary;
# default: the release build),
# PIN (0; 1: pin both with `taskset`), SERVER_CPUS (0) and CLIENT_CPUS (1):
# the cores each is pinned to with PIN=1, OUT (target/bench-results).
set -euo pipefail
cd "$(dirname "$0")/.."
WAITERS=${WAITERS:-5000}
ROUNDS=${ROUNDS:-3}

source bench/lib.sh
prepare changes
ulimit -n $((WAITERS + 1024)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"
server_pin=() client_pin=()
placed="server and client on any core"
if [ "${PIN:-0}" != 0 ] && [ "$(nproc)" -ge 2 ]; then
  server_pin=(taskset -c "${SERVER_CPUS:-0}")
  client_pin=(taskset -c "${CLIENT_CPUS:-1}")
  placed="server on ${SERVER_CPUS:-0}, client on ${CLIENT_CPUS:-1}"
fi

"$bin" import data --env 1 --db "$work/env.db" >/dev/null
echo "load: $(uptime | sed 's/.*load average: //'); $placed ($(nproc) cores)"

# A fresh server each round: a second round on the same one reuses what
# the first freed, and its RSS would not grow.
for round in $(seq "$ROUNDS"); do
  start hierad "${server_pin[@]}" "$bin" serve --listen 127.0.0.1:0 --db "$work/env.db" --no-sample \
    --max-connections $((WAITERS + 100)) --max-change-waiters $((WAITERS + 100))
  timeout 120 "${client_pin[@]}" "$bin" bench waiters --server "${URL#http://}" \
    --waiters "$WAITERS" --pid "$PID" --body "{\"round\": $round}" \
    --path /api/v1/config/environments/1/resources/astute/values/keys/bench_round
  kill "$PID"
  wait "$PID" 2>/dev/null || true
done
