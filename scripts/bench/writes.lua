-- wrk script for writes.sh: POST a small body and count acknowledged (201) writes per thread.
-- The counters are globals so done() can read them from each thread with thread:get().
wrk.method = "POST"
wrk.body = '{"note":"bench write"}'
wrk.headers["Content-Type"] = "application/json"

local threads = {}
created = 0
other = 0

function setup(thread)
  table.insert(threads, thread)
end

function response(status, headers, body)
  if status == 201 then
    created = created + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local c, o = 0, 0
  for _, thread in ipairs(threads) do
    c = c + thread:get("created")
    o = o + thread:get("other")
  end
  io.write(string.format("BENCH created=%d other=%d\n", c, o))
end
