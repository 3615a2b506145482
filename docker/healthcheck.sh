#!/bin/bash
# HEALTHCHECK probe of the tablestone image: GET /_tablestone/health, exit 0 on HTTP 200, else 1.
#
# Uses bash's /dev/tcp so the image needs no curl. The address comes from the server's own settings,
# in its precedence order: --tablePort/--tableHost among PID 1's arguments (the server is PID 1),
# else TABLESTONE_PORT/TABLESTONE_HOST, else 10002 on loopback. A port set only inside a custom
# config file is not seen: set it with the flag or the variable instead.
set -u

port="" host=""
if [[ -r /proc/1/cmdline ]]; then
  mapfile -d '' args < /proc/1/cmdline
  for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
      --tablePort) port="${args[i + 1]:-}" ;;
      --tablePort=*) port="${args[i]#--tablePort=}" ;;
      --tableHost) host="${args[i + 1]:-}" ;;
      --tableHost=*) host="${args[i]#--tableHost=}" ;;
    esac
  done
fi
port="${port:-${TABLESTONE_PORT:-10002}}"
host="${host:-${TABLESTONE_HOST:-127.0.0.1}}"
# A wildcard listen address is reached through loopback.
case "$host" in 0.0.0.0 | "" | localhost) host=127.0.0.1 ;; :: | "[::]") host=::1 ;; esac
host="${host#[}" host="${host%]}"

exec 3<>"/dev/tcp/$host/$port" || exit 1
printf 'GET /_tablestone/health HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$host" >&3
IFS= read -r -t 4 status_line <&3 || exit 1
exec 3<&-
[[ "$status_line" =~ ^HTTP/1\.[01]\ 200 ]] || { echo "unhealthy: ${status_line%$'\r'}"; exit 1; }
echo "healthy ($host:$port)"
