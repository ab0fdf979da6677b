#include "chaos_common.hpp"

#include <cstdio>

namespace dibs::chaos {

void report_violation(tally& t, int round, const std::string& kind, const std::string& what, std::uint64_t n) {
  if (n == 0) return;
  t.violations[kind] += n;
  std::printf("chaos: round %d: VIOLATION [%s]: %llu row(s) %s\n", round, kind.c_str(), (unsigned long long)n,
              what.c_str());
  std::fflush(stdout);
}

const char* store_name(chaos_store store) {
  switch (store) {
    case chaos_store::mongo: return "MongoDB-wire stand-in";
    case chaos_store::postgres: return "PostgreSQL";
    case chaos_store::galera: return "MariaDB Galera (3 nodes)";
    case chaos_store::postgres_failover: return "PostgreSQL primary and streaming standby (failover)";
    case chaos_store::mariadb: break;
  }
  return "MariaDB";
}

std::optional<double> ejson_number(simdjson::dom::element e) {
  double d = 0;
  if (!e.get_double().get(d)) return d;
  for (const char* k : {"$numberDouble", "$numberInt", "$numberLong"}) {
    std::string_view text;
    if (!e[k].get_string().get(text)) return std::stod(std::string(text));
  }
  return std::nullopt;
}

std::uint64_t summary_field(const std::string& out, const std::string& name) {
  const auto line_at = out.rfind("summary: ");
  if (line_at == std::string::npos) return 0;
  const auto at = out.find(name + "=", line_at);
  return at == std::string::npos ? 0 : std::stoull(out.substr(at + name.size() + 1));
}

}  // namespace dibs::chaos
