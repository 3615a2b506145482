-- Query Entities with a filter on a non-key property (a full table scan):
-- BENCH_FILTER (URL-encoded), default "Num ge <BENCH_N - 10>", which matches
-- 10 of the BENCH_N entities of table BENCH_TABLE. wrk measures the first
-- response; run.sh checks separately whether it needed continuation pages.
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup = c.setup
done = c.done
local req
function init(args)
  local filter = os.getenv("BENCH_FILTER") or string.format("Num%%20ge%%20%d", c.n - 10)
  local path = string.format("/%s/%s()?$filter=%s&%s", c.account, c.table, filter, c.sas)
  req = wrk.format("GET", path, { ["Accept"] = "application/json;odata=nometadata", ["x-ms-version"] = "2019-02-02" })
end
function request() return req end
