# Sourced by docker/test-image.sh (uses its CLI, TAG, WORK, PY, ROOT, RUN_ID, IS_PODMAN, pass, fail,
# log). The image where Azurite's runs, with only the image name changed (issue 33,
# docs/migrating-from-azurite.md):
#   - its tools: /bin/sh, nc, azurite and azurite-table on the PATH; azurite-blob refused plainly;
#   - started as root (as Azurite's image is) the server runs as uid 10002 and a root-owned tmpfs
#     /data and root-owned 0600 TLS files work; `--user 10002:10002` works; hostile paths give nothing
#     away (docker/entrypoint.sh);
#   - the GitHub Actions shape: no command at all, ports published, the Python and JS SDKs through
#     localhost:<mapped port> (the Python SDK then takes its Cosmos path), the Blob and Queue ports'
#     listings and refusal, Azurite's readiness lines, and SIGTERM to exit within a second;
#   - a compose file written for Azurite (docker/compose/azurite-style.yml: Azurite's command line,
#     root-owned tmpfs /data, an `nc -z` healthcheck) run by podman-compose (Debian's);
#   - @testcontainers/azurite 11.7.1 from npm through Podman's Docker-compatible API
#     (tests/e2e/containers/testcontainers.test.js).
# Published ports need Podman's bridge network: these containers run with a copy of its
# containers.conf whose netns is "bridge" (the sandbox's default is host networking), and every port
# is published on 127.0.0.1 only. TABLESTONE_IMAGE_DROPIN=0 skips the block.

DROPIN_CONTAINERS=() DROPIN_API_PID="" DROPIN_COMPOSE=""
DROPIN_KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

dropin_cleanup() {
  local c
  for c in "${DROPIN_CONTAINERS[@]}"; do "$CLI" rm -f "$c" >/dev/null 2>&1; done
  if [[ -n "$DROPIN_COMPOSE" ]]; then
    TABLESTONE_IMAGE="$TAG" podman-compose -f "$ROOT/docker/compose/azurite-style.yml" -p "$DROPIN_COMPOSE" down \
      >/dev/null 2>&1
  fi
  if [[ -n "$DROPIN_API_PID" ]]; then kill "$DROPIN_API_PID" 2>/dev/null; fi
  return 0
}

# The host port published for container port $2 of container $1.
dropin_published_port() { "$CLI" port "$1" "$2" 2>/dev/null | head -1 | sed -E 's/.*:([0-9]+)$/\1/'; }

# Waits until a TCP connect to 127.0.0.1:$1 succeeds (30 s at most).
dropin_wait_port() {
  local deadline=$((SECONDS + 30))
  while (( SECONDS < deadline )); do nc -z 127.0.0.1 "$1" 2>/dev/null && return 0; sleep 0.2; done
  return 1
}

dropin_tools() {
  local tools
  tools="$("$CLI" run --rm --network none --entrypoint /bin/sh "$TAG" -c \
    'for c in sh nc azurite azurite-table; do command -v $c; done; azurite --version; azurite-table --version' 2>&1)"
  if grep -q '/azurite$' <<<"$tools" && grep -q '/azurite-table$' <<<"$tools" && grep -q '/nc$' <<<"$tools" &&
     [[ "$(grep -c '^tablestone ' <<<"$tools")" == 2 ]]; then
    pass "sh, nc, azurite and azurite-table in the image"
  else echo "$tools"; fail "tools in the image"; fi
  if "$CLI" run --rm --network none "$TAG" azurite-blob >"$WORK/blob-alone.log" 2>&1; then
    fail "azurite-blob should be refused"
  elif grep -q 'Table service only' "$WORK/blob-alone.log"; then pass "azurite-blob refused with a clear message"
  else cat "$WORK/blob-alone.log"; fail "azurite-blob message"; fi
}

# The GitHub Actions shape: a service container cannot take a command.
dropin_no_command() {
  local bridge_conf="$1" gha="tablestone-gha-$RUN_ID" port blob_port queue_port lines t0 stop_ms code
  DROPIN_CONTAINERS+=("$gha")
  if ! CONTAINERS_CONF="$bridge_conf" "$CLI" run -d --name "$gha" -p 127.0.0.1::10000 -p 127.0.0.1::10001 \
       -p 127.0.0.1::10002 "$TAG" >/dev/null 2>"$WORK/gha.err"; then
    cat "$WORK/gha.err"; fail "no-command container start"; return
  fi
  port="$(dropin_published_port "$gha" 10002)"
  blob_port="$(dropin_published_port "$gha" 10000)"
  queue_port="$(dropin_published_port "$gha" 10001)"
  if [[ -n "$port" ]] && dropin_wait_port "$port" && dropin_wait_port "$blob_port"; then
    pass "no-command container serves 10000-10002 (published on $blob_port, $queue_port, $port)"
  else
    cat "$WORK/gha.err"; "$CLI" logs "$gha" 2>&1 | tail -20; fail "no-command container"; return
  fi
  lines="$("$CLI" logs "$gha" 2>&1)"
  if grep -qx 'Azurite Blob service is successfully listening at http://0.0.0.0:10000' <<<"$lines" &&
     grep -qx 'Azurite Queue service is successfully listening at http://0.0.0.0:10001' <<<"$lines" &&
     grep -qx 'Azurite Table service is successfully listening at http://0.0.0.0:10002' <<<"$lines"; then
    pass "Azurite's three readiness lines"
  else echo "$lines" | head -20; fail "readiness lines"; fi

  if "$PY" - "$port" "$blob_port" "$queue_port" "$DROPIN_KEY" <<'PYEOF'; then
import http.client, sys
from azure.data.tables import TableServiceClient, UpdateMode
port, blob_port, queue_port, key = sys.argv[1:5]
cs = ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;"
      "TableEndpoint=http://localhost:%s/devstoreaccount1;" % (key, port))
table = TableServiceClient.from_connection_string(cs).create_table("ghashape")
assert table._cosmos_endpoint, "the SDK should take localhost:%s for Cosmos DB" % port
table.create_entity({"PartitionKey": "p", "RowKey": "1", "A": 1})
table.update_entity({"PartitionKey": "p", "RowKey": "1", "B": "merged"}, mode=UpdateMode.MERGE)
table.submit_transaction([("upsert", {"PartitionKey": "p", "RowKey": str(i), "N": i}, {"mode": UpdateMode.MERGE})
                          for i in range(2, 12)])
got = table.get_entity("p", "1")
assert got["A"] == 1 and got["B"] == "merged", got
rows = list(table.query_entities("PartitionKey eq 'p'", results_per_page=4))
assert len(rows) == 11, len(rows)
for p, listing in ((blob_port, b"<Containers />"), (queue_port, b"<Queues />")):
    c = http.client.HTTPConnection("127.0.0.1", int(p), timeout=5)
    c.request("GET", "/devstoreaccount1?comp=list&maxresults=1")
    r = c.getresponse(); body = r.read()
    assert r.status == 200 and listing in body, (p, r.status, body)
    c = http.client.HTTPConnection("127.0.0.1", int(p), timeout=5)
    c.request("PUT", "/devstoreaccount1/c1?restype=container", body=b"")
    r = c.getresponse(); body = r.read()
    assert r.status == 501 and b"Azure Table service only" in body, (r.status, body)
PYEOF
    pass "Python SDK through localhost:$port (its Cosmos path); Blob/Queue listings and refusal"
  else fail "Python SDK through localhost:$port"; fi

  if (cd "$ROOT/tests/e2e/containers" && TABLESTONE_DROPIN_PORT="$port" TABLESTONE_DROPIN_KEY="$DROPIN_KEY" node - <<'JSEOF'); then
const { TableClient } = require("@azure/data-tables");
const cs = `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${process.env.TABLESTONE_DROPIN_KEY};` +
  `TableEndpoint=http://localhost:${process.env.TABLESTONE_DROPIN_PORT}/devstoreaccount1;`;
(async () => {
  const table = TableClient.fromConnectionString(cs, "ghashapejs", { allowInsecureConnection: true });
  await table.createTable();
  await table.submitTransaction([["create", { partitionKey: "p", rowKey: "1", a: 1 }],
    ["create", { partitionKey: "p", rowKey: "2", a: 2 }]]);
  await table.updateEntity({ partitionKey: "p", rowKey: "1", b: "merged" }, "Merge");
  const e = await table.getEntity("p", "1");
  if (e.a !== 1 || e.b !== "merged") throw new Error(JSON.stringify(e));
})().catch((e) => { console.error(e); process.exit(1); });
JSEOF
    pass "JS SDK through localhost:$port"
  else fail "JS SDK through localhost:$port"; fi

  # Two figures: the server's own stop (its log line "stopped in N ms", SIGTERM to closed database)
  # and the whole `podman stop`, which adds the engine's own work (a loaded machine makes that slow).
  # Exit code 0 within the 10 s grace period means SIGTERM did it, not a SIGKILL.
  t0=$(date +%s%N)
  "$CLI" stop -t 10 "$gha" >/dev/null 2>&1
  stop_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  code="$("$CLI" inspect --format '{{.State.ExitCode}}' "$gha" 2>/dev/null)"
  local server_ms
  server_ms="$("$CLI" logs "$gha" 2>&1 | sed -nE 's/.*stopped in ([0-9]+) ms.*/\1/p' | tail -1)"
  log "stop of the no-command container: server ${server_ms:-?} ms, podman stop ${stop_ms} ms, exit code $code"
  if [[ "$code" == 0 && -n "$server_ms" ]] && (( server_ms < 1000 && stop_ms < 10000 )); then
    pass "SIGTERM stops it within a second (server ${server_ms} ms; podman stop ${stop_ms} ms)"
  else fail "stop: server '${server_ms}' ms, podman stop ${stop_ms} ms, exit code '$code'"; fi
}

# A compose file written for Azurite, run by podman-compose.
dropin_compose() {
  local bridge_conf="$1" cport project="tsdropin$$" healthy=0 cname
  if ! command -v podman-compose >/dev/null 2>&1; then
    fail "podman-compose missing (scripts/install-deps.sh installs it)"; return
  fi
  cport="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  DROPIN_COMPOSE="$project"
  if ! CONTAINERS_CONF="$bridge_conf" TABLESTONE_IMAGE="$TAG" TABLESTONE_COMPOSE_PORT="$cport" \
       podman-compose -f "$ROOT/docker/compose/azurite-style.yml" -p "$project" up -d >"$WORK/compose.log" 2>&1; then
    tail -20 "$WORK/compose.log"; fail "podman-compose up"; dropin_cleanup; DROPIN_COMPOSE=""; return
  fi
  cname="$("$CLI" ps -a --filter "label=io.podman.compose.project=$project" --format '{{.Names}}' | head -1)"
  # The healthcheck compose declared (Podman without systemd runs no timer for it: run it here).
  for _ in $(seq 1 100); do
    if "$CLI" healthcheck run "$cname" >/dev/null 2>&1; then healthy=1; break; fi
    sleep 0.2
  done
  if (( healthy )) && "$PY" - "$cport" "$DROPIN_KEY" <<'PYEOF'; then
import sys
from azure.data.tables import TableServiceClient
cs = ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;"
      "TableEndpoint=http://127.0.0.1:%s/devstoreaccount1;" % (sys.argv[2], sys.argv[1]))
t = TableServiceClient.from_connection_string(cs).create_table("composeshape")
t.upsert_entity({"PartitionKey": "p", "RowKey": "r", "V": "x"})
assert t.get_entity("p", "r")["V"] == "x"
PYEOF
    pass "compose file (podman-compose): the nc -z healthcheck passes, the SDK works through its port"
  else
    "$CLI" logs "$cname" 2>&1 | tail -20; tail -20 "$WORK/compose.log"; fail "compose file (healthy=$healthy)"
  fi
  TABLESTONE_IMAGE="$TAG" podman-compose -f "$ROOT/docker/compose/azurite-style.yml" -p "$project" down \
    >/dev/null 2>&1
  DROPIN_COMPOSE=""
}

# @testcontainers/azurite through Podman's Docker-compatible API.
dropin_testcontainers() {
  local bridge_conf="$1" tc_dir="$ROOT/tests/e2e/containers" sock="$WORK/podman-api.sock" t0 rc p f
  if [[ ! -d "$tc_dir/node_modules/@testcontainers/azurite" ]]; then
    fail "tests/e2e/containers/node_modules missing (scripts/install-deps.sh)"; return
  fi
  CONTAINERS_CONF="$bridge_conf" "$CLI" system service --time=0 "unix://$sock" >"$WORK/podman-api.log" 2>&1 &
  DROPIN_API_PID=$!
  for _ in $(seq 1 100); do [[ -S "$sock" ]] && break; sleep 0.1; done
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/tc-key.pem" -out "$WORK/tc-cert.pem" -days 2 \
    -subj /CN=127.0.0.1 -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" >/dev/null 2>&1
  # Its reaper image (ryuk) cannot be pulled here, so the reaper is off and this script removes what
  # the harness leaves; every address the harness hands out stays on loopback.
  t0=$SECONDS
  (cd "$tc_dir" && DOCKER_HOST="unix://$sock" TESTCONTAINERS_RYUK_DISABLED=true \
     TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 TABLESTONE_TC_IMAGE="$TAG" \
     TABLESTONE_TC_CERT="$WORK/tc-cert.pem" TABLESTONE_TC_KEY="$WORK/tc-key.pem" \
     NODE_EXTRA_CA_CERTS="$WORK/tc-cert.pem" \
     timeout 600 node --test --test-reporter=tap testcontainers.test.js) >"$WORK/tc.log" 2>&1
  rc=$?
  p="$(sed -nE 's/^# pass ([0-9]+)$/\1/p' "$WORK/tc.log" | tail -1)"
  f="$(sed -nE 's/^# fail ([0-9]+)$/\1/p' "$WORK/tc.log" | tail -1)"
  grep -E '^# stop|^not ok|^ok' "$WORK/tc.log"
  if [[ -n "$p" && -n "$f" ]]; then
    PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
    log "@testcontainers/azurite 11.7.1 against the image: $p passed, $f failed ($((SECONDS - t0))s, exit $rc)"
    (( f > 0 )) && grep -A40 '^not ok' "$WORK/tc.log" | head -100
    (( rc != 0 && f == 0 )) && fail "node --test exited with $rc"
  else
    tail -40 "$WORK/tc.log"; fail "testcontainers run produced no summary (exit $rc)"
  fi
  # What a failed test left running (the harness labels its containers).
  "$CLI" ps -aq --filter "label=org.testcontainers=true" --filter "ancestor=$TAG" 2>/dev/null |
    xargs -r "$CLI" rm -f >/dev/null 2>&1
  kill "$DROPIN_API_PID" 2>/dev/null
  wait "$DROPIN_API_PID" 2>/dev/null
  DROPIN_API_PID=""
}

# Started as root, as Azurite's image is, the server still runs as uid 10002 (docker/entrypoint.sh):
# a root-owned tmpfs /data and root-owned 0600 TLS files work; `--user 10002:10002` works as before;
# the entrypoint gives nothing else away (a data directory that is neither empty nor tablestone's, a
# link to one, a hard link inside one, a TLS path that is not a PEM/DER file).
dropin_root_start() {
  local c="tablestone-root-$RUN_ID" out tport
  DROPIN_CONTAINERS+=("$c")
  # Root-owned 0755 tmpfs at /data (what Podman makes of compose's `tmpfs: - /data`).
  "$CLI" run -d --name "$c" --network none --tmpfs /data:rw,mode=0755 "$TAG" >/dev/null 2>"$WORK/root.err" ||
    cat "$WORK/root.err"
  out=""
  for _ in $(seq 1 50); do
    out="$("$CLI" exec "$c" sh -c 'tablestone-healthcheck >/dev/null && grep "^Uid:" /proc/1/status &&
      stat -c "%U %a" /data' 2>/dev/null)" && break
    sleep 0.2
  done
  if grep -qP '^Uid:\t10002\t10002\t10002\t10002$' <<<"$out" && grep -qx 'tablestone 755' <<<"$out"; then
    pass "root start on a root-owned tmpfs /data: healthy, server uid 10002, /data given to tablestone"
  else echo "$out"; "$CLI" logs "$c" 2>&1 | tail -10; fail "root start on a root-owned tmpfs /data"; fi
  "$CLI" rm -f "$c" >/dev/null 2>&1

  # --user 10002:10002: no entrypoint work, the server runs as started.
  "$CLI" run -d --name "$c" --network none --user 10002:10002 "$TAG" >/dev/null 2>"$WORK/root.err" ||
    cat "$WORK/root.err"
  out=""
  for _ in $(seq 1 50); do
    out="$("$CLI" exec "$c" sh -c 'tablestone-healthcheck >/dev/null && grep "^Uid:" /proc/1/status' 2>/dev/null)" &&
      break
    sleep 0.2
  done
  if grep -qP '^Uid:\t10002\t' <<<"$out"; then pass "--user 10002:10002 still works"
  else echo "$out"; "$CLI" logs "$c" 2>&1 | tail -10; fail "--user 10002:10002"; fi
  "$CLI" rm -f "$c" >/dev/null 2>&1

  # Root-owned 0600 cert and key written inside the container (as a harness copies them), HTTPS
  # answered, the server as uid 10002 with copies under /run.
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/root-key.pem" -out "$WORK/root-cert.pem" -days 2 \
    -subj /CN=127.0.0.1 >/dev/null 2>&1
  tport="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  "$CLI" run -d --name "$c" --network host -e "C=$(cat "$WORK/root-cert.pem")" -e "K=$(cat "$WORK/root-key.pem")" \
    --entrypoint /bin/sh "$TAG" -c 'umask 077 && printf "%s\n" "$C" >/c.pem && printf "%s\n" "$K" >/k.pem &&
      unset C K && exec azurite --tableHost 127.0.0.1 --tablePort "$0" --cert /c.pem --key=/k.pem --inMemoryPersistence' \
    "$tport" >/dev/null 2>"$WORK/root.err" || cat "$WORK/root.err"
  if "$PY" - "$tport" <<'PYEOF' && out="$("$CLI" exec "$c" sh -c 'grep "^Uid:" /proc/1/status; stat -c "%U %a" /c.pem /k.pem')" &&
import http.client, ssl, sys, time
for _ in range(100):
    try:
        c = http.client.HTTPSConnection("127.0.0.1", int(sys.argv[1]), timeout=2, context=ssl._create_unverified_context())
        c.request("GET", "/_tablestone/health")
        sys.exit(0 if c.getresponse().status == 200 else 1)
    except OSError:
        time.sleep(0.2)
sys.exit(1)
PYEOF
     grep -qP '^Uid:\t10002\t' <<<"$out" && grep -qx 'root 600' <<<"$out"; then
    pass "root-owned 0600 --cert/--key: HTTPS answers, server uid 10002"
  else echo "${out:-}"; "$CLI" logs "$c" 2>&1 | tail -10; fail "root-owned 0600 --cert/--key"; fi
  # The image's HEALTHCHECK follows the listener: --cert among PID 1's arguments, so it probes over TLS.
  if out="$("$CLI" exec "$c" tablestone-healthcheck 2>&1)" && [[ "$out" == *"healthy: https://"* ]]; then
    pass "HEALTHCHECK probe of an HTTPS (--cert) container"
  else echo "${out:-}"; fail "HEALTHCHECK probe of an HTTPS (--cert) container"; fi
  "$CLI" rm -f "$c" >/dev/null 2>&1

  # Hostile paths: each server start fails (port 1 is privileged, or it cannot use the paths) and
  # nothing may change hands or be copied. /tmp/fake looks like a data directory and holds a hard link
  # to /etc/passwd and a symbolic link to /etc/group: the directory is given away, the files they name
  # are not. A missing data directory is created and only its last component given away.
  out="$("$CLI" run --rm --network none --entrypoint /bin/sh "$TAG" -c '
    ln -s /etc /tmp/etclink; ln -s /etc/shadow /tmp/shadowlink
    mkdir /tmp/fake && touch /tmp/fake/CURRENT /tmp/fake/IDENTITY
    ln /etc/passwd /tmp/fake/hard && ln -s /etc/group /tmp/fake/sym
    for args in "--location /etc" "--location /tmp/etclink" "--location=/" "-l /usr/local/bin" \
        "--inMemoryPersistence --cert /etc/shadow --key /etc/shadow" \
        "--inMemoryPersistence --cert=/tmp/shadowlink --key /proc/1/environ" "--location /tmp/fake" \
        "-l /tmp/new/data"; do
      timeout 10 tablestone-entrypoint $args --tablePort 1 >/dev/null 2>&1
    done
    stat -c "%u %n" /etc / /usr/local/bin /etc/passwd /etc/group /etc/shadow /tmp/fake /tmp/fake/CURRENT \
      /tmp/new /tmp/new/data
    find /run /tmp -path "*tablestone-tls*" -type f' 2>"$WORK/hostile.err")"
  if [[ "$out" == $'0 /etc\n0 /\n0 /usr/local/bin\n0 /etc/passwd\n0 /etc/group\n0 /etc/shadow\n10002 /tmp/fake\n10002 /tmp/fake/CURRENT\n0 /tmp/new\n10002 /tmp/new/data' ]]; then
    pass "hostile --location/--cert paths: nothing but an empty or tablestone data directory changes owner, nothing copied"
  else echo "$out"; cat "$WORK/hostile.err"; fail "hostile --location/--cert paths"; fi
}

dropin_checks() {
  local t_all=$SECONDS bridge_conf="$WORK/containers-bridge.conf"
  dropin_tools
  dropin_root_start
  if (( ! IS_PODMAN )); then log "drop-in: the published-port checks are written for podman; skipped"; return 0; fi
  if [[ -n "${CONTAINERS_CONF:-}" ]]; then
    sed -E 's/^netns *= *"host"/netns = "bridge"/' "$CONTAINERS_CONF" >"$bridge_conf"
  else
    printf '[containers]\nnetns = "bridge"\n' >"$bridge_conf"
  fi
  grep -q '^netns = "bridge"' "$bridge_conf" || { fail "no netns line in $CONTAINERS_CONF"; return; }
  dropin_no_command "$bridge_conf"
  dropin_compose "$bridge_conf"
  dropin_testcontainers "$bridge_conf"
  log "drop-in checks took $((SECONDS - t_all))s"
}
