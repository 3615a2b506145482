#!/bin/sh
# The container's entrypoint, installed as /usr/local/bin/tablestone-entrypoint; `azurite` and
# `azurite-table` on the PATH are links to it (harnesses replace the entrypoint with `azurite`).
#
# Contract: the server always runs as the image's user `tablestone` (uid 10002) and is PID 1
# (`exec`, no shell left behind, so `docker stop`'s SIGTERM reaches it). The image starts as root
# only so that the two things a harness written for Azurite's root image hands over root-owned can be
# given to that user first (docs/migrating-from-azurite.md, "Running as root, serving as uid 10002"):
#   - the data directory (-l/--location, else TABLESTONE_LOCATION, else /data), e.g. a tmpfs that
#     Podman creates root-owned 0755: given to `tablestone` when it is root-owned AND either empty
#     (or missing: then created) or already a tablestone data directory (RocksDB's CURRENT and
#     IDENTITY files). Anything else (`-l /etc`, a link to it) is left as it is, with a warning;
#   - the TLS files (--cert/--key, else TABLESTONE_CERT/TABLESTONE_KEY; the .pfx of --pwd is --cert),
#     e.g. a key copied in as root-owned 0600: when `tablestone` cannot read one, a copy of it (a
#     regular, non-empty file of at most 1 MiB that looks like PEM or DER, so `--key /etc/shadow` is
#     not copied) goes into a fresh 0700 directory under /run (or /tmp) owned by `tablestone`, and the
#     server is given the copy's path.
# A location or TLS file named only inside a --config file is not seen here: name it with the flag or
# the variable. Nothing else is changed, and nothing at all when the container is started as another user
# (`--user 10002`, where the server runs exactly as started) or with TABLESTONE_RUN_AS_ROOT=1 (the
# server then runs as root). The first argument `azurite`/`azurite-table`/`tablestone`, or the name
# this script is started under, is passed on: tablestone acts on it (server/app/flags.cc).
set -u

SERVER=/usr/bin/tablestone
RUN_USER=tablestone
MAX_TLS_BYTES=1048576

warn() { echo "tablestone-entrypoint: $*" >&2; }

case "${0##*/}" in
  azurite | azurite-table) set -- "${0##*/}" "$@" ;;
esac

case "${TABLESTONE_RUN_AS_ROOT:-}" in 1 | true | yes) exec "$SERVER" "$@" ;; esac
[ "$(id -u)" = 0 ] || exec "$SERVER" "$@"

# ---- what the server will use (flags win over the environment, the last flag wins) --------------
location=${TABLESTONE_LOCATION:-/data}
cert=${TABLESTONE_CERT:-}
key=${TABLESTONE_KEY:-}
prepare=1
want=""
for arg; do
  case "$want" in
    location) location=$arg; want=""; continue ;;
    cert) cert=$arg; want=""; continue ;;
    key) key=$arg; want=""; continue ;;
  esac
  case "$arg" in
    -l | --location) want=location ;;
    --location=*) location=${arg#--location=} ;;
    --cert) want=cert ;;
    --cert=*) cert=${arg#--cert=} ;;
    --key) want=key ;;
    --key=*) key=${arg#--key=} ;;
    -h | --help | --version) prepare=0 ;;
  esac
done

# True when the server's user can read file $1.
readable_by_user() {
  setpriv --reuid="$RUN_USER" --regid="$RUN_USER" --init-groups head -c 1 -- "$1" >/dev/null 2>&1
}

# ---- the data directory ---------------------------------------------------------------------------
prepare_location() {
  dir=$(readlink -m -- "$1" 2>/dev/null) || dir=""  # every link resolved; missing parts allowed
  if [ -z "$dir" ]; then warn "data directory '$1': cannot resolve it; left as it is"; return; fi
  if [ ! -e "$dir" ]; then
    mkdir -p -- "$dir" 2>/dev/null || { warn "cannot create data directory $dir"; return; }
  fi
  [ -d "$dir" ] || return 0
  [ "$(stat -c %u -- "$dir")" = 0 ] || return 0
  if [ -z "$(find "$dir" -mindepth 1 -maxdepth 1 -print -quit 2>/dev/null)" ]; then
    chown "$RUN_USER:$RUN_USER" -- "$dir" || warn "cannot give $dir to $RUN_USER"
  elif [ -f "$dir/CURRENT" ] && [ -f "$dir/IDENTITY" ] && [ ! -L "$dir/CURRENT" ] && [ ! -L "$dir/IDENTITY" ]; then
    # A data directory a root server wrote: its root-owned directories and singly-linked regular
    # files, on its own file system (no link is followed; a hard link may be a file from elsewhere).
    find "$dir" -xdev -user 0 \( -type d -o \( -type f -links 1 \) \) \
      -exec chown "$RUN_USER:$RUN_USER" -- {} + || warn "cannot give $dir to $RUN_USER"
  else
    warn "data directory $dir is root-owned and neither empty nor a tablestone data directory: left as" \
      "it is (the server runs as $RUN_USER, uid 10002; set TABLESTONE_RUN_AS_ROOT=1 to run it as root)"
  fi
}

# ---- TLS files ------------------------------------------------------------------------------------
tls_dir=""
# Sets tls_out to the path the server should use for TLS file $1: $1 itself, or a copy its user can
# read (not a command substitution: tls_dir must outlive the call, so both copies share it).
tls_path() {
  src=$1
  tls_out=$src
  # -f first: reading a FIFO or a device to test it could block or never end.
  if [ -z "$src" ] || [ ! -f "$src" ] || [ ! -s "$src" ] || readable_by_user "$src"; then return; fi
  if [ -z "$tls_dir" ]; then
    tls_dir=$(mktemp -d /run/tablestone-tls.XXXXXX 2>/dev/null || mktemp -d /tmp/tablestone-tls.XXXXXX) || return
    chown "$RUN_USER:$RUN_USER" -- "$tls_dir"
  fi
  copy="$tls_dir/$(basename -- "$src")"
  [ -e "$copy" ] && copy="$tls_dir/2-$(basename -- "$src")"
  (umask 077 && head -c $((MAX_TLS_BYTES + 1)) -- "$src" >"$copy") 2>/dev/null
  if [ "$(stat -c %s -- "$copy" 2>/dev/null || echo 0)" -gt "$MAX_TLS_BYTES" ] ||
     { ! grep -q -- '-----BEGIN ' "$copy" 2>/dev/null && [ "$(od -An -tx1 -N1 -- "$copy" | tr -d ' ')" != 30 ]; }; then
    rm -f -- "$copy"
    warn "$src: not readable by $RUN_USER, and not copied (not a PEM or DER file of at most 1 MiB)"
    return
  fi
  chmod 0600 -- "$copy" && chown "$RUN_USER:$RUN_USER" -- "$copy" && tls_out=$copy
}

if [ "$prepare" = 1 ]; then
  prepare_location "$location"
  tls_path "$cert"
  cert_use=$tls_out
  tls_path "$key"
  key_use=$tls_out
  [ -n "$tls_dir" ] && rmdir -- "$tls_dir" 2>/dev/null  # only when nothing was copied into it
  # Rewrites the command line (and the variables) to name the copies.
  n=$#
  want=""
  while [ "$n" -gt 0 ]; do
    arg=$1
    shift
    n=$((n - 1))
    case "$want" in
      cert) [ "$arg" = "$cert" ] && arg=$cert_use ;;
      key) [ "$arg" = "$key" ] && arg=$key_use ;;
    esac
    want=""
    case "$arg" in
      --cert) want=cert ;;
      --key) want=key ;;
      --cert=*) [ "${arg#--cert=}" = "$cert" ] && arg="--cert=$cert_use" ;;
      --key=*) [ "${arg#--key=}" = "$key" ] && arg="--key=$key_use" ;;
    esac
    set -- "$@" "$arg"
  done
  [ "${TABLESTONE_CERT:-}" = "$cert" ] && [ -n "$cert" ] && export TABLESTONE_CERT="$cert_use"
  [ "${TABLESTONE_KEY:-}" = "$key" ] && [ -n "$key" ] && export TABLESTONE_KEY="$key_use"
fi

exec setpriv --reuid="$RUN_USER" --regid="$RUN_USER" --init-groups --no-new-privs "$SERVER" "$@"
