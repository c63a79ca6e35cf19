-- wrk script for bench/independent.sh: each thread POSTs its share of the pre-signed hmac callback
-- bodies (one per line in the file named after `--`, written by seatflow-bench --write-bodies), each
-- once, and counts the answers by status. Arguments: BODIES_FILE THREADS.
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  local path, total = args[1], tonumber(args[2])
  mine = {}
  local n = 0
  for line in io.lines(path) do
    if n % total == id then
      mine[#mine + 1] = line
    end
    n = n + 1
  end
  next_body = 0
  acked = 0
  other = 0
  wrapped = 0
end

function request()
  next_body = next_body + 1
  if next_body > #mine then
    next_body = 1
    wrapped = wrapped + 1
  end
  return wrk.format("POST", "/api/payment/notify/hmac",
    {["Content-Type"] = "application/json"}, mine[next_body])
end

function response(status, headers, body)
  if status == 200 then
    acked = acked + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local a, o, w = 0, 0, 0
  for _, t in ipairs(threads) do
    a = a + t:get("acked")
    o = o + t:get("other")
    w = w + t:get("wrapped")
  end
  io.write(string.format(
    "acked %d\nother_answers %d\nwrapped %d\nduration_us %d\nlatency_p50_us %d\nlatency_p99_us %d\n",
    a, o, w, summary.duration, latency:percentile(50), latency:percentile(99)))
end
