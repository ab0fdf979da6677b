// The `dibs enrich` worker processes of one round: started with the round's arguments, each
// logging at debug level to its own file; killed ones are expected to die by SIGKILL, and a
// worker that ends by itself must exit 0 (anything else is a violation), but for one that could not
// reach the store at startup (status 2, "cannot connect" or "cannot reach MongoDB", while the
// driver refuses or resets the store's connections or restarts it): it did nothing, it is counted
// and replaced.
#pragma once

#include "chaos_common.hpp"
#include "support/process.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dibs::chaos {

class worker_pool {
 public:
  // `args_of(i)`: worker i's command line (each may be given its own store URI).
  using command_of = std::function<std::vector<std::string>(std::size_t)>;
  worker_pool(tally& t, int round, std::string logs_dir, command_of args_of, std::size_t n);

  std::size_t size() const { return workers_.size(); }
  void start(std::size_t i);                // (collects the one it replaces)
  void kill(std::size_t i);                 // SIGKILL, then collected: its exit is expected
  void freeze(std::size_t i, bool frozen);  // SIGSTOP / SIGCONT
  bool running(std::size_t i);
  bool any_running();
  // Every worker that ended by itself restarted (the drain phase begins).
  void restart_ended();
  // Workers that ended are collected; those that could not reach the store at startup are
  // started again (the drain phase: a round must not end with items open because every
  // replacement met a refused connection). True if one was restarted.
  bool restart_startup_faults();
  // Those still running at the deadline are killed and counted as violations; all collected.
  void finish_all();
  std::string log_path(std::size_t i) const;
  pid_t pid(std::size_t i) const;

 private:
  // True if the worker could not reach the store at startup (counted, not a violation).
  bool collect(std::size_t i, bool killed);
  tally& t_;
  int round_;
  std::string logs_;
  command_of args_of_;
  std::vector<std::unique_ptr<test::child_process>> workers_;
  std::vector<std::uintmax_t> log_offset_;  // where each worker's part of its slot's log begins
};

}  // namespace dibs::chaos
