-- Bulk load for bench/scale/run.sh: BENCH_N entities as `$batch` requests of
-- 100 inserts (one changeset, one partition each) into BENCH_TABLE. Entity i
-- goes to partition <BENCH_PK_PREFIX><i / BENCH_PSIZE, 6 digits> (or exactly
-- BENCH_PK when set) with RowKey r<i, 7 digits>; BENCH_PSIZE must be a
-- multiple of 100. Once every batch is answered the thread stops and writes
-- the entities completed in each wall-clock second (comma-separated) to
-- BENCH_DONE_FILE; wrk's main thread still sleeps for its -d, so the caller
-- waits for that file and ends wrk with SIGINT (which prints the summary).
-- Bodies are formatted here, in C-speed Lua, because the
-- Node loader (bench/js/loader.mjs) costs a whole core at ~170k entities/s
-- and the client shares the machine's two cores with the server. Run with
-- `wrk -t1` and a long -d (connections that find no batch left poll the
-- health route until the last batch is answered).
-- The entity: 10 properties of several Edm types, ~420 bytes of JSON; as
-- stored (storage/entity_codec.cc) a value of about 245 bytes, a 27-byte key.
local c = dofile((os.getenv("BENCH_WRK_DIR") or "bench/wrk") .. "/common.lua")
setup, done = c.failure_counting()
local total = c.n
local psize = tonumber(os.getenv("BENCH_PSIZE") or "5000")
local prefix = os.getenv("BENCH_PK_PREFIX") or "p"
local fixed_pk = os.getenv("BENCH_PK_FIXED")
if fixed_pk == "" then fixed_pk = nil end
local batches = math.ceil(total / 100)
local next_batch, done_batches = 0, 0
failed = 0
local per_second, first_second = {}, nil
local path, headers, part_head, health
local cities = { "Oslo", "Lima", "Pune", "Kobe", "Graz" }

local function entity(pk, i)
  local joined = 1577836800 + (i % 100000000)  -- 2020-01-01 + i seconds
  return string.format(
    '{"PartitionKey":"%s","RowKey":"r%07d","Name":"customer r%07d of partition %s",' ..
    '"Email":"user.%d@example-%d.com","City":"%s","Age":%d,"Orders":"%d","Orders@odata.type":"Edm.Int64",' ..
    '"Balance":%.6f,"Active":%s,"Joined":"%sZ","Joined@odata.type":"Edm.DateTime",' ..
    '"Id":"%08x-0000-4000-8000-%08x0000","Id@odata.type":"Edm.Guid",' ..
    '"Notes":"note %d lorem ipsum dolor sit amet, consectetur adipiscing"}',
    pk, i, i, pk, i, i % 97, cities[i % 5 + 1], 18 + i % 70, i * 7919, (i % 100000) / 7,
    (i % 3 ~= 0) and "true" or "false", os.date("!%Y-%m-%dT%H:%M:%S", joined), i % 4294967296,
    (i * 2654435761) % 4294967296, i % 1000)
end

function init(args)
  path, headers, part_head = c.batch_template("scale")
  health = wrk.format("GET", "/_tablestone/health")
end

local verified = false
function request()
  -- wrk calls request() once in this state to check the script before any
  -- connection sends; that call must not use up a batch.
  if not verified then
    verified = true
    return health
  end
  if next_batch >= batches then return health end
  local from = next_batch * 100
  next_batch = next_batch + 1
  local to = math.min(from + 100, total)
  local pk = fixed_pk or string.format("%s%06d", prefix, math.floor(from / psize))
  local parts = { "--batch_scale\r\nContent-Type: multipart/mixed; boundary=changeset_scale\r\n\r\n" }
  for i = from, to - 1 do parts[#parts + 1] = part_head .. entity(pk, i) .. "\r\n" end
  parts[#parts + 1] = "--changeset_scale--\r\n--batch_scale--\r\n"
  return wrk.format("POST", path, headers, table.concat(parts))
end

function response(status, hdrs, body)
  if status == 200 then return end  -- a health poll
  local inner = body and string.match(body, "HTTP/1%.1 (%d%d%d)")
  -- A non-2xx outer status is already counted by wrk itself.
  if status == 202 and (not inner or string.sub(inner, 1, 1) ~= "2") then failed = failed + 1 end
  done_batches = done_batches + 1
  local now = os.time()
  first_second = first_second or now
  local s = now - first_second + 1
  per_second[s] = (per_second[s] or 0) + 100
  if done_batches >= batches then
    local out = {}
    for k = 1, s do out[k] = tostring(per_second[k] or 0) end
    wrk.thread:stop()
    local f = io.open(os.getenv("BENCH_DONE_FILE") or "/dev/null", "w")
    f:write(table.concat(out, ","), "\n")
    f:close()
  end
end
