// What every part of the chaos driver shares: its settings, the tally of a run, and how a
// violation is reported (each check has a short kind, so the self-test can tell them apart).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace dibs::chaos {

enum class chaos_store { mariadb, mongo, postgres, galera, postgres_failover };  // --store

struct settings {
  int rounds = 1;
  std::uint64_t seed = 0;
  std::size_t items = 2000;
  int workers = 3;
  int seconds = 8;
  bool db_restart = true;
  bool inject = false;  // --inject-violations: break the store on purpose; exit 0 only if each is seen once
  // --store: MariaDB (an audit trigger), the MongoDB-wire server (its write log), or PostgreSQL
  // (an audit trigger in PL/pgSQL).
  chaos_store store = chaos_store::mariadb;
  bool mongo() const { return store == chaos_store::mongo; }
  bool proxy = true;    // --no-proxy: workers reach the store directly
  int max_attempts = 8;
  double poison_rate = 0;  // --poison-rate: share of public addresses answered with poison
  int idle_close_ms = 300;  // --idle-close-ms: the stub closes kept-alive connections idle this long
  std::string claim;       // --claim S: this MongoDB claim strategy in every round (else they rotate)
  std::string logs;        // --logs DIR
  std::string report;      // --report PATH: also write PATH.md and PATH.json
  std::string command;     // the command line, for the report
};

struct tally {
  std::map<std::string, std::uint64_t> faults;      // by kind
  std::map<std::string, std::uint64_t> violations;  // by check
  std::uint64_t items = 0, done = 0, failed = 0, poisoned = 0, takeovers = 0, lost_leases = 0, late_commits = 0;
  std::uint64_t unknown_trx_start = 0;  // MariaDB writes whose transaction start could not be read
  std::uint64_t unchecked_rounds = 0;   // MongoDB rounds without a write log (a real mongod)
  std::uint64_t total_violations() const {
    std::uint64_t n = 0;
    for (const auto& [k, v] : violations) n += v;
    return n;
  }
};

// Prints `chaos: round R: VIOLATION [kind]: N row(s) what` and counts it under `kind`.
void report_violation(tally& t, int round, const std::string& kind, const std::string& what, std::uint64_t n);

// How a report names the store a run went against.
const char* store_name(chaos_store store);

// The kinds the self-test injects, one of each per round (--inject-violations).
inline constexpr const char* injected_kinds[] = {"written-twice", "stale-writer", "lost", "expired-lease", "stale-fail"};

// A number from canonical extended JSON ({"$numberDouble": "1.5"}, ...) or plain JSON.
std::optional<double> ejson_number(simdjson::dom::element e);

// `name=N` from the last `summary:` line of a worker's output (0 when absent).
std::uint64_t summary_field(const std::string& out, const std::string& name);

}  // namespace dibs::chaos
