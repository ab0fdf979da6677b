// `dibs release --worker NAME`: an operator who knows a worker is dead frees its leases at once
// instead of waiting out the lease. Every lease whose holder is NAME or NAME-<shard> is cleared,
// as an expiry would (the attempt stays counted); should the worker be alive after all, its later
// write matches no lease and is discarded as lost, never doubled. Asks first on a terminal;
// elsewhere it needs --yes. A worker whose leases are still renewed is named LIVE in the question,
// and in a warning with --yes.
#include "commands.hpp"
#include "exit_codes.hpp"
#include "store_flags.hpp"

#include "engine/src/worker_id.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

namespace dibs::cli {

namespace {
struct worker_leases {
  std::uint64_t leased = 0;
  double latest_until_s = 0;  // the latest until among its shards' leases (> 0: still renewed)
  bool renewing = false;
};

worker_leases leases_of(admin_store& st, const std::string& name) {
  worker_leases w;
  for (const auto& h : st.lease_holders()) {
    if (!worker_owns(h.by, name)) continue;
    w.leased += h.leased;
    if (leases_renewed(h)) w.renewing = true;
    w.latest_until_s = std::max(w.latest_until_s, h.latest_until_s);
  }
  return w;
}

// A worker whose latest lease still runs renewed it lately: a dead one's leases all run out
// within one lease. Releasing a live worker costs its work under those leases (its writes are
// discarded as lost and the items done again), so the operator is told, whatever --yes says.
std::string live_warning(const std::string& name, const worker_leases& w) {
  if (!w.renewing) return {};
  return "worker " + name + " looks LIVE: its latest lease runs " + std::to_string(static_cast<long long>(w.latest_until_s)) +
         " s more, so it renewed or took leases lately (a dead worker's all run out within one lease); if it still "
         "runs, the work under these leases is lost and done again";
}

bool confirmed(const std::string& question) {
  std::fprintf(stderr, "%s [y/N] ", question.c_str());
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES";
}
}  // namespace

command add_release_command(CLI::App& app) {
  auto* sub = app.add_subcommand("release", "Free every lease of a worker (a dead host) at once, fenced by its id");
  struct flags {
    store_flags store;
    std::string worker;
    bool yes = false;
  };
  auto f = std::make_shared<flags>();
  f->store.add_to(*sub, true);
  sub->add_option("--worker", f->worker,
                  "the worker id (--worker-id of its run, default host-pid; dibs status lists them): its leases and "
                  "its shards' (NAME-0, NAME-1, ...)")
      ->type_name("NAME")
      ->required();
  sub->add_flag("--yes", f->yes, "don't ask (needed when stdin is not a terminal)");
  sub->footer(
      "Examples:\n"
      "  dibs release --store 'mysql://app@127.0.0.1:3306/geo?table=jobs' --worker enrich-7d9f-x2 --yes\n"
      "  dibs status --store 'postgresql://app@db/geo?table=jobs'   (the lease holders, and how stale)\n"
      "A worker that is alive after all keeps running: its writes for the released items are discarded\n"
      "as lost leases, and another worker does those items once.");
  return [f] {
    if (const auto problem = worker_id_problem(f->worker); !problem.empty())
      throw std::invalid_argument("--worker '" + f->worker + "' " + problem);
    f->store.uri_to_connect();  // a flag that can't apply (--password-file on a file) is refused first, alone
    if (f->store.file_mode())
      throw std::invalid_argument(
          "--store jsonl: a file's leases live only in the process that runs it, and end with it; "
          "a running one frees them with POST /release on its --metrics-port");
    const bool ask = !f->yes;
    if (ask && !::isatty(STDIN_FILENO))
      throw std::invalid_argument("dibs release asks before it frees leases, and stdin is not a terminal: add --yes");
    auto st = f->store.open(false);
    worker_leases held;
    try {
      held = leases_of(*st, f->worker);
    } catch (const std::exception&) {
      if (ask) throw;  // asking needs the count; with --yes the release goes on without the warning
    }
    const auto warning = live_warning(f->worker, held);
    if (!ask && !warning.empty()) std::fprintf(stderr, "dibs: warning: %s\n", warning.c_str());
    if (ask) {
      if (held.leased == 0) {
        std::printf("release: worker %s holds no lease in %s\n", f->worker.c_str(), st->describe().c_str());
        return exit_code::ok;
      }
      if (!confirmed((warning.empty() ? "" : warning + ".\n") + "release " + std::to_string(held.leased) +
                     " lease(s) of worker " + f->worker + " in " + st->describe() + "? Only if that worker is dead or stopped:")) {
        std::printf("release: nothing released\n");
        return exit_code::items_failed;
      }
    }
    const auto n = st->release_worker(f->worker);
    std::printf("release: %llu lease%s of worker %s released in %s (claimable now)\n", (unsigned long long)n,
                n == 1 ? "" : "s", f->worker.c_str(), st->describe().c_str());
    return exit_code::ok;
  };
}

}  // namespace dibs::cli
