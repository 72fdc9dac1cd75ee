#!/bin/sh
# The container's entrypoint: runs `hierad "$@"` as the user hierad (uid
# and gid 8750, fixed in the Dockerfile so that host files can be given to
# it). Started as root (the default), it first gives the data folder to
# hierad when it is not already hierad's (a host folder mounted
# root-owned), checks that hierad can read the files given to `serve`,
# then drops root for good (setpriv, from util-linux). Started as another
# user (docker run --user), it changes nothing and checks the folder is
# writable, saying what to do if not.
set -eu
data=${HIERAD_DATA:-/var/lib/hierad}

# The auth file, certificate, key and client CA given to `serve`, by flag
# or environment, one a line. `hierad auth` writes the auth file 0600 for
# whoever ran it, so on the host it is root's or a user's, not hierad's.
served_files() {
    [ "${1:-}" = serve ] || return 0
    auth=${HIERAD_AUTH:-} cert=${HIERAD_TLS_CERT:-} key=${HIERAD_TLS_KEY:-}
    ca=${HIERAD_TLS_CLIENT_CA:-} flag=
    for arg in "$@"; do
        case $flag in
        --auth) auth=$arg ;;
        --tls-cert) cert=$arg ;;
        --tls-key) key=$arg ;;
        --tls-client-ca) ca=$arg ;;
        esac
        flag=
        case $arg in
        --auth | --tls-cert | --tls-key | --tls-client-ca) flag=$arg ;;
        --auth=*) auth=${arg#*=} ;;
        --tls-cert=*) cert=${arg#*=} ;;
        --tls-key=*) key=${arg#*=} ;;
        --tls-client-ca=*) ca=${arg#*=} ;;
        esac
    done
    for file in "$auth" "$cert" "$key" "$ca"; do
        [ -z "$file" ] || printf '%s\n' "$file"
    done
}

if [ "$(id -u)" = 0 ]; then
    if [ "$(stat -c %U "$data")" != hierad ]; then
        chown -R hierad:hierad "$data"
    fi
    files=$(served_files "$@")
    while IFS= read -r file; do
        # A missing file is left to hierad, which says so.
        [ -e "$file" ] || continue
        if ! setpriv --reuid=hierad --regid=hierad --init-groups -- test -r "$file"; then
            echo "hierad-entrypoint: $file is not readable by the user hierad (uid 8750) that the server runs as: on the host, \`chown 8750:8750\` it, keeping its mode (docs/deploy.md, \"Container image\")" >&2
            exit 1
        fi
    done <<EOF_FILES
$files
EOF_FILES
    exec setpriv --reuid=hierad --regid=hierad --init-groups -- hierad "$@"
fi
if [ ! -w "$data" ]; then
    echo "hierad-entrypoint: $data is not writable by uid $(id -u): chown it on the host, or start the container without --user" >&2
    exit 1
fi
exec hierad "$@"
