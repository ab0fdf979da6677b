// `--rate-scope store` end to end (tests only): several `dibs enrich` processes on one table and
// one stub, and what the stub saw. The MySQL and PostgreSQL tests share these.
#pragma once

#include "support/process.hpp"
#include "support/served_rate.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

namespace dibs::test {

// Runs `processes` `dibs enrich --rate <rate> --rate-scope store` on `uri` at once, each to the
// end (exit 0), and returns what they printed (stdout and stderr).
inline std::vector<std::string> enrich_together(const std::string& uri, const stub::ipapi_stub& api, int processes,
                                                const std::string& rate, std::vector<std::string> extra = {}) {
  std::vector<std::unique_ptr<child_process>> runs;
  for (int i = 0; i < processes; ++i) {
    std::vector<std::string> argv{dibs::test::dibs_binary(), "enrich", "--store", uri, "--url", api.base_url() + "/json/{originatingIp}",
                                  "--rate", rate, "--rate-scope", "store", "--concurrency", "20", "--claim-batch", "5",
                                  "--no-progress"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    runs.push_back(std::make_unique<child_process>(argv, true));
  }
  std::vector<std::string> outs;
  for (auto& r : runs) {
    std::string out;
    const int rc = r->finish(out);
    INFO(out);
    CHECK(rc == 0);
    outs.push_back(out);
  }
  return outs;
}

}  // namespace dibs::test
