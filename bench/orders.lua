-- wrk script for bench/orders.sh: POST /api/orders with a fresh order number and a free seat per
-- request (500 seats per show), bearer token and id prefix from the arguments after `--`.
local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  token = args[1]
  prefix = args[2]
  counter = 0
  created = 0
  other = 0
end

function request()
  counter = counter + 1
  local show = string.format("%s-show-%d-%d", prefix, id, math.floor(counter / 500))
  local body = string.format(
    '{"orderNo":"%s-o-%d-%d","userId":"u%d","showId":"%s","seatIds":["S%d"],"amountCents":5000}',
    prefix, id, counter, id, show, counter % 500)
  return wrk.format("POST", "/api/orders",
    {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, body)
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
  for _, t in ipairs(threads) do
    c = c + t:get("created")
    o = o + t:get("other")
  end
  io.write(string.format("orders_created %d\nother_answers %d\nduration_us %d\nlatency_p99_us %d\n",
    c, o, summary.duration, latency:percentile(99)))
end
