// A chaos round against a three-node MariaDB Galera cluster (tests/servers/galera_ctl.sh): the
// MariaDB round (mysql_round: its table, audit trigger and checker), with each worker given every
// node in the multi-host URI, its own node first (worker i on node i mod 3 + 1), no proxy (one
// proxy would be one endpoint: chaos_main turns it off for this store), and the
// cluster's own faults: a node killed with SIGKILL (one at a time: the other two keep the
// quorum) and rejoined by IST once it has been down 3 s; a node still down when the faults stop
// rejoins before the drain, so that the checker reads a whole cluster. A round whose draw brought
// no kill has one at the start of its drain.
#pragma once

#include "mysql_round.hpp"

#include <chrono>

namespace dibs::chaos {

class galera_round : public mysql_round {
 public:
  using mysql_round::mysql_round;

 private:
  std::string direct_uri_for(const std::string& table) const override;
  std::vector<std::string> command_of_worker(std::size_t i, const std::vector<std::string>& command) const override;
  bool restart_server() override { return false; }  // the cluster's faults are the nodes'
  void store_fault(int which) override;
  void end_store_faults() override;

  int down_ = 0;  // the node killed and not yet rejoined (0: none)
  std::chrono::steady_clock::time_point killed_at_;
  bool killed_any_ = false;
};

}  // namespace dibs::chaos
