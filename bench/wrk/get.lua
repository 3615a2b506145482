-- Point GET (Query Entity by PartitionKey+RowKey) of random existing
-- entities BENCH_PK / r0000000..r(BENCH_N-1). Requests are pre-built in init().
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup = c.setup
done = c.done
local reqs = {}
function init(args)
  math.randomseed(os.time() + (tid or 0) * 7919)
  local h = { ["Accept"] = "application/json;odata=nometadata", ["x-ms-version"] = "2019-02-02" }
  for i = 0, c.n - 1 do reqs[i + 1] = wrk.format("GET", c.entity_path(c.pk, c.rk(i)), h) end
end
function request() return reqs[math.random(#reqs)] end
