// How far a run is and when it will be done, for the dashboard and GET /status: a pure function
// of the store's counts and the recent completion rate (unit-tested without a server).
#pragma once

#include <dibs/store.hpp>

#include <optional>
#include <string>

namespace dibs::http {

struct run_progress {
  // Of every item the store holds, the share that is finished (done, "no data" included, or
  // failed), 0 to 100; nullopt when the store holds nothing.
  std::optional<double> percent_done;
  // Seconds until the open items (pending or leased) are finished at `recent_per_s`: 0 when none
  // is open, nullopt when some are and nothing finished recently (no rate, no estimate).
  std::optional<double> eta_s;
  double recent_per_s = 0;
};

run_progress progress_of(const store_stats& s, double recent_per_s);

// The members GET /status adds (a leading comma included):
// ,"percent_done":..|null,"eta_s":..|null,"recent_per_s":..
std::string progress_members_json(const run_progress& p);

}  // namespace dibs::http
