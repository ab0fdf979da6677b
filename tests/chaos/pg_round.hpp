// A chaos round against one PostgreSQL table: seeded, audited (pg_checker), worked by the workers
// through the proxy while the faults fly (the shared ones, a server restart, worker sessions
// terminated by the server, a session idle in a transaction holding open rows), then checked.
#pragma once

#include "pg_faults.hpp"
#include "round.hpp"

#include <adapters/postgres/pg_store.hpp>

namespace dibs::chaos {

class pg_round : public round_base {
 public:
  using round_base::round_base;
  void run();

 private:
  // The URI goes in worker_command: each worker's sessions are named after its pid.
  std::vector<std::string> store_args() const override { return {}; }
  std::vector<std::string> worker_command(std::vector<std::string> args) const override;
  std::string lease() const override { return "1s"; }
  void print_open_items() override;
  bool restart_server() override;
  bool restart_always() const override { return s_.store == chaos_store::postgres_failover; }
  void store_fault(int which) override;
  void end_store_faults() override;

  std::string table_, direct_uri_;
  std::shared_ptr<pg::pg_store> store_;
  std::unique_ptr<idle_transaction> idle_;
};

}  // namespace dibs::chaos
