-- wrk's requests for bench/cpu.sh's lookup classes: POST /api/v1/lookup
-- with the JSON bodies of a file, one a line, each thread in turn from
-- its own place in the list. The requests are formatted once, in init,
-- so the client's Lua does no work per request but pick one.
--
--   wrk -t2 -c32 -d5s -s bench/wrk.lua http://127.0.0.1:PORT -- BODIES
--
-- Headers given with -H (Authorization) are kept: they are in wrk.headers
-- when init runs.

local requests = {}
local at = 0

-- Runs in the main state, once per thread: each thread's starting place.
local threads = 0
function setup(thread)
  thread:set("first", threads * 7919)
  threads = threads + 1
end

function init(args)
  wrk.method = "POST"
  wrk.path = "/api/v1/lookup"
  wrk.headers["Content-Type"] = "application/json"
  for line in io.lines(args[1]) do
    requests[#requests + 1] = wrk.format(nil, nil, nil, line)
  end
  if #requests == 0 then
    error(args[1] .. " holds no request bodies")
  end
  -- Threads start at different places, so two do not send the same
  -- body at the same moment.
  at = (first or 0) % #requests
end

function request()
  at = at % #requests + 1
  return requests[at]
end
