-- Entity group transaction ($batch) of BENCH_BATCH (default 100) inserts into
-- one partition BENCH_PK (unique per run), RowKeys t<thread>-<counter>-<j>.
-- The outer answer is 202 even when the changeset fails, so response()
-- checks the first sub-response status and counts failures; done() reports
-- them as non-2xx.
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup, done = c.failure_counting()
local size = tonumber(os.getenv("BENCH_BATCH") or "100")
local path, headers, part_head
local counter = 0
failed = 0
function init(args)
  path, headers, part_head = c.batch_template("bench")
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
