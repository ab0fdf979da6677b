#include "worker_pool.hpp"

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace dibs::chaos {

worker_pool::worker_pool(tally& t, int round, std::string logs_dir, command_of args_of, std::size_t n)
    : t_(t), round_(round), logs_(std::move(logs_dir)), args_of_(std::move(args_of)), workers_(n), log_offset_(n, 0) {}

std::string worker_pool::log_path(std::size_t i) const {
  return logs_ + "/round-" + std::to_string(round_) + "-worker-" + std::to_string(i) + ".log";
}

pid_t worker_pool::pid(std::size_t i) const { return workers_[i] ? workers_[i]->pid() : -1; }

void worker_pool::start(std::size_t i) {
  if (workers_[i]) collect(i, false);
  std::error_code ec;
  const auto size = std::filesystem::file_size(log_path(i), ec);
  log_offset_[i] = ec ? 0 : size;
  workers_[i] = std::make_unique<test::child_process>(args_of_(i), false, log_path(i));
}

bool worker_pool::running(std::size_t i) { return workers_[i] && workers_[i]->running(); }

bool worker_pool::any_running() {
  for (std::size_t i = 0; i < workers_.size(); ++i)
    if (running(i)) return true;
  return false;
}

void worker_pool::kill(std::size_t i) {
  if (!running(i)) return;
  workers_[i]->signal(SIGKILL);
  collect(i, true);
}

void worker_pool::freeze(std::size_t i, bool frozen) {
  if (workers_[i]) workers_[i]->signal(frozen ? SIGSTOP : SIGCONT);
}

void worker_pool::restart_ended() {
  for (std::size_t i = 0; i < workers_.size(); ++i)
    if (!running(i)) start(i);
}

bool worker_pool::restart_startup_faults() {
  bool restarted = false;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (!workers_[i] || running(i)) continue;
    if (collect(i, false)) {
      start(i);
      restarted = true;
    }
  }
  return restarted;
}

void worker_pool::finish_all() {
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (!workers_[i]) continue;
    const bool late = running(i);
    if (late) {
      report_violation(t_, round_, "undrained", "(a worker, pid " + std::to_string(workers_[i]->pid()) +
                                                    ") still running after the drain deadline", 1);
      workers_[i]->signal(SIGKILL);
    }
    collect(i, late);
  }
}

bool worker_pool::collect(std::size_t i, bool killed) {
  if (!workers_[i]) return false;
  const auto pid = workers_[i]->pid();
  std::string out;
  const int code = workers_[i]->finish(out);
  workers_[i].reset();
  t_.lost_leases += summary_field(out, "lost_leases");
  // Killed ones die by SIGKILL; one that ended by itself must have succeeded: 0, or 1 when some of
  // the items it ran failed (poison answers do; the checker judges each item on its own).
  if (!killed && code != 0 && code != 1) {
    std::ifstream log(log_path(i));
    log.seekg(static_cast<std::streamoff>(log_offset_[i]));
    std::ostringstream said;
    said << log.rdbuf();
    // It never started working: it ended before its engine claimed anything (a worker logs
    // "leases taken as" once its engine starts), the store out of reach -- at its first
    // connection, or in the few reads of its start-up (its rights, the pre-flight's sample, the
    // counts) when a restart came right then -- and it said why: "cannot connect to" MariaDB or
    // PostgreSQL, "cannot reach MongoDB" once the store's own retries within its server
    // selection timeout ran out. Other lines may be there (the MongoDB driver's own start-up
    // warnings), so "nothing but the error" was too strict a test.
    const bool started = said.str().find(": leases taken as ") != std::string::npos;
    const bool unreachable = said.str().find("dibs: error: cannot connect to") != std::string::npos ||
                             said.str().find("dibs: error: cannot reach MongoDB") != std::string::npos;
    if (code == 2 && !started && unreachable) {
      ++t_.faults["(workers that could not reach the store at startup, replaced)"];
      return true;
    }
    report_violation(t_, round_, "worker-exit",
                     "(a worker, pid " + std::to_string(pid) + ") exited by itself with status " + std::to_string(code) +
                         " (see " + log_path(i) + ")", 1);
  }
  return false;
}

}  // namespace dibs::chaos
