// The controls' key as an operator gives it to the real dibs program (--control-key-file, a file
// only its owner reads, or DIBS_CONTROL_KEY): a program's POST without it is refused with 401,
// with it taken; the dashboard page served to this host still carries its token and its buttons
// still work (tests/browser/test_dashboard.py clicks them in a real browser).
#include "support/dibs_controls.hpp"
#include "support/raw_http.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>

using namespace dibs;
using test::raw_http;
namespace fs = std::filesystem;

namespace {

const std::string cli_key = "cli-control-key-0123456789abcdef";

using test::controls_paused;

// The token the page served to this host carries (data-token="..."), "" when none.
std::string page_token(std::uint16_t port) {
  const auto page = raw_http(port, "GET", "/");
  std::smatch m;
  static const std::regex token(R"(data-token="([0-9a-f]*)\")");
  return std::regex_search(page.body, m, token) ? m[1].str() : std::string("(no data-token)");
}

// A file holding `text` with `mode`, removed on exit.
struct key_file {
  std::string path;
  key_file(const std::string& text, fs::perms mode) {
    path = (fs::temp_directory_path() / ("dibs-control-key-" + std::to_string(::getpid()))).string();
    std::ofstream(path) << text << "\n";
    fs::permissions(path, mode);
  }
  ~key_file() { fs::remove(path); }
};

}  // namespace

TEST_CASE("control key: a program's POST without the key is refused with 401, the page on this host still works",
          "[cli][controls][control-key]") {
  test::dibs_controls d({"DIBS_CONTROL_KEY=" + cli_key});
  const auto port = d.port();
  const std::string own = "http://127.0.0.1:" + std::to_string(port);
  // curl as it was documented before keys, and curl with another key: 401, nothing changes.
  auto r = raw_http(port, "POST", "/pause", {{"X-Dibs-Control", "1"}});
  CHECK(r.status == 401);
  CHECK_THAT(r.head, Catch::Contains("WWW-Authenticate: Bearer"));
  CHECK_THAT(r.body, Catch::Contains("Authorization: Bearer"));
  CHECK(raw_http(port, "POST", "/concurrency", {{"Authorization", "Bearer wrong-key-0123456789"}}, "{\"concurrency\":1000000}")
            .status == 401);
  CHECK(raw_http(port, "POST", "/pause").status == 401);
  CHECK_FALSE(controls_paused(port));
  // With the key: taken.
  r = raw_http(port, "POST", "/pause", {{"Authorization", "Bearer " + cli_key}});
  CHECK(r.status == 200);
  CHECK(controls_paused(port));
  // The page served to this host carries its token (never the key), and its POSTs are taken.
  const auto token = page_token(port);
  CHECK(token.size() == 32);
  CHECK(raw_http(port, "GET", "/").body.find(cli_key) == std::string::npos);
  r = raw_http(port, "POST", "/resume", {{"Origin", own}, {"X-Dibs-Token", token}, {"Content-Type", "application/json"}}, "{}");
  CHECK(r.status == 200);
  CHECK_FALSE(controls_paused(port));
  // The key is not in the log either.
  CHECK(d.log().find(cli_key) == std::string::npos);
}

TEST_CASE("control key: without one, no program's POST is taken, and the log and the 401 say how to give one",
          "[cli][controls][control-key]") {
  test::dibs_controls d;
  const auto port = d.port();
  const auto r = raw_http(port, "POST", "/pause", {{"X-Dibs-Control", "1"}});
  CHECK(r.status == 401);
  CHECK_THAT(r.body, Catch::Contains("--control-key-file"));
  CHECK_FALSE(controls_paused(port));
  CHECK_THAT(d.log(), Catch::Contains("--control-key-file"));
  CHECK(page_token(port).size() == 32);  // the dashboard's buttons still work from this host
}

TEST_CASE("control key: --control-key-file is read only when no other user can read it", "[cli][controls][control-key]") {
  {
    key_file open_file(cli_key, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
    const auto [rc, out] = test::run_dibs({"demo", "--docs", "10", "--no-progress", "--metrics-port", "0",
                                           "--control-key-file", open_file.path});
    INFO(out);
    CHECK(rc == 2);
    CHECK_THAT(out, Catch::Contains("chmod 600"));
    CHECK(out.find(cli_key) == std::string::npos);
  }
  {
    key_file short_key("short", fs::perms::owner_read | fs::perms::owner_write);
    const auto [rc, out] = test::run_dibs({"demo", "--docs", "10", "--no-progress", "--metrics-port", "0",
                                           "--control-key-file", short_key.path});
    INFO(out);
    CHECK(rc == 2);
    CHECK_THAT(out, Catch::Contains("shorter than 16"));
  }
  key_file private_file(cli_key, fs::perms::owner_read | fs::perms::owner_write);
  test::dibs_controls d({}, {"--control-key-file", private_file.path});
  CHECK(raw_http(d.port(), "POST", "/pause", {{"Authorization", "Bearer " + cli_key}}).status == 200);
  CHECK(controls_paused(d.port()));
}
