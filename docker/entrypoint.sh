#!/bin/sh
# The container's entrypoint: runs `hierad "$@"` as the user hierad.
# Started as root (the default), it first gives the data folder to hierad
# when it is not already hierad's (a host folder mounted root-owned), then
# drops root for good (setpriv, from util-linux). Started as another user
# (docker run --user), it changes nothing and checks the folder is
# writable, saying what to do if not.
set -eu
data=${HIERAD_DATA:-/var/lib/hierad}
if [ "$(id -u)" = 0 ]; then
    if [ "$(stat -c %U "$data")" != hierad ]; then
        chown -R hierad:hierad "$data"
    fi
    exec setpriv --reuid=hierad --regid=hierad --init-groups -- hierad "$@"
fi
if [ ! -w "$data" ]; then
    echo "hierad-entrypoint: $data is not writable by uid $(id -u): chown it on the host, or start the container without --user" >&2
    exit 1
fi
exec hierad "$@"
