#!/usr/bin/env bash
# What a decrypted answer costs (docs/security.md, "Secrets"): a server
# with eyaml keys and a token with `decrypt = true` answers, over one
# keep-alive connection from loopback, ROUNDS rounds of COUNT lookups of
# `secret` (an ENC[PKCS7,…] block, answered decrypted) and of `plain` (a
# String as long as the plaintext), alternating, after a warm-up that
# makes the first decryption. Printed: the median round's microseconds
# per lookup of each, and their ratio (the goal: at most 1.2).
#
#   bash bench/secrets.sh
#   BIN=target/debug/hierad bash bench/secrets.sh   # a debug build
#
# Environment: COUNT (2000), ROUNDS (7), BIN (target/release/hierad,
# built unless given). The key pair is made with openssl (as `eyaml
# createkeys` would: a 2048-bit RSA key and a self-signed certificate).
# Loopback only; everything lives in a temporary folder removed at the
# end. Needs python3 and openssl.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-2000}
ROUNDS=${ROUNDS:-7}
export COUNT ROUNDS
for tool in python3 openssl; do
  command -v "$tool" >/dev/null || { echo "bench/secrets.sh needs $tool" >&2; exit 1; }
done
# shellcheck source=bench/lib.sh
. bench/lib.sh
prepare secrets

openssl req -x509 -nodes -newkey rsa:2048 -days 3650 -subj /CN=bench \
  -keyout "$work/private.pem" -out "$work/public.pem" 2>/dev/null
chmod 600 "$work/private.pem"
token=$("$bin" auth add-token --file "$work/auth.toml" --role admin --decrypt master 2>/dev/null)
plaintext='s3cret-db-password-0123456789'
block=$("$bin" secrets encrypt --eyaml-public-key "$work/public.pem" -o string "$plaintext")
mkdir -p "$work/config" "$work/data"
printf ':backends:\n  - yaml\n:hierarchy:\n  - common\n' >"$work/config/hiera.yaml"
printf 'secret: %s\nplain: %s\n' "$block" "$(echo "$plaintext" | tr 'a-z' 'A-Z')" >"$work/data/common.yaml"
start server "$bin" serve --listen 127.0.0.1:0 --db "$work/hierad.db" --no-sample \
  --auth "$work/auth.toml" \
  --eyaml-private-key "$work/private.pem" --eyaml-public-key "$work/public.pem"
for tree in config data; do
  HIERAD_TOKEN=$token "$bin" import "$work/$tree" --env 1 --server "$URL" >/dev/null
done

echo "server pid $PID, $URL; $ROUNDS rounds of $COUNT lookups each"
python3 - "$URL" "$token" "$plaintext" <<'PY'
import http.client, json, os, statistics, sys, time

url, token, plaintext = sys.argv[1], sys.argv[2], sys.argv[3]
host, port = url.removeprefix("http://").rsplit(":", 1)
count, rounds = int(os.environ["COUNT"]), int(os.environ["ROUNDS"])
conn = http.client.HTTPConnection(host, int(port))
headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}

def lookup(key):
    body = json.dumps({"environment": 1, "key": key})
    conn.request("POST", "/api/v1/lookup", body, headers)
    answer = conn.getresponse()
    data = answer.read()
    if answer.status != 200:
        sys.exit(f"{key}: {answer.status} {data[:200]!r}")
    return json.loads(data)["value"]

# The first decryption, and proof the answer is the plaintext.
assert lookup("secret") == plaintext, "not decrypted"
assert lookup("plain") == plaintext.upper()
per = {"secret": [], "plain": []}
for _ in range(rounds):
    for key in ("plain", "secret"):
        started = time.perf_counter()
        for _ in range(count):
            lookup(key)
        per[key].append((time.perf_counter() - started) / count * 1e6)
plain, secret = statistics.median(per["plain"]), statistics.median(per["secret"])
print(f"unencrypted: {plain:.1f} us per lookup (median of {rounds} rounds)")
print(f"decrypted:   {secret:.1f} us per lookup")
print(f"ratio decrypted/unencrypted: {secret / plain:.3f} (goal: at most 1.2)")
PY
