// A usage error as a user meets it, in one call: the real dibs run with `args` exits 2, and what
// it prints begins with `says`.
#pragma once

#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace dibs::test {

inline void check_usage_error(const std::vector<std::string>& args, const std::string& says) {
  const auto r = dibs_cli(args);
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::StartsWith(says));
}

}  // namespace dibs::test
