-- Entity group transaction ($batch) of BENCH_BATCH (default 100) inserts into
-- one partition BENCH_PK (unique per run), RowKeys t<thread>-<counter>-<j>.
-- The outer answer is 202 even when the changeset fails, so response()
-- checks the first sub-response status and counts failures; done() reports
-- them as non-2xx.
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup = c.setup
local size = tonumber(os.getenv("BENCH_BATCH") or "100")
local path, headers, part_head
local counter = 0
failed = 0
function init(args)
  path = string.format("/%s/$batch?%s", c.account, c.sas)
  headers = {
    ["Content-Type"] = "multipart/mixed; boundary=batch_bench",
    ["Accept"] = "application/json;odata=minimalmetadata",
    ["DataServiceVersion"] = "3.0",
    ["x-ms-version"] = "2019-02-02",
  }
  part_head = "--changeset_bench\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" ..
    string.format("POST %s/%s/%s HTTP/1.1\r\n", c.base, c.account, c.table) ..
    "Content-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\n" ..
    "Prefer: return-no-content\r\nDataServiceVersion: 3.0\r\n\r\n"
end
function request()
  counter = counter + 1
  local parts = { "--batch_bench\r\nContent-Type: multipart/mixed; boundary=changeset_bench\r\n\r\n" }
  for j = 1, size do
    local rk = string.format("t%d-%09d-%03d", tid or 0, counter, j)
    parts[#parts + 1] = part_head .. c.entity_json(c.pk, rk, counter) .. "\r\n"
  end
  parts[#parts + 1] = "--changeset_bench--\r\n--batch_bench--\r\n"
  return wrk.format("POST", path, headers, table.concat(parts))
end
function response(status, hdrs, body)
  local inner = body and string.match(body, "HTTP/1%.1 (%d%d%d)")
  -- A non-2xx outer status is already counted by wrk itself.
  if status == 202 and (not inner or string.sub(inner, 1, 1) ~= "2") then failed = failed + 1 end
end
-- done() runs in its own Lua state: collect the per-thread failure counts.
local threads = {}
function setup(thread)
  c.setup(thread)
  threads[#threads + 1] = thread
end
function done(summary, latency, requests)
  local f = 0
  for _, t in ipairs(threads) do f = f + (t:get("failed") or 0) end
  summary.errors.status = summary.errors.status + f
  c.done(summary, latency, requests)
end
