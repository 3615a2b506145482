-- Query Entities: the first page of 1000 entities of partition BENCH_PK
-- ($filter=PartitionKey eq '<pk>', $top=1000). The partition holds more than
-- 1000 entities, so every answer is a full page.
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup = c.setup
done = c.done
local req
function init(args)
  local path = string.format("/%s/%s()?$filter=PartitionKey%%20eq%%20%%27%s%%27&$top=1000&%s",
                             c.account, c.table, c.pk, c.sas)
  req = wrk.format("GET", path, { ["Accept"] = "application/json;odata=nometadata", ["x-ms-version"] = "2019-02-02" })
end
function request() return req end
