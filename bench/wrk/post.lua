-- wrk script for the bench: POSTs a fixed body with fixed headers and prints one JSON line of
-- results. Inputs (environment): BENCH_BODY_FILE (the request body), BENCH_HEADERS ("name: value"
-- lines). Latencies are in microseconds.
local f = assert(io.open(os.getenv("BENCH_BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
for line in string.gmatch(os.getenv("BENCH_HEADERS") or "", "[^\n]+") do
  local name, value = string.match(line, "^([^:]+):%s*(.*)$")
  if name then wrk.headers[name] = value end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"durationUs":%d,"bytes":%d,"errConnect":%d,"errRead":%d,"errWrite":%d,"errStatus":%d,"errTimeout":%d,"p50":%d,"p90":%d,"p99":%d,"mean":%.1f,"max":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean, latency.max))
end
