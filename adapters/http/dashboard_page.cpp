#include "dashboard_page.hpp"

#include "run_progress.hpp"

#include <dibs/counters.hpp>
#include <dibs/engine.hpp>

#include <cstdio>

namespace dibs::http {

namespace {

// The head and the layout. The page has no external resource: its CSP (control_server.cpp)
// allows none.
constexpr std::string_view head = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dibs dashboard</title>
<noscript><meta http-equiv="refresh" content="5"></noscript>
<style>
:root { --fg:#1d2330; --muted:#667085; --line:#d0d5dd; --bg:#f6f7f9; --card:#fff; --ok:#12805c; --warn:#b54708; --bad:#b42318; --blue:#1f5fbf; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg); background:var(--bg); }
header { display:flex; flex-wrap:wrap; align-items:center; gap:12px; padding:12px 20px; background:var(--card); border-bottom:1px solid var(--line); }
h1 { font-size:18px; margin:0; }
h2 { font-size:13px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); margin:0 0 8px; }
main { display:grid; grid-template-columns:repeat(auto-fit, minmax(340px, 1fr)); gap:16px; padding:16px 20px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 14px; min-width:0; }
section.wide { grid-column:1 / -1; }
.badge { padding:2px 10px; border-radius:999px; font-weight:600; background:#e7f6ec; color:var(--ok); }
.badge.paused { background:#fef0c7; color:var(--warn); }
.badge.finished { background:#eaecf0; color:var(--muted); }
.counts { display:grid; grid-template-columns:repeat(auto-fill, minmax(100px, 1fr)); gap:8px; margin:0; }
.counts div { border:1px solid var(--line); border-radius:6px; padding:6px 8px; }
.counts dt { color:var(--muted); font-size:12px; }
.counts dd { margin:0; font-size:20px; font-variant-numeric:tabular-nums; font-weight:600; }
.na { color:var(--muted); font-weight:400 !important; font-size:13px !important; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; padding:4px 6px; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--muted); font-weight:500; font-size:12px; }
td.num { text-align:right; font-variant-numeric:tabular-nums; }
button { font:inherit; padding:4px 12px; border-radius:6px; border:1px solid var(--line); background:#fff; cursor:pointer; }
button:hover { border-color:var(--blue); }
button.primary { background:var(--blue); border-color:var(--blue); color:#fff; }
input { font:inherit; padding:3px 6px; border:1px solid var(--line); border-radius:6px; width:8em; }
.row { display:flex; flex-wrap:wrap; gap:8px; align-items:center; margin:6px 0; }
.kv { display:grid; grid-template-columns:max-content 1fr; gap:4px 14px; margin:0; }
.kv dt { color:var(--muted); }
.kv dd { margin:0; font-variant-numeric:tabular-nums; }
svg { width:100%; height:170px; display:block; }
svg text { font-size:11px; fill:var(--muted); }
.legend span { margin-right:12px; font-size:12px; }
.legend i { display:inline-block; width:10px; height:3px; margin-right:4px; vertical-align:middle; }
#message { min-height:1.4em; margin:0; color:var(--muted); }
#message.error { color:var(--bad); }
.ids { color:var(--muted); font-size:12px; word-break:break-all; }
</style>
</head>
)HTML";

std::string num(std::uint64_t v) { return std::to_string(v); }

// One count; `id` is what the script updates (and what the browser test reads).
std::string count_cell(std::string_view label, std::string_view id, const std::optional<std::string>& value) {
  std::string out = "<div><dt>";
  out += label;
  out += "</dt><dd id=\"";
  out += id;
  out += value ? "\">" + *value : std::string("\" class=\"na\">not available");
  return out + "</dd></div>\n";
}

}  // namespace

dashboard_counts dashboard_counts_of(const engine& e, const std::optional<store_stats>& store) {
  const auto& f = e.figures();
  dashboard_counts c;
  c.claimed = load(f.claimed);
  c.completed = load(f.completed);
  c.failed = load(f.failed);
  c.no_data = load(f.no_data);
  c.lost_leases = load(f.lost_leases);
  c.retries = load(f.retries);
  c.in_flight = load(f.in_flight);
  c.paused = e.paused();
  c.finished = e.finished();
  c.store = store;
  return c;
}

std::string dashboard_html(const dashboard_counts& c, std::string_view token) {
  std::string out(head);
  const char* state = c.finished ? "finished" : c.paused ? "paused" : "running";
  out += "<body data-token=\"";
  out += token;  // hex digits: nothing to escape
  out += "\">\n<header><h1>dibs</h1><span id=\"state\" class=\"badge ";
  out += state;
  out += "\">";
  out += state;
  out += "</span>\n<button id=\"pause\" type=\"button\">Pause</button> <button id=\"resume\" type=\"button\">Resume</button>\n"
         "<span id=\"updated\" class=\"na\"></span></header>\n"
         "<noscript><p style=\"padding:0 20px\">Without JavaScript this page shows the counts when it was loaded "
         "and reloads every 5 seconds; the controls need JavaScript.</p></noscript>\n<main>\n";

  std::optional<std::string> pending, leased, done, store_failed, percent;
  if (c.store) {
    if (const auto share = progress_of(*c.store, 0).percent_done) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f %%", *share);
      percent = buf;
    }
    pending = num(c.store->pending);
    leased = num(c.store->leased_live + c.store->leased_expired);
    done = num(c.store->done);
    store_failed = num(c.store->failed);
  }
  out += "<section><h2>The store</h2><dl class=\"counts\">\n";
  out += count_cell("pending", "pending", pending) + count_cell("leased", "leased", leased) +
         count_cell("done", "done", done) + count_cell("failed", "store_failed", store_failed) +
         count_cell("finished", "percent_done", percent) + count_cell("ETA", "eta", std::nullopt);
  out += "</dl></section>\n";

  out += "<section><h2>This run</h2><dl class=\"counts\">\n";
  out += count_cell("completed", "completed", num(c.completed)) + count_cell("no data", "no_data", num(c.no_data)) +
         count_cell("failed", "failed", num(c.failed)) +
         count_cell("lost leases", "lost_leases", num(c.lost_leases)) + count_cell("retries", "retries", num(c.retries)) +
         count_cell("in flight", "in_flight", std::to_string(c.in_flight)) + count_cell("docs/s", "docs_rate", std::nullopt);
  out += "</dl></section>\n";

  out += R"HTML(<section class="wide"><h2>Throughput and API latency, last minutes</h2>
<div class="legend"><span><i style="background:#1f5fbf"></i>docs/s</span><span><i style="background:#98a2b3"></i>requests/s</span><span><i style="background:#b42318"></i>429/s</span></div>
<svg id="chart_rate" viewBox="0 0 600 170" role="img" aria-label="documents per second"></svg>
<div class="legend"><span><i style="background:#12805c"></i>API latency p50</span><span><i style="background:#b54708"></i>p99</span></div>
<svg id="chart_latency" viewBox="0 0 600 170" role="img" aria-label="API latency"></svg>
<p id="chart_note" class="na"></p>
</section>
<section><h2>The API</h2><dl class="kv">
<dt>requests/s</dt><dd id="requests_rate" class="na">not available</dd>
<dt>--rate</dt><dd id="rate_limit" class="na">not available</dd>
<dt>429 answers</dt><dd id="throttled" class="na">not available</dd>
<dt>told to wait (X-Rl, Retry-After)</dt><dd id="api_stops" class="na">not available</dd>
<dt>circuit breaker</dt><dd id="breaker" class="na">not available</dd>
<dt>answer cache hits</dt><dd id="cache_ratio" class="na">not available</dd>
</dl>
<div class="row"><label for="rate_input">--rate</label><input id="rate_input" placeholder="45/min"> <button id="rate_set" type="button">Set</button> <button id="rate_clear" type="button">No limit</button></div>
</section>
<section><h2>Concurrency</h2><dl class="kv"><dt>ceiling (--concurrency)</dt><dd id="concurrency" class="na">not available</dd>
<dt>the API's limit now</dt><dd id="api_limit" class="na">not available</dd>
<dt>latency now (floor)</dt><dd id="api_latency_now" class="na">not available</dd>
<dt>last lowered because</dt><dd id="api_limit_reason" class="na">not available</dd></dl>
<div class="row"><label for="concurrency_input">set to</label><input id="concurrency_input" type="number" min="1" step="1"> <button id="concurrency_set" type="button">Set</button></div>
</section>
<section class="wide"><h2>Top failure reasons</h2><div id="failures"><p class="na">not available</p></div></section>
<section class="wide"><h2>Workers and what they hold</h2><div id="workers"><p class="na">not available</p></div></section>
</main>
<p id="message" role="status" style="padding:0 20px 16px"></p>
<script>
)HTML";
  out += dashboard_script;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace dibs::http
