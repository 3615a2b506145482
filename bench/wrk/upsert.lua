-- Insert Or Replace Entity (PUT without If-Match) of random existing keys
-- BENCH_PK / r0000000..r(BENCH_N-1). Requests are pre-built in init().
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup = c.setup
done = c.done
local reqs = {}
function init(args)
  math.randomseed(os.time() + (tid or 0) * 7919)
  for i = 0, c.n - 1 do
    local rk = c.rk(i)
    reqs[i + 1] = wrk.format("PUT", c.entity_path(c.pk, rk), c.json_headers, c.entity_json(c.pk, rk, i + 1))
  end
end
function request() return reqs[math.random(#reqs)] end
