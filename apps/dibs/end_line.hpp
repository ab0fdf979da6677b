// enrich's last word about the store, as a pure function (unit-tested): the store's totals and
// this run's own counts side by side, each number saying whose it is. The store's totals include
// items finished by earlier runs or other workers (file mode: lines failed before, and lines
// that are not JSON objects), so they may differ from `summary:` (this process only).
#pragma once

#include <dibs/engine.hpp>
#include <dibs/store.hpp>

#include <cstdint>
#include <string>

namespace dibs::cli {

struct end_line_facts {
  std::string store;        // describe()
  store_stats now;          // the store's counts after the run
  run_summary run;          // what this process did
  bool deletes_done = false;  // --on-done delete: finished rows leave the store
  std::uint64_t claim_conflicts = 0;
};

// "enrich: STORE: store now: D done, F failed, P pending, L leased; this run: C done, X failed;
//  claim conflicts N (...)"; with answer reuse, "; answers reused: R cached, J joined, C API calls
//  (H% hits)" before the claim conflicts.
std::string enrich_end_line(const end_line_facts& f);

}  // namespace dibs::cli
