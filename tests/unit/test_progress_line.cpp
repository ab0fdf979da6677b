// The progress line as pure functions (apps/dibs/progress_line.hpp): what it says through a
// tail of retries, a pause and an API outage, and what it drops to fit a narrow terminal.
#include "apps/dibs/progress_line.hpp"

#include <catch2/catch.hpp>

using namespace dibs::cli;
using namespace std::chrono_literals;

namespace {
progress_figures midway() {
  progress_figures f;
  f.total = 10'000;
  f.done = 4'000;
  f.failed = 10;
  f.in_flight = 64;
  f.retries = 12;
  f.retries_waiting = 2;
  f.rate = 1'000;
  return f;
}
}  // namespace

TEST_CASE("the progress line says failed, like the summary, and the ETA from the recent rate", "[progress][unit]") {
  const auto line = progress_line(midway());
  CHECK(line == "done 4000/10000  failed 10  1000 docs/s  ETA 0m06s  in flight 64  retries 12");
  CHECK(line.find("errors") == std::string::npos);
}

TEST_CASE("the ETA is written in minutes and seconds, hours past an hour", "[progress][unit]") {
  CHECK(eta_text(0) == "0m00s");
  CHECK(eta_text(65.4) == "1m05s");
  CHECK(eta_text(3 * 3600 + 125) == "3h02m");
  CHECK(eta_text(-3) == "0m00s");
}

TEST_CASE("when only retries waiting out their backoff are left, the ETA is not 0m00s", "[progress][unit]") {
  auto f = midway();
  f.done = 9'990;
  f.failed = 3;
  f.retries_waiting = 7;  // 10000 - 9993 = 7 left, all of them retries
  const auto line = progress_line(f);
  INFO(line);
  CHECK(line.find("retrying 7") != std::string::npos);
  CHECK(line.find("ETA ?") != std::string::npos);
  CHECK(line.find("0m00s") == std::string::npos);
  // The waiting count is an estimate: never more than what is left.
  f.retries_waiting = 500;
  CHECK(progress_line(f).find("retrying 7") != std::string::npos);
  // Nothing in flight after retries: what is left waits, whatever the estimate says.
  f.retries_waiting = 0;
  f.in_flight = 0;
  CHECK_THAT(progress_line(f), Catch::Contains("retrying 7  ETA ?"));
  // Nothing in flight before any retry (the first claim): no "retrying".
  f.retries = 0;
  CHECK(progress_line(f).find("retrying") == std::string::npos);
}

TEST_CASE("a paused run, an open breaker and a stalled rate say so, with no ETA", "[progress][unit]") {
  auto f = midway();
  f.paused = true;
  CHECK_THAT(progress_line(f), Catch::StartsWith("PAUSED  done 4000/10000") && Catch::Contains("ETA ?"));
  f = midway();
  f.api_down = true;
  f.waiting_for_api = 40;
  CHECK_THAT(progress_line(f), Catch::StartsWith("API DOWN: probing, 40 waiting  done") && Catch::Contains("ETA ?"));
  f = midway();
  f.rate = 0;
  CHECK_THAT(progress_line(f), Catch::Contains("0 docs/s  ETA ?"));
}

TEST_CASE("a narrow terminal drops the least important parts first, and the line never wraps", "[progress][unit]") {
  const auto f = midway();
  const auto full = progress_line(f);
  CHECK(progress_line(f, full.size()) == full);
  CHECK(progress_line(f, full.size() - 1) == "done 4000/10000  failed 10  1000 docs/s  ETA 0m06s  in flight 64");
  CHECK(progress_line(f, 40) == "done 4000/10000  failed 10  ETA 0m06s");
  CHECK(progress_line(f, 27) == "done 4000/10000  failed 10");
  CHECK(progress_line(f, 10) == "done 4000/");
  for (std::size_t w = 1; w < 120; ++w) CHECK(progress_line(f, w).size() <= w);
}

TEST_CASE("with no total there is no ETA and no denominator", "[progress][unit]") {
  auto f = midway();
  f.total = 0;
  CHECK(progress_line(f) == "done 4000  failed 10  1000 docs/s  in flight 64  retries 12");
}

TEST_CASE("the rate is the recent window's, not the whole run's average", "[progress][unit]") {
  rate_window w(10s);
  const std::chrono::steady_clock::time_point t0{};
  CHECK(w.per_second() == 0);
  w.add(t0, 0);
  CHECK(w.per_second() == 0);
  // 100/s for the first 20 s, then nothing for 10 s: the recent rate is 0, the average 66.
  for (int s = 1; s <= 20; ++s) w.add(t0 + std::chrono::seconds(s), 100 * s);
  CHECK(w.per_second() == Approx(100));
  for (int s = 21; s <= 30; ++s) w.add(t0 + std::chrono::seconds(s), 2000);
  CHECK(w.per_second() == Approx(0));
  // Then 50/s: within 10 s the window shows it fully.
  for (int s = 31; s <= 40; ++s) w.add(t0 + std::chrono::seconds(s), 2000 + 50 * (s - 30));
  CHECK(w.per_second() == Approx(50));
}

#include <dibs/log.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

TEST_CASE("a log line is written above the status line, never glued onto it", "[progress][log][unit]") {
  const std::string path = "/tmp/dibs-status-line-" + std::to_string(::getpid());
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  FILE* f = std::fopen(path.c_str(), "w");
  ::dup2(fileno(f), STDERR_FILENO);
  const auto level = dibs::log::current_level();
  dibs::log::set_level(dibs::log::level::warn);
  dibs::log::show_status("done 1/2");
  dibs::log::warn("a warning");
  dibs::log::show_status("done 2/2");
  dibs::log::end_status(true);
  dibs::log::warn("after");
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::fclose(f);
  dibs::log::set_level(level);
  std::ifstream in(path, std::ios::binary);
  std::stringstream got;
  got << in.rdbuf();
  std::remove(path.c_str());
  CHECK(got.str() ==
        "\r\033[Kdone 1/2"                 // drawn
        "\r\033[Kdibs warn: a warning\n"   // erased, the log line, then drawn again below it
        "done 1/2"
        "\r\033[Kdone 2/2"
        "\n"                                // kept at the end
        "dibs warn: after\n");              // no status line any more: plain lines
}
