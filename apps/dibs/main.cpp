// dibs: claim -> fetch -> verified update, from the command line.
#include "cli_app.hpp"

#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {
// A core dump of dibs holds what it had in memory: the database password, the API key, the
// answers. Off unless asked for, to debug a crash: DIBS_CORE_DUMPS=1.
void no_core_dumps_unless_asked() {
  const char* asked = std::getenv("DIBS_CORE_DUMPS");
  if (asked && std::string_view(asked) == "1") return;
  rlimit core{};
  if (::getrlimit(RLIMIT_CORE, &core) != 0) core.rlim_max = 0;
  core.rlim_cur = 0;
  ::setrlimit(RLIMIT_CORE, &core);
}
}  // namespace

int main(int argc, char** argv) {
  no_core_dumps_unless_asked();
  // Past the file size limit (ulimit -f), a write fails with EFBIG, which file mode handles like
  // a full disk (the journal cut back to whole records, the outcomes kept and written later),
  // instead of the signal killing dibs halfway through a record.
  std::signal(SIGXFSZ, SIG_IGN);

  return dibs::cli::run(argc, argv);
}
