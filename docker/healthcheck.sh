#!/bin/bash
# HEALTHCHECK probe of the tablestone image: GET /_tablestone/health, exit 0 on HTTP 200, else 1.
#
# The address and the scheme come from the server's own settings, in its precedence order:
# --tablePort/--tableHost/--cert among PID 1's arguments (the server is PID 1), else
# TABLESTONE_PORT/TABLESTONE_HOST/TABLESTONE_CERT, else plain HTTP on 10002 on loopback. Plain HTTP
# goes through bash's /dev/tcp (no curl in the image); HTTPS through `openssl s_client`. A listener
# whose TLS certificate is set only inside a config file answers the plain probe 400: the probe then
# tries HTTPS before calling it unhealthy. The probe sends no credential and reads one status line
# from its own server on loopback, so it does not verify the certificate (a self-signed one for
# another name is the usual case); clients of the server still must.
# tests/e2e/python/test_start_and_health.py runs it against a server with and without --cert.
set -u

port="" host="" cert=""
if [[ -r /proc/1/cmdline ]]; then
  mapfile -d '' args < /proc/1/cmdline
  for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
      --tablePort) port="${args[i + 1]:-}" ;;
      --tablePort=*) port="${args[i]#--tablePort=}" ;;
      --tableHost) host="${args[i + 1]:-}" ;;
      --tableHost=*) host="${args[i]#--tableHost=}" ;;
      --cert) cert="${args[i + 1]:-}" ;;
      --cert=*) cert="${args[i]#--cert=}" ;;
    esac
  done
fi
port="${port:-${TABLESTONE_PORT:-10002}}"
host="${host:-${TABLESTONE_HOST:-127.0.0.1}}"
cert="${cert:-${TABLESTONE_CERT:-}}"
# A wildcard listen address is reached through loopback.
case "$host" in 0.0.0.0 | "" | localhost) host=127.0.0.1 ;; :: | "[::]") host=::1 ;; esac
host="${host#[}" host="${host%]}"
request=$'GET /_tablestone/health HTTP/1.1\r\nHost: '"$host"$'\r\nConnection: close\r\n\r\n'

plain_status() {
  exec 3<>"/dev/tcp/$host/$port" || return 1
  printf '%s' "$request" >&3
  IFS= read -r -t 4 status_line <&3
  exec 3<&-
}

tls_status() {
  command -v openssl >/dev/null || { status_line="(HTTPS listener, no openssl to probe it)"; return 1; }
  local target="$host:$port"
  [[ "$host" == *:* ]] && target="[$host]:$port"
  # -quiet: only the application data on stdout; -ign_eof (implied) waits for the server's close.
  status_line="$(printf '%s' "$request" |
    timeout 4 openssl s_client -quiet -connect "$target" 2>/dev/null | head -n 1)"
}

status_line=""
if [[ -n "$cert" ]]; then
  tls_status
else
  plain_status
  [[ "$status_line" =~ ^HTTP/1\.[01]\ 400 ]] && tls_status
fi
status_line="${status_line%$'\r'}"
[[ "$status_line" =~ ^HTTP/1\.[01]\ 200 ]] || { echo "unhealthy: ${status_line:-no answer from $host:$port}"; exit 1; }
echo "healthy ($host:$port${cert:+, https})"
