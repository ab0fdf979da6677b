// One chaos round, the part both stores share: the stub and its faults, the TCP proxy, the worker
// processes, and the fault loop (kill -9, freezes past the lease, link stalls, resets, refusals,
// a server restart, the store's own faults), then the drain, bounded. The stores' rounds
// (mysql_round, mongo_round, pg_round) set the store up, break it on purpose for the self-test,
// and check it.
#pragma once

#include "chaos_common.hpp"
#include "tcp_proxy.hpp"
#include "worker_pool.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace dibs::chaos {

void stop_if_interrupted();  // throws once SIGINT/SIGTERM arrived
void install_interrupt_handlers();

class round_base {
 public:
  round_base(const settings& s, std::uint64_t seed, tally& t, int index) : s_(s), rng_(seed), t_(t), round_(index) {}
  virtual ~round_base() = default;

 protected:
  // The stub with the round's faults (and poison, deterministic per address and poison_seed_).
  void start_api();
  void stop_api();  // its faults join the tally
  // Workers run while faults are injected, then until the store is drained (bounded).
  void run_workers(bool can_restart_db);
  virtual std::vector<std::string> store_args() const = 0;
  virtual std::string lease() const = 0;
  virtual void print_open_items() = 0;  // for a round that does not drain
  // A store may wrap each worker's command line (PostgreSQL names the sessions after the process).
  virtual std::vector<std::string> worker_command(std::vector<std::string> args) const { return args; }
  // Worker i's command line (a cluster gives each worker its own node first).
  virtual std::vector<std::string> command_of_worker(std::size_t /*i*/, const std::vector<std::string>& command) const {
    return command;
  }
  // The server restarted, once a round at most (unless --no-db-restart); false where it can't be.
  virtual bool restart_server() { return false; }
  // True: the round restarts its server even when no draw picked it (the failover round).
  virtual bool restart_always() const { return false; }
  // A fault of the store's own (`which`: 0 or 1, each drawn as often as a shared one), and the end
  // of any such fault still under way when the faults stop.
  virtual void store_fault(int /*which*/) {}
  virtual void end_store_faults() {}
  void report_stuck();

  const settings& s_;
  std::mt19937_64 rng_;
  tally& t_;
  int round_;
  std::uint64_t poison_seed_ = 0;
  std::string uri_;  // what the workers use (through the proxy)
  std::unique_ptr<stub::ipapi_stub> api_;
  std::unique_ptr<test::tcp_proxy> proxy_;
  std::unique_ptr<worker_pool> workers_;
};

}  // namespace dibs::chaos
