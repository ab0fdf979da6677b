#include "pg_failover.hpp"

#include "support/process.hpp"
#include "support/server_env.hpp"

#include <stdexcept>
#include <vector>

namespace dibs::chaos {

namespace {
// Started without this process's descriptors (not through system()), like the server restarts.
void pair_ctl(std::vector<std::string> args) {
  args.insert(args.begin(), {"bash", DIBS_POSTGRES_PAIR_CTL});
  args.insert(args.begin() + 3, DIBS_SERVERS_DIR);
  test::child_process p(args, true);
  std::string said;
  if (p.finish(said) != 0) throw std::runtime_error("postgres_pair_ctl.sh " + args[2] + " failed: " + said);
}
}  // namespace

void start_pair() { pair_ctl({"start", "async"}); }
void stop_pair() { pair_ctl({"stop"}); }
std::string pair_uri() { return test::server_uri("DIBS_NO_SUCH_VARIABLE", DIBS_SERVERS_DIR "/postgres_pair_uri"); }

void fail_over() {
  pair_ctl({"kill-primary"});
  pair_ctl({"promote"});
}

}  // namespace dibs::chaos
