// The dashboard: GET / on the control port. One self-contained page (HTML, CSS and a little
// JavaScript, all served from the binary, nothing fetched from anywhere else) that shows the
// run live by polling GET /status, /history and /workers, and drives the POST controls.
// The counts are written into the HTML by the server, so the page shows them without
// JavaScript too (then it reloads itself every few seconds). The page carries the process's
// control token, which its POSTs send back (control_access.hpp says why), when it is served to a
// peer that may POST; without it, the page is read-only and says so.
// Sections whose endpoint answers 404 or whose field /status lacks show "not available": the
// page works against any dibs that has the controls.
#pragma once

#include <dibs/run_summary.hpp>
#include <dibs/store.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dibs {
class engine;
}

namespace dibs::http {

// What the page shows before its script runs.
struct dashboard_counts {
  run_summary run;  // engine::summary(): completed, no_data, failed, lost_leases, retries
  std::int64_t in_flight = 0;
  bool paused = false, finished = false;
  std::optional<store_stats> store;  // absent when the store could not say
};

dashboard_counts dashboard_counts_of(const engine& e, const std::optional<store_stats>& store);

// The whole page. `token`: the control token (hex digits), embedded for the page's POSTs; empty:
// a read-only page.
std::string dashboard_html(const dashboard_counts& counts, std::string_view token);

// The page's static parts, files of adapters/control/dashboard/ (dashboard.css, panels.html,
// dashboard.js) that the build embeds (cmake/embed_assets.cmake): edit them as the web files they are.
extern const std::string_view dashboard_style;
extern const std::string_view dashboard_panels;
extern const std::string_view dashboard_script;

}  // namespace dibs::http
