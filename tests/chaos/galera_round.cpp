#include "galera_round.hpp"

#include "galera/galera_env.hpp"

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

namespace dibs::chaos {

std::string galera_round::direct_uri_for(const std::string& table) const {
  return test::with_table(test::galera_uri_from(1), table);
}

std::vector<std::string> galera_round::command_of_worker(std::size_t i, const std::vector<std::string>& command) const {
  auto out = command;
  for (std::size_t a = 0; a + 1 < out.size(); ++a)
    if (out[a] == "--store") out[a + 1] = test::with_table(test::galera_uri_from(static_cast<int>(i % test::galera_nodes) + 1), table_);
  return out;
}

// Either store fault kills a node when all three are up, and rejoins the one down once it has
// been down 3 s (long enough for the others to evict it, and for its workers to move on).
void galera_round::store_fault(int /*which*/) {
  if (down_ == 0) {
    down_ = std::uniform_int_distribution<int>(1, test::galera_nodes)(rng_);
    test::galera_node("kill", down_);
    std::printf("chaos: round %d: Galera node %d killed\n", round_, down_);
    ++t_.faults["Galera node killed (SIGKILL)"];
    killed_at_ = std::chrono::steady_clock::now();
    killed_any_ = true;
  } else if (std::chrono::steady_clock::now() - killed_at_ >= std::chrono::seconds(3)) {
    test::galera_node("rejoin", down_);
    std::printf("chaos: round %d: Galera node %d rejoined (IST)\n", round_, down_);
    ++t_.faults["Galera node rejoined (IST)"];
    down_ = 0;
  }
  std::fflush(stdout);
}

// Every round has its node kill: one the draw did not bring during the faults comes now, while
// the workers drain, and the node rejoins 3 s later.
void galera_round::end_store_faults() {
  if (!killed_any_) {
    store_fault(0);
    std::this_thread::sleep_for(std::chrono::seconds(3));
  }
  if (down_ == 0) return;
  killed_at_ = {};  // now, however long it has been down
  store_fault(0);
}

}  // namespace dibs::chaos
