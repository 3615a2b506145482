-- Merge Entity (MERGE with If-Match: *) of random existing keys
-- BENCH_PK / r0000000..r(BENCH_N-1). Requests are pre-built in init().
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup = c.setup
done = c.done
local reqs = {}
function init(args)
  math.randomseed(os.time() + (tid or 0) * 7919)
  local h = c.copy(c.json_headers, { ["If-Match"] = "*" })
  for i = 0, c.n - 1 do
    local rk = c.rk(i)
    reqs[i + 1] = wrk.format("MERGE", c.entity_path(c.pk, rk), h, c.entity_json(c.pk, rk, i + 2))
  end
end
function request() return reqs[math.random(#reqs)] end
