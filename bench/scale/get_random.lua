-- Point GET of random entities over a whole table loaded by
-- bench/js/loader.mjs (PartitionKey <prefix><i / psize, 6 digits>, RowKey
-- r<i, 7 digits>), so nearly every read misses the server's caches. Requests
-- are formatted per call (pre-building 50M is not possible). Environment as in
-- bench/wrk/common.lua plus BENCH_PSIZE (entities per partition) and
-- BENCH_PK_PREFIX (default p).
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup = c.setup
done = c.done
local psize = tonumber(os.getenv("BENCH_PSIZE") or "5000")
local prefix = os.getenv("BENCH_PK_PREFIX") or "p"
local headers = { ["Accept"] = "application/json;odata=nometadata", ["x-ms-version"] = "2019-02-02" }
function init(args)
  math.randomseed(os.time() + (tid or 0) * 7919)
end
function request()
  local i = math.random(0, c.n - 1)
  local pk = string.format("%s%06d", prefix, math.floor(i / psize))
  return wrk.format("GET", c.entity_path(pk, c.rk(i)), headers)
end
