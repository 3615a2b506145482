-- Point GET on a new connection each time: get.lua's requests with
-- "Connection: close", so the server closes after every answer and wrk
-- connects again: over https:// a TLS handshake per request (full and resumed
-- handshakes are measured apart by bench/ab.sh's tlsnew and tlsresume).
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup = c.setup
done = c.done
local reqs = {}
function init(args)
  math.randomseed(os.time() + (tid or 0) * 7919)
  local h = { ["Accept"] = "application/json;odata=nometadata", ["x-ms-version"] = "2019-02-02",
              ["Connection"] = "close" }
  for i = 0, c.n - 1 do reqs[i + 1] = wrk.format("GET", c.entity_path(c.pk, c.rk(i)), h) end
end
function request() return reqs[math.random(#reqs)] end
