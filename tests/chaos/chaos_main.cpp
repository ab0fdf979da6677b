// The chaos driver: K `dibs enrich` worker processes against one store (a MariaDB table, the
// MongoDB-wire stand-in, or a PostgreSQL table) and the stub, while faults are injected at random
// (seeded; the seed is printed so a failure can be replayed): workers killed with SIGKILL and
// restarted, workers frozen
// (SIGSTOP) past their lease and thawed; API errors, garbage, timeouts, 429s, answers slower than
// the lease, poison answers a store refuses (--poison-rate) and kept-alive connections closed when
// idle (--idle-close-ms); a loopback TCP proxy to the store that stalls past the lease, resets
// every connection and refuses new ones; a MariaDB or PostgreSQL restart; on PostgreSQL, worker
// sessions killed by the server (pg_terminate_backend) and a session idle in a transaction that
// holds open rows locked; on a three-node Galera cluster (--store galera), each worker given
// every node with its own first, a node killed with SIGKILL and rejoined by IST.
// postgres-failover: the same PostgreSQL round against a primary and its
// streaming standby (tests/servers/postgres_pair_ctl.sh, a fresh pair each round), the workers
// naming both in libpq's multi-host URI, directly (no proxy: it has one address); the round's
// server restart is a failover instead: the primary SIGKILLed, the standby promoted.
//
// The invariants are read from the store's own record (sql_checker.hpp, mongo_checker.hpp), never
// from the workers' logs; each violation is printed with its check's name.
//
//   dibs_chaos [--store mariadb|galera|mongo|postgres|postgres-failover] [--rounds 1] [--seed S] [--items 2000] [--workers 3]
//              [--seconds 8] [--no-db-restart] [--poison-rate 0] [--idle-close-ms 300]
//              [--claim batch|update-find|find-and-modify|lock-collection]  (MongoDB; they rotate otherwise)
//              [--inject-violations]  (the checker's self-test: exits 0 only if each injected
//                                      violation was reported exactly once, and nothing else)
//              [--no-proxy]           (workers reach the store directly)
//              [--logs DIR]           (the workers' logs, at debug level; a temporary directory otherwise)
//              [--report FILE.json]   (the figures, for tests/chaos/chaos_report.py)
// Exit: 0 clean, 1 violations (or a failed self-test), 2 a usage or setup error.
// A round that does not drain prints the open items, the server's transactions, and the end of
// every worker's log (and, with DIBS_CHAOS_STACKS set, every worker's threads, through gdb).
#include "chaos_common.hpp"
#include "chaos_report.hpp"
#include "galera_round.hpp"
#include "mongo_round.hpp"
#include "mysql_round.hpp"
#include "pg_round.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

using namespace dibs::chaos;

namespace {
// The self-test passes when every injected kind was reported once per round, and nothing else.
bool self_test_passed(const settings& s, const tally& t) {
  bool ok = true;
  for (const char* kind : injected_kinds) {
    const auto it = t.violations.find(kind);
    const auto n = it == t.violations.end() ? 0 : it->second;
    const bool once = n == static_cast<std::uint64_t>(s.rounds);
    std::printf("chaos: self-test: injected %s: reported %llu time(s)%s\n", kind, (unsigned long long)n,
                once ? "" : " -- FAILED: expected once per round");
    ok = ok && once;
  }
  for (const auto& [kind, n] : t.violations) {
    bool injected = false;
    for (const char* k : injected_kinds) injected = injected || kind == k;
    if (!injected) {
      std::printf("chaos: self-test: FAILED: %s reported %llu time(s), never injected\n", kind.c_str(), (unsigned long long)n);
      ok = false;
    }
  }
  std::printf("chaos: self-test %s\n", ok ? "passed: every injected violation reported exactly once" : "FAILED");
  return ok;
}
}  // namespace

int main(int argc, char** argv) {
  settings s;
  s.seed = std::random_device{}();
  install_interrupt_handlers();
  for (int i = 0; i < argc; ++i) s.command += (i ? " " : "") + std::string(argv[i]);
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--rounds") s.rounds = std::stoi(next());
      else if (a == "--seed") s.seed = std::stoull(next());
      else if (a == "--items") s.items = std::stoul(next());
      else if (a == "--workers") s.workers = std::stoi(next());
      else if (a == "--seconds") s.seconds = std::stoi(next());
      else if (a == "--no-db-restart") s.db_restart = false;
      else if (a == "--inject-violations") s.inject = true;
      else if (a == "--store") {
        const auto v = next();
        if (v == "mongo") s.store = chaos_store::mongo;
        else if (v == "postgres" || v == "postgresql") s.store = chaos_store::postgres;
        else if (v == "postgres-failover") s.store = chaos_store::postgres_failover;
        else if (v == "mariadb" || v == "mysql") s.store = chaos_store::mariadb;
        else if (v == "galera") s.store = chaos_store::galera;
        else throw std::invalid_argument("--store: mariadb, galera, mongo, postgres or postgres-failover");
      } else if (a == "--no-proxy") s.proxy = false;
      else if (a == "--logs") s.logs = next();
      else if (a == "--report") s.report = next();
      else if (a == "--claim") s.claim = next();
      else if (a == "--poison-rate") s.poison_rate = std::stod(next());
      else if (a == "--idle-close-ms") s.idle_close_ms = std::stoi(next());
      else throw std::invalid_argument("unknown argument " + a);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dibs_chaos: %s\n", e.what());
    return 2;
  }
  // A cluster's workers reach their own nodes: one proxy would be one endpoint for all of them.
  if (s.store == chaos_store::galera) s.proxy = false;
  if (s.store == chaos_store::postgres_failover) s.proxy = false;  // a multi-host URI: no one address to proxy
  const bool temporary_logs = s.logs.empty();  // removed after a clean run
  if (temporary_logs) {
    char dir[] = "/tmp/dibs-chaos-XXXXXX";
    if (!::mkdtemp(dir)) {
      std::perror("dibs_chaos: mkdtemp");
      return 2;
    }
    s.logs = dir;
  }
  std::printf("chaos: workers' logs in %s\n", s.logs.c_str());
  std::printf("chaos: %s; seed %llu (replay with --seed %llu), %d round(s) of %zu items, %d workers, %d s of faults, "
              "poison rate %g, idle keep-alive closed after %d ms\n",
              store_name(s.store), (unsigned long long)s.seed, (unsigned long long)s.seed, s.rounds,
              s.items, s.workers, s.seconds, s.poison_rate, s.idle_close_ms);
  std::fflush(stdout);
  tally t;
  std::mt19937_64 seeds(s.seed);
  try {
    for (int r = 1; r <= s.rounds; ++r) {
      switch (s.store) {
        case chaos_store::mongo: mongo_round(s, seeds(), t, r).run(); break;
        case chaos_store::postgres:
        case chaos_store::postgres_failover: pg_round(s, seeds(), t, r).run(); break;
        case chaos_store::mariadb: mysql_round(s, seeds(), t, r).run(); break;
        case chaos_store::galera: galera_round(s, seeds(), t, r).run(); break;
      }
      std::printf("chaos: round %d done: %llu violation(s) so far\n", r, (unsigned long long)t.total_violations());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::printf("chaos: error: %s\n", e.what());
    return 2;
  }
  print_summary(s, t);
  if (!s.report.empty()) write_json_report(s.report, s, t);
  const bool ok = s.inject ? self_test_passed(s, t) : t.total_violations() == 0;
  // Kept only when they may explain something (the self-test breaks the store on purpose).
  if (temporary_logs && (t.total_violations() == 0 || s.inject)) std::filesystem::remove_all(s.logs);
  return ok ? 0 : 1;
}
