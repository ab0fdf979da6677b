#include "chaos_report.hpp"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>

namespace dibs::chaos {

namespace {
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string json_map(const std::map<std::string, std::uint64_t>& m) {
  std::string out = "{";
  for (const auto& [k, v] : m) out += (out.size() > 1 ? ", " : "") + json_string(k) + ": " + std::to_string(v);
  return out + "}";
}
}  // namespace

void print_summary(const settings& s, const tally& t) {
  // On MongoDB a finished document keeps no attempt count: takeovers are shown as "-" there.
  const auto takeovers = s.mongo() ? std::string("-") : std::to_string(t.takeovers);
  std::printf("chaos: rounds=%d items=%llu done=%llu failed=%llu poisoned=%llu takeovers=%s lost_leases=%llu "
              "late_commits=%llu violations=%llu\n",
              s.rounds, (unsigned long long)t.items, (unsigned long long)t.done, (unsigned long long)t.failed,
              (unsigned long long)t.poisoned, takeovers.c_str(), (unsigned long long)t.lost_leases,
              (unsigned long long)t.late_commits, (unsigned long long)t.total_violations());
  for (const auto& [kind, n] : t.violations) std::printf("chaos: violations: %s: %llu\n", kind.c_str(), (unsigned long long)n);
  for (const auto& [kind, n] : t.faults) std::printf("chaos: faults: %s: %llu\n", kind.c_str(), (unsigned long long)n);
  if (s.store == chaos_store::mariadb || s.store == chaos_store::galera)
    std::printf("chaos: writes whose transaction start InnoDB did not show (not checked for an expired lease): %llu\n",
                (unsigned long long)t.unknown_trx_start);
  if (t.unchecked_rounds)
    std::printf("chaos: WARNING: %llu round(s) ran without a write log: their writes were NOT checked\n",
                (unsigned long long)t.unchecked_rounds);
  std::fflush(stdout);
}

void write_json_report(const std::string& path, const settings& s, const tally& t) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  char date[32];
  const auto now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  out << "{\"store\": " << json_string(store_name(s.store)) << ", \"date\": " << json_string(date)
      << ", \"command\": " << json_string(s.command) << ", \"seed\": " << s.seed << ", \"rounds\": " << s.rounds
      << ", \"items_per_round\": " << s.items << ", \"workers\": " << s.workers << ", \"fault_seconds\": " << s.seconds
      << ", \"poison_rate\": " << s.poison_rate << ", \"idle_close_ms\": " << s.idle_close_ms << ", \"proxy\": " << (s.proxy ? "true" : "false")
      << ", \"items\": " << t.items << ", \"done\": " << t.done << ", \"failed\": " << t.failed << ", \"poisoned\": " << t.poisoned
      << ", \"takeovers\": " << (s.mongo() ? std::string("null") : std::to_string(t.takeovers))
      << ", \"lost_leases\": " << t.lost_leases << ", \"late_commits\": " << t.late_commits
      << ", \"unknown_trx_start\": " << t.unknown_trx_start << ", \"rounds_without_write_log\": " << t.unchecked_rounds
      << ", \"violations\": " << t.total_violations() << ", \"violations_by_check\": " << json_map(t.violations)
      << ", \"faults\": " << json_map(t.faults) << "}\n";
}

}  // namespace dibs::chaos
