#include "round.hpp"

#include "support/mongo_env.hpp"
#include "support/run_dibs.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace dibs::chaos {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {
// SIGINT/SIGTERM: stop at the next step, and take the workers down on the way out (their
// child_process handles kill them), instead of leaving them orphaned.
volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) { g_interrupted = 1; }
}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

void stop_if_interrupted() {
  if (g_interrupted) throw std::runtime_error("interrupted");
}

void round_base::start_api() {
  auto so = stub::stub_options::loopback(20ms);
  so.threads = 2;
  so.error_rate = 0.08;
  so.garbage_rate = 0.04;
  so.timeout_rate = 0.01;
  so.slow_rate = 0.02;  // right answers after twice the lease: the lease keeper must hold them
  so.slow_latency = 2'000ms;
  so.rate_limit = 400;  // 429 bursts with ip-api's headers
  so.rate_window = 250ms;
  so.seed = rng_();
  so.poison_rate = s_.poison_rate;
  so.poison_seed = poison_seed_ = rng_();
  so.idle_close = std::chrono::milliseconds(s_.idle_close_ms);  // like Node's keepAliveTimeout, short
  api_ = std::make_unique<stub::ipapi_stub>(so);
  api_->start();
}

void round_base::stop_api() {
  const auto f = api_->faults();
  t_.faults["API 500"] += f.errors;
  t_.faults["API garbage"] += f.garbage;
  t_.faults["API timeout"] += f.timeouts;
  t_.faults["API slow answer"] += f.slow;
  t_.faults["API 429"] += api_->rate_limited();
  t_.faults["API poison answer"] += f.poisoned;
  t_.faults["API idle keep-alive closed"] += f.idle_closes;
  api_->stop();
}

void round_base::run_workers(bool can_restart_db) {
  std::vector<std::string> args{test::dibs_binary(), "enrich"};  // DIBS_BIN: a copy, while you rebuild
  const auto store = store_args();
  args.insert(args.end(), store.begin(), store.end());
  const std::vector<std::string> rest{
      "--url", api_->base_url() + "/json/{originatingIp}", "--concurrency", "20", "--claim-batch", "10", "--lease", lease(),
      "--grace", "0s", "--max-attempts", std::to_string(s_.max_attempts), "--request-timeout", "4s", "--backoff-base", "20ms",
      "--backoff-max", "200ms", "--shutdown-timeout", "1s", "--no-progress", "--log-level", "debug",
      // Workers restarted into the faults must run, not stop at a pre-flight that met one.
      "--no-preflight",
      // The checker expects ip-api's "no data" answers as failures with their reason (one more
      // write path under the faults: the fenced failure).
      "--no-data-fails"};
  args.insert(args.end(), rest.begin(), rest.end());
  workers_ = std::make_unique<worker_pool>(
      t_, round_, s_.logs, [this, command = worker_command(args)](std::size_t i) { return command_of_worker(i, command); },
      static_cast<std::size_t>(s_.workers));
  for (std::size_t i = 0; i < workers_->size(); ++i) workers_->start(i);

  const auto end = steady::now() + std::chrono::seconds(s_.seconds);
  bool restarted_db = false;
  while (steady::now() < end && workers_->any_running()) {
    stop_if_interrupted();
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 300)(rng_)));
    const auto w = std::uniform_int_distribution<std::size_t>(0, workers_->size() - 1)(rng_);
    const int kind = std::uniform_int_distribution<int>(0, 12)(rng_);
    switch (kind) {
      case 0: case 1: case 2:  // kill -9, then a new worker in its place
        if (workers_->running(w)) {
          workers_->kill(w);
          ++t_.faults["kill -9"];
        }
        workers_->start(w);
        break;
      case 3: case 4:  // frozen past its lease: it wakes up holding leases others took over
        if (!workers_->running(w)) break;
        workers_->freeze(w, true);
        std::this_thread::sleep_for(1'500ms);
        workers_->freeze(w, false);
        ++t_.faults["freeze past the lease"];
        break;
      case 5:
        if (can_restart_db && s_.db_restart && !restarted_db) restarted_db = restart_server();
        break;
      case 6:  // the network to the database stalls past the lease: renewals and writes wait
        if (!proxy_) break;
        proxy_->stall(1'200ms);
        std::this_thread::sleep_for(1'200ms);
        ++t_.faults["database link stalled past the lease"];
        break;
      case 7:
        if (!proxy_) break;
        proxy_->reset_all();
        ++t_.faults["database connections reset"];
        break;
      case 8:
        if (!proxy_) break;
        proxy_->refuse(3);
        ++t_.faults["database connections refused (3)"];
        break;
      case 9: case 10:
        store_fault(kind - 9);
        break;
      default:
        break;  // let it run
    }
  }
  // A round whose point is the restart (a failover) has it, drawn or not, while the workers still run.
  if (restart_always() && can_restart_db && s_.db_restart && !restarted_db && workers_->any_running()) restart_server();
  end_store_faults();
  // The faults stop; every worker runs until the store is drained (bounded: "the run ends").
  // A refusal still pending at the proxy would meet every replacement at its start; a worker
  // that still could not reach the store (a restarted server not yet up) is started again.
  if (proxy_) proxy_->calm();
  workers_->restart_ended();
  const auto deadline = steady::now() + 240s;
  while (steady::now() < deadline) {
    stop_if_interrupted();
    workers_->restart_startup_faults();
    if (!workers_->any_running()) break;
    std::this_thread::sleep_for(50ms);
  }
  if (workers_->any_running()) report_stuck();
  workers_->finish_all();
}

// What a round that does not drain leaves to look at: the open items, which process holds each
// end of every connection, and the end of each worker's log.
void round_base::report_stuck() {
  std::printf("chaos: round %d did not drain; open items, connections and the workers' last log lines follow\n", round_);
  try {
    print_open_items();
  } catch (const std::exception& e) {
    std::printf("chaos: (the store could not be read: %s)\n", e.what());
  }
  std::printf("chaos: TCP connections (this process is %d):\n", static_cast<int>(::getpid()));
  std::fflush(stdout);
  if (std::system("ss -tnpH state established 2>/dev/null | grep -E 'dibs' || true") != 0) std::printf("(ss failed)\n");
  for (std::size_t i = 0; i < workers_->size(); ++i) {
    if (std::getenv("DIBS_CHAOS_STACKS") && workers_->running(i)) {
      std::printf("chaos: ---- worker %zu (pid %d) threads:\n", i, workers_->pid(i));
      std::fflush(stdout);
      const auto gdb = "gdb -q -batch -p " + std::to_string(workers_->pid(i)) +
                       " -ex 'thread apply all bt 12' 2>/dev/null | grep -E '^(Thread|#)'";
      if (std::system(gdb.c_str()) != 0) std::printf("(gdb failed)\n");
    }
    std::printf("chaos: ---- %s (pid %d), last lines:\n", workers_->log_path(i).c_str(), workers_->pid(i));
    std::fflush(stdout);
    const auto cmd = "tail -n 25 " + test::shell_quote(workers_->log_path(i));
    if (std::system(cmd.c_str()) != 0) std::printf("(no log)\n");
  }
  std::fflush(stdout);
}

}  // namespace dibs::chaos
