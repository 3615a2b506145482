#!/bin/bash
# HEALTHCHECK probe of the tablestone image: `tablestone health`, exit 0 when the server answers
# GET /_tablestone/health with 200, else 1 (one line saying why).
#
# The probe follows the listener the server itself uses: PID 1 is the server, and its arguments are
# handed to `tablestone health -- FLAGS`, which reads them with the container's environment and the
# --config file they name through the server's own settings loader (address, port, and https when
# there is a certificate, wherever it was set). Outside a container (PID 1 is not tablestone) only
# the environment counts. Over HTTPS the probe trusts exactly the server's own certificate (PEM
# --cert, or the PKCS#12 --cert opened with --pwd), whatever names it carries: the TLS handshake
# proves the server holds that certificate's key. Nothing is ever probed unverified.
# Tests: tests/e2e/python/test_start_and_health.py (with and without --cert, a config file's
# certificate, a certificate for another name), docker/test-dropin.sh (an HTTPS container).
set -u

tablestone="$(command -v tablestone || echo /usr/bin/tablestone)"
server_flags=()
if [[ -r /proc/1/cmdline ]]; then
  mapfile -d '' cmdline < /proc/1/cmdline
  case "${cmdline[0]##*/}" in
    tablestone) server_flags=("${cmdline[@]:1}") ;;
    azurite | azurite-table) server_flags=("${cmdline[0]##*/}" "${cmdline[@]:1}") ;;
  esac
fi
exec "$tablestone" health --timeoutMs 4000 -- "${server_flags[@]}"
