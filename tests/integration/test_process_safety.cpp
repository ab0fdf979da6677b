// Process-wide safety of the dibs binary: no core dumps unless asked for (a core dump holds the
// database password and the API key the process had in memory).
#include "support/skip.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
// The soft "Max core file size" of a running process, as the kernel shows it.
std::string core_limit_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Max core file size", 0) == 0) {
      std::istringstream fields(line.substr(std::string("Max core file size").size()));
      std::string soft;
      fields >> soft;
      return soft;
    }
  return "?";
}

// True once `dibs stub` holds a socket: it has started (past main's first lines).
bool listening(pid_t pid) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code lec;
    if (fs::read_symlink(e.path(), lec).string().rfind("socket:", 0) == 0) return true;
  }
  return false;
}

std::string core_limit_of_dibs_stub(const char* core_dumps_env) {
  if (core_dumps_env) ::setenv("DIBS_CORE_DUMPS", core_dumps_env, 1);
  // Under AddressSanitizer (make sanitize) the runtime itself sets the limit to 0 at start
  // (disable_coredump=1 by default): let it keep the limit, so the test sees what dibs does.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string saved_asan = asan ? asan : "";
  ::setenv("ASAN_OPTIONS", (saved_asan.empty() ? "" : saved_asan + ":").append("disable_coredump=0").c_str(), 1);
  dibs::test::child_process stub({dibs::test::dibs_binary(), "stub", "--port", "0"});
  ::unsetenv("DIBS_CORE_DUMPS");
  if (asan) ::setenv("ASAN_OPTIONS", saved_asan.c_str(), 1);
  else ::unsetenv("ASAN_OPTIONS");
  for (int i = 0; i < 2000 && stub.running() && !listening(stub.pid()); ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(listening(stub.pid()));
  const auto limit = core_limit_of(stub.pid());
  stub.signal(SIGTERM);
  std::string out;
  stub.finish(out);
  return limit;
}
}  // namespace

TEST_CASE("dibs turns core dumps off at start, unless DIBS_CORE_DUMPS=1", "[process]") {
  // Children inherit this process's limit: make it allow core dumps, so the test shows what
  // dibs does and not what the environment had.
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_CORE, &saved) == 0);
  rlimit open = saved;
  open.rlim_cur = saved.rlim_max == RLIM_INFINITY ? RLIM_INFINITY : saved.rlim_max;
  if (open.rlim_cur == 0) {
    open.rlim_cur = open.rlim_max = RLIM_INFINITY;  // needs CAP_SYS_RESOURCE
    if (::setrlimit(RLIMIT_CORE, &open) != 0)
      dibs::test::skip("core dumps are off for this process and can't be turned on (no CAP_SYS_RESOURCE): nothing to show");
  } else {
    REQUIRE(::setrlimit(RLIMIT_CORE, &open) == 0);
  }
  const std::string allowed = open.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(open.rlim_cur);

  CHECK(core_limit_of_dibs_stub(nullptr) == "0");
  CHECK(core_limit_of_dibs_stub("0") == "0");
  CHECK(core_limit_of_dibs_stub("1") == allowed);
  ::setrlimit(RLIMIT_CORE, &saved);
}
