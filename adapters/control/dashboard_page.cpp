#include "dashboard_page.hpp"

#include "run_progress.hpp"

#include <dibs/counters.hpp>
#include <dibs/engine.hpp>

#include <cstdio>

namespace dibs::http {

namespace {

// The head; its style, the panels and the script are files of dashboard/, embedded at build time
// (dashboard_page.hpp). The page has no external resource: its CSP (control_server.cpp) allows none.
constexpr std::string_view head = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dibs dashboard</title>
<noscript><meta http-equiv="refresh" content="5"></noscript>
<style>
)HTML";

constexpr std::string_view head_end = "</style>\n</head>\n";

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
  c.run = e.summary();
  c.in_flight = load(f.in_flight);
  c.paused = e.paused();
  c.finished = e.finished();
  c.store = store;
  return c;
}

std::string dashboard_html(const dashboard_counts& c, std::string_view token) {
  std::string out(head);
  out += dashboard_style;
  out += head_end;
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
  const auto& r = c.run;
  out += count_cell("completed", "completed", num(r.completed)) + count_cell("no data", "no_data", num(r.no_data)) +
         count_cell("failed", "failed", num(r.failed)) +
         count_cell("lost leases", "lost_leases", num(r.lost_leases)) + count_cell("retries", "retries", num(r.retries)) +
         count_cell("in flight", "in_flight", std::to_string(c.in_flight)) + count_cell("docs/s", "docs_rate", std::nullopt);
  out += "</dl></section>\n";

  out += dashboard_panels;
  out += "<script>\n";
  out += dashboard_script;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace dibs::http
