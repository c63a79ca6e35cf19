-- wrk script for bench/flood.sh: forged hmac notifies (a well-formed body in the signing window
-- with a wrong signature, so each one that is verified costs a full HMAC check) from one source,
-- named by X-Forwarded-For (the engine trusts 127.0.0.1 as a proxy in this bench). Counts the
-- answers by status. Arguments: SOURCE_ADDRESS.
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  source = args[1]
  sent = 0
  unauthorized = 0
  limited = 0
  other = 0
end

function request()
  sent = sent + 1
  local body = string.format(
    '{"callbackId":"flood-%d-%d","paymentNo":"P-flood","status":1,"timestamp":%d,"sign":"%s"}',
    id, sent, os.time() * 1000, string.rep("0", 64))
  return wrk.format("POST", "/api/payment/notify/hmac",
    {["Content-Type"] = "application/json", ["X-Forwarded-For"] = source}, body)
end

function response(status, headers, body)
  if status == 401 then
    unauthorized = unauthorized + 1
  elseif status == 429 then
    limited = limited + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local u, l, o = 0, 0, 0
  for _, t in ipairs(threads) do
    u = u + t:get("unauthorized")
    l = l + t:get("limited")
    o = o + t:get("other")
  end
  io.write(string.format("answered_401 %d\nanswered_429 %d\nother_answers %d\nduration_us %d\n",
    u, l, o, summary.duration))
end
