-- Shared code of the wrk scenario scripts (bench/wrk/*.lua). Loaded with
-- dofile(BENCH_WRK_DIR .. "/common.lua"). Parameters come from the
-- environment, set by bench/run.sh:
--   BENCH_SAS      account SAS query string (no leading '?'); required
--   BENCH_BASE     http://127.0.0.1:<port> (for $batch sub-request URLs)
--   BENCH_TABLE    table name
--   BENCH_PK       partition key of the scenario
--   BENCH_N        number of pre-loaded entities (keys r0000000..)
--   BENCH_THREADS  wrk -t value (delete interleaves keys over threads)
-- Every script prints one "RESULT {json}" line from done(), which run.sh
-- parses: requests, duration, non-2xx count, socket errors, latency
-- percentiles in microseconds.
local M = {}

M.account = os.getenv("BENCH_ACCOUNT") or "devstoreaccount1"
M.sas = os.getenv("BENCH_SAS") or error("BENCH_SAS is not set")
M.base = os.getenv("BENCH_BASE") or "http://127.0.0.1"
M.table = os.getenv("BENCH_TABLE") or "bench"
M.pk = os.getenv("BENCH_PK") or "pt"
M.n = tonumber(os.getenv("BENCH_N") or "10000")
M.threads = tonumber(os.getenv("BENCH_THREADS") or "1")

M.json_headers = {
  ["Accept"] = "application/json;odata=nometadata",
  ["Content-Type"] = "application/json",
  ["DataServiceVersion"] = "3.0",
  ["x-ms-version"] = "2019-02-02",
}

function M.rk(i) return string.format("r%07d", i) end

-- The benchmark entity (~300 bytes), the same shape as bench/js/lib.mjs.
function M.entity_json(pk, rk, i)
  return string.format(
    '{"PartitionKey":"%s","RowKey":"%s","Name":"name-%s-abcdefghijklmnopqrstuvwxyz0123456789",' ..
    '"Num":%d,"Big":"%d","Big@odata.type":"Edm.Int64","Score":%.6f,"Active":%s,' ..
    '"When":"2024-01-01T00:00:00.000Z","When@odata.type":"Edm.DateTime"}',
    pk, rk, rk, i, i * 1000003, i / 7, (i % 2 == 0) and "true" or "false")
end

function M.entity_path(pk, rk)
  return string.format("/%s/%s(PartitionKey='%s',RowKey='%s')?%s", M.account, M.table, pk, rk, M.sas)
end

function M.copy(t, extra)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  for k, v in pairs(extra or {}) do out[k] = v end
  return out
end

-- Gives each thread a distinct id (0-based) as the global `tid`.
local next_tid = 0
function M.setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
end

-- What every `$batch` of inserts into M.table needs: the request path, the
-- outer headers (boundary batch_<tag>) and the header of one insert part
-- (changeset changeset_<tag>, Prefer: return-no-content).
function M.batch_template(tag)
  local path = string.format("/%s/$batch?%s", M.account, M.sas)
  local headers = {
    ["Content-Type"] = "multipart/mixed; boundary=batch_" .. tag,
    ["Accept"] = "application/json;odata=minimalmetadata",
    ["DataServiceVersion"] = "3.0",
    ["x-ms-version"] = "2019-02-02",
  }
  local part_head = "--changeset_" .. tag .. "\r\nContent-Type: application/http\r\n" ..
    "Content-Transfer-Encoding: binary\r\n\r\n" ..
    string.format("POST %s/%s/%s HTTP/1.1\r\n", M.base, M.account, M.table) ..
    "Content-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\n" ..
    "Prefer: return-no-content\r\nDataServiceVersion: 3.0\r\n\r\n"
  return path, headers, part_head
end

-- setup() and done() for scripts whose threads count failed changesets in
-- the global `failed` (a 202 can carry one): done() runs in its own Lua
-- state, so it collects each thread's count and reports them as non-2xx.
function M.failure_counting()
  local threads = {}
  local function setup(thread)
    M.setup(thread)
    threads[#threads + 1] = thread
  end
  local function done(summary, latency, requests)
    local f = 0
    for _, t in ipairs(threads) do f = f + (t:get("failed") or 0) end
    summary.errors.status = summary.errors.status + f
    M.done(summary, latency, requests)
  end
  return setup, done
end

function M.done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%d,"duration_us":%d,"bytes":%d,"non2xx":%d,"socket_errors":%d,' ..
    '"timeouts":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.status, e.connect + e.read + e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean, latency.max))
end

return M
