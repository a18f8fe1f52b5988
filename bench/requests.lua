-- wrk request generator: spreads requests over the benchmark brands (bench/seed.py), so the
-- per-brand rate limit (100 per minute) is never what is measured.
-- Set by bench/throughput.sh: BENCH_BRANDS, BENCH_KIND (get | list | start | analytics).
local brands = tonumber(os.getenv("BENCH_BRANDS"))
local kind = os.getenv("BENCH_KIND")
local counter = 0

function setup(thread)
  thread:set("offset", math.random(0, brands - 1))
end

function request()
  counter = counter + 1
  local i = (offset + counter * 7919) % brands
  local headers = { ["Authorization"] = string.format("Bearer svc_test_bench%027d", i) }
  if kind == "get" then
    return wrk.format("GET", string.format("/api/v1/streams/00000000-0000-4000-8000-%012d", i), headers)
  elseif kind == "list" then
    return wrk.format("GET", "/api/v1/streams?limit=20", headers)
  elseif kind == "analytics" then
    return wrk.format("GET", "/api/v1/analytics?period=30d", headers)
  else
    headers["Content-Type"] = "application/json"
    return wrk.format("POST", "/api/v1/streams", headers,
      '{"creator_id":"avt_ava000000001","product_name":"Glow Serum","platform":"tiktok"}')
  end
end

function done(summary, latency, requests)
  io.write(string.format("rps=%.0f p50_ms=%.3f p99_ms=%.3f non2xx_or_errors=%d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
