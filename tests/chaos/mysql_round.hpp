// A chaos round against one MariaDB table: seeded, audited (mysql_checker), worked by the workers
// through the proxy while the faults fly, then checked.
#pragma once

#include "round.hpp"

#include <dibs/stores/mysql_store.hpp>

namespace dibs::chaos {

class mysql_round : public round_base {
 public:
  using round_base::round_base;
  void run();

 protected:
  // The table's URI as the driver reaches the server (galera_round: every node of the cluster).
  virtual std::string direct_uri_for(const std::string& table) const;
  std::vector<std::string> store_args() const override { return {"--store", uri_}; }
  std::string lease() const override { return "1s"; }
  void print_open_items() override;
  bool restart_server() override;

  std::string table_, direct_uri_;
  std::shared_ptr<mysql::mysql_store> store_;
};

}  // namespace dibs::chaos
