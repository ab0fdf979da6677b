// The library names its settings, the CLI its flags: the mapping between them.
#include "apps/dibs/flag_names.hpp"

#include <dibs/engine_config.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("a library setting is told with the CLI flag that sets it", "[cli]") {
  CHECK(cli::flag_for("lease") == "--lease");
  CHECK(cli::flag_for("claim_batch") == "--claim-batch");
  CHECK(cli::flag_for("max_processing") == "--max-processing");
  CHECK(cli::flag_for("database") == "--db");
  CHECK(cli::flag_for("threads") == "--db-threads");
  CHECK(cli::in_flag_words(setting_error("claim", "'x': expected batch")) == "--claim 'x': expected batch");

  engine_config cfg;
  cfg.lease = std::chrono::milliseconds(5);
  try {
    cfg.validate();
    FAIL("a 5 ms lease was accepted");
  } catch (const setting_error& e) {
    CHECK(std::string(e.what()) == "lease must be at least 10 ms");
    CHECK(cli::in_flag_words(e) == "--lease must be at least 10 ms");
  }
}
