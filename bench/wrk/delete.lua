-- Delete Entity (DELETE with If-Match: *) of pre-loaded entities
-- BENCH_PK / r0000000.. . Thread t deletes keys t, t+T, t+2T, ... (T =
-- BENCH_THREADS) so threads never collide; run.sh pre-loads BENCH_N keys with
-- a safety margin, and a run that ran out shows up as non-2xx (404) answers.
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup = c.setup
done = c.done
local headers
local counter = -1
function init(args)
  headers = { ["Accept"] = "application/json;odata=nometadata", ["x-ms-version"] = "2019-02-02", ["If-Match"] = "*" }
end
function request()
  counter = counter + 1
  local i = (tid or 0) + counter * c.threads
  return wrk.format("DELETE", c.entity_path(c.pk, c.rk(i)), headers)
end
