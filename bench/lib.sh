# Shared by the bench scripts (sourced): they set `work` (a temporary
# folder) and `pids` (an array their cleanup kills) before calling these.

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
  HIERAD_LOG=warn "$@" 2>"$work/$name.log" &
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
