// What a SQL store says when its user lacks a right dibs needs, at start (admin_store::
// check_write_rights) or mid-run (store_denied): one line with the right, the table, the
// server's own words, and the GRANT that gives every right the run needs.
#pragma once

#include <string>
#include <vector>

namespace dibs {

// The rights a run needs on its table: it reads and updates (claims, answers, leases, failures),
// and with on_done delete deletes.
inline std::string rights_needed(bool deletes) { return deletes ? "SELECT, UPDATE, DELETE" : "SELECT, UPDATE"; }

// `right`: SELECT, UPDATE or DELETE ("" when the server did not say: the run's rights are named).
inline std::string rights_refusal(const std::string& right, const std::string& table, const std::string& server_says,
                                  const std::string& grant) {
  const std::string what = right.empty()       ? "do what dibs needs on"
                           : right == "UPDATE" ? "UPDATE"
                                               : right + " from";
  return "the store's user may not " + what + " table " + table + " (" + server_says + "); grant it with: " + grant;
}

// A statement that shows, before a run, whether the store's user has a right the run needs on
// its table: a no-op (LIMIT 0, WHERE FALSE) whose rights the server still checks, column by
// column; the store runs them in a transaction it rolls back.
struct rights_probe {
  std::string right;  // SELECT, UPDATE or DELETE
  std::string sql;
};

// Read (the key, the source) and update (`written`: the target, the lease and failure columns)
// every column a run touches; delete too when `deletes` (on_done delete). `quote` quotes an
// identifier.
template <class Quote>
std::vector<rights_probe> rights_probes(const std::string& table, const std::string& key, const std::string& source,
                                        const std::vector<std::string>& written, bool deletes, Quote quote) {
  std::string columns = quote(key) + ", " + quote(source);
  std::string sets;
  for (const auto& c : written) {
    columns += ", " + quote(c);
    sets += (sets.empty() ? "" : ", ") + quote(c) + " = " + quote(c);
  }
  std::vector<rights_probe> out{{"SELECT", "SELECT " + columns + " FROM " + quote(table) + " LIMIT 0"},
                                {"UPDATE", "UPDATE " + quote(table) + " SET " + sets + " WHERE FALSE"}};
  if (deletes) out.push_back({"DELETE", "DELETE FROM " + quote(table) + " WHERE FALSE"});
  return out;
}

}  // namespace dibs
