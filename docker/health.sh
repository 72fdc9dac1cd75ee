#!/bin/sh
# The image's HEALTHCHECK: `hierad health` on the address the server
# listens on. A health check is a process of its own, started with the
# image's environment: it sees HIERAD_LISTEN, but not a --listen flag
# given to `docker run … serve`. That one is read from the arguments of
# the container's first process (the server, or with `docker run --init`
# the init process, whose arguments hold the server's).
set -eu
listen=
if [ -r /proc/1/cmdline ]; then
    args=$(tr '\0' '\n' </proc/1/cmdline)
    next=
    while IFS= read -r arg; do
        if [ -n "$next" ]; then
            listen=$arg
            next=
        fi
        case $arg in
        --listen) next=1 ;;
        --listen=*) listen=${arg#--listen=} ;;
        esac
    done <<EOF_ARGS
$args
EOF_ARGS
fi
if [ -n "$listen" ]; then
    exec hierad health --listen "$listen"
fi
exec hierad health
