#!/usr/bin/env bash
# What a flood of abandoned password guesses does to a server (the
# "password checks that outlive their request" attack, docs/security.md
# "Password checks"): a server with `--auth FILE` (a user and a token) is
# first left idle, then flooded: COUNT requests at most, over FLOOD
# seconds at most, WORKERS at a time, each on a new connection from one
# of ADDRS loopback addresses (127.0.x.y), with `Authorization: Basic`
# and a wrong password, reset (SO_LINGER 0) RESET_MS after being sent.
# Meanwhile /healthz is asked on a connection of its own, one request
# after another, and the server's RSS and thread count are read from
# /proc every 100 ms. Printed, idle and under the flood: /healthz
# latency p50/p99, the largest RSS and thread count; and during the
# flood, how a right password on a new connection and the token fared
# (status and time), and the server's hierad_auth_* counters after it.
#
#   bash bench/auth-flood.sh                  # the issue's case: one address
#   ADDRS=1000 WORKERS=32 bash bench/auth-flood.sh   # a thousand addresses
#
# Environment: COUNT (300), FLOOD (10 seconds), WORKERS (1), ADDRS (1),
# RESET_MS (5), IDLE (3 seconds), BIN (target/release/hierad, built
# unless given: BIN=target/debug/hierad measures a debug build, whose
# Argon2 is optimized all the same). Loopback only; the auth file and the
# database live in a temporary folder removed at the end. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-300}
FLOOD=${FLOOD:-10}
WORKERS=${WORKERS:-1}
ADDRS=${ADDRS:-1}
RESET_MS=${RESET_MS:-5}
IDLE=${IDLE:-3}
export COUNT FLOOD WORKERS ADDRS RESET_MS IDLE
command -v python3 >/dev/null || { echo "bench/auth-flood.sh needs python3" >&2; exit 1; }
# shellcheck source=bench/lib.sh
. bench/lib.sh
prepare auth-flood

password='Right-pw-Zq81'
printf '%s\n' "$password" >"$work/pw"
"$bin" auth add-user --file "$work/auth.toml" --role read --password-file "$work/pw" ann >/dev/null
token=$("$bin" auth add-token --file "$work/auth.toml" --role read ci 2>/dev/null)
start server "$bin" serve --listen 127.0.0.1:0 --db "$work/hierad.db" --no-sample --auth "$work/auth.toml"

echo "server pid $PID, $URL; ${FLOOD}s flood, at most $COUNT requests, $WORKERS at a time, from $ADDRS address(es), reset after ${RESET_MS} ms"
python3 - "$URL" "$PID" "$password" "$token" <<'PY'
import base64, os, socket, struct, sys, threading, time

url, pid, password, token = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
host, port = url.removeprefix("http://").rsplit(":", 1)
port = int(port)
env = lambda name: int(os.environ[name])
count, flood, workers, addrs, reset_ms, idle = (
    env("COUNT"), env("FLOOD"), env("WORKERS"), env("ADDRS"), env("RESET_MS"), env("IDLE"))

def basic(user, pw):
    return "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode()

def request(authorization, path="/api/v1/config/environments"):
    return (f"GET {path} HTTP/1.1\r\nhost: localhost\r\nauthorization: {authorization}\r\n"
            "connection: close\r\n\r\n").encode()

def status_of(authorization, timeout=60):
    """A request on a new connection: its status (or what failed) and seconds."""
    start = time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(request(authorization))
            data = s.recv(64)
            status = data[9:12].decode() if data else "closed"
    except OSError as e:
        status = type(e).__name__
    return status, time.monotonic() - start

def proc_status():
    fields = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields[key] = value.split()[0] if value.split() else ""
    except OSError:
        pass
    return int(fields.get("VmRSS", 0)), int(fields.get("Threads", 0))

def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]

class Watch:
    """/healthz latencies and the largest RSS and thread count, until stopped."""
    def __init__(self):
        self.stop, self.latencies, self.rss, self.threads = False, [], 0, 0
        self.t = [threading.Thread(target=self.health), threading.Thread(target=self.proc)]
        for t in self.t: t.start()
    def health(self):
        s = None
        while not self.stop:
            try:
                if s is None:
                    s = socket.create_connection((host, port), timeout=30)
                start = time.monotonic()
                s.sendall(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = s.recv(4096)
                    if not chunk: raise OSError("closed")
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n")
                              if l.lower().startswith(b"content-length"))
                while len(body) < length:
                    body += s.recv(4096)
                self.latencies.append(time.monotonic() - start)
            except (OSError, StopIteration):
                s = None
            time.sleep(0.02)
    def proc(self):
        while not self.stop:
            rss, threads = proc_status()
            self.rss, self.threads = max(self.rss, rss), max(self.threads, threads)
            time.sleep(0.1)
    def end(self):
        self.stop = True
        for t in self.t: t.join()
        return self

def show(name, w):
    ms = lambda v: f"{v * 1000:.1f} ms"
    print(f"{name:>6}: /healthz p50 {ms(percentile(w.latencies, 50))}, p99 {ms(percentile(w.latencies, 99))} "
          f"({len(w.latencies)} asked); RSS max {w.rss / 1024:.0f} MiB; threads max {w.threads}")

w = Watch(); time.sleep(idle); show("idle", w.end())

sent = [0]
lock = threading.Lock()
deadline = time.monotonic() + flood
def guesser(k):
    linger = struct.pack("ii", 1, 0)
    while time.monotonic() < deadline:
        with lock:
            if sent[0] >= count: return
            n = sent[0]; sent[0] += 1
        source = f"127.0.{1 + n % addrs // 250}.{1 + n % addrs % 250}"
        try:
            s = socket.socket()
            s.bind((source, 0))
            s.settimeout(5)
            s.connect((host, port))
            s.sendall(request(basic("ann", f"guess-{n}")))
            time.sleep(reset_ms / 1000)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            s.close()
        except OSError:
            pass

w = Watch()
threads = [threading.Thread(target=guesser, args=(k,)) for k in range(workers)]
for t in threads: t.start()
time.sleep(min(flood / 2, 2))
login = status_of(basic("ann", password))
bearer = status_of(token.strip() and f"Bearer {token.strip()}")
for t in threads: t.join()
took = time.monotonic() - (deadline - flood)
show("flood", w.end())
print(f"  sent {sent[0]} guesses in {took:.1f} s; during the flood a right password: {login[0]} in {login[1]:.2f} s, "
      f"the token: {bearer[0]} in {bearer[1]:.2f} s")
rss, threads_now = proc_status()
print(f"  just after the flood: RSS {rss / 1024:.0f} MiB, {threads_now} threads")
# The counters, once the checks still running have ended (the server's
# own account of what the flood cost).
time.sleep(3)
with socket.create_connection((host, port), timeout=30) as s:
    s.sendall(request(f"Bearer {token.strip()}", "/metrics"))
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk: break
        data += chunk
for line in data.decode(errors="replace").splitlines():
    if line.startswith("hierad_auth_") and not line.startswith("#"):
        print("  " + line)
rss, threads_now = proc_status()
print(f"  3 s later: RSS {rss / 1024:.0f} MiB, {threads_now} threads")
PY
