// The exit status of a run: what a script reads after `dibs enrich` or `dibs demo`.
#include "apps/dibs/exit_codes.hpp"

#include <catch2/catch.hpp>

#include <csignal>

using dibs::cli::run_end;
using dibs::cli::run_exit_code;

TEST_CASE("a drained run with nothing failed exits 0, with failed items 1", "[cli][exit-code]") {
  CHECK(run_exit_code({0, false, true, 0}) == 0);
  CHECK(run_exit_code({0, false, true, 3}) == 1);
}

TEST_CASE("a signal's stop exits 128 + the signal, before failed items count", "[cli][exit-code]") {
  CHECK(run_exit_code({SIGINT, false, false, 0}) == 130);
  CHECK(run_exit_code({SIGTERM, false, false, 5}) == 143);
  CHECK(run_exit_code({SIGTERM, false, true, 0}) == 143);  // stopped, even if nothing was left
}

TEST_CASE("work left with no signal to explain it is a run cut short (3)", "[cli][exit-code]") {
  CHECK(run_exit_code({0, false, false, 0}) == 3);
}

TEST_CASE("with --follow a signal is the normal end: 0, or 1 when items failed", "[cli][exit-code]") {
  CHECK(run_exit_code({SIGTERM, true, false, 0}) == 0);
  CHECK(run_exit_code({SIGINT, true, false, 2}) == 1);
}
