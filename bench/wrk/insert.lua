-- Insert Entity (POST to the table) with unique keys: partition BENCH_PK
-- (unique per run), RowKey t<thread>-<counter>. 201/204 expected.
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup = c.setup
done = c.done
local path, headers
local counter = 0
function init(args)
  path = string.format("/%s/%s?%s", c.account, c.table, c.sas)
  headers = c.copy(c.json_headers, { ["Prefer"] = "return-no-content" })
end
function request()
  counter = counter + 1
  local rk = string.format("t%d-%09d", tid or 0, counter)
  return wrk.format("POST", path, headers, c.entity_json(c.pk, rk, counter))
end
