// What `dibs bench` measures and prints, without a store: a latency record fine enough for p50
// and p99 (the engine's histograms have a dozen buckets: too coarse), one strategy's figures,
// the table row and JSON they become, the line a worker process hands its parent, and which
// strategies --strategies names for a store.
#pragma once

#include <dibs/stores/store_uri.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dibs::cli {

// Latencies in logarithmic buckets, 16 per doubling (a quantile is off by at most ~4.4%), from
// 1 µs up to ~70 minutes. Recorded from any thread (relaxed atomics); merged by adding counts
// (a worker process's record joins its parent's).
class latency_record {
 public:
  static constexpr std::size_t buckets = 16 * 32;
  void record(double seconds);
  void add(const latency_record& other);
  std::uint64_t count() const;
  // The q-quantile (0 < q <= 1) in seconds, as the upper bound of its bucket; 0 when empty.
  double quantile(double q) const;
  // "index:count,index:count" for the non-empty buckets (a worker's line), and back; parse
  // throws std::invalid_argument for text it did not write.
  std::string text() const;
  static void parse_into(const std::string& text, latency_record& into);
  static double upper_bound(std::size_t bucket);

 private:
  std::array<std::atomic<std::uint64_t>, buckets> counts_{};
};

// One strategy's drain, over every process that took part.
struct strategy_figures {
  std::string strategy;
  std::uint64_t docs = 0;       // completed
  std::uint64_t failed = 0;
  double seconds = 0;           // wall time of the drain
  std::optional<std::uint64_t> statements;  // nullopt: the store does not count them
  std::uint64_t conflicts = 0;
  double claim_p50 = 0, claim_p99 = 0, write_p50 = 0, write_p99 = 0;  // seconds

  double docs_per_s() const { return seconds > 0 ? double(docs) / seconds : 0; }
  std::optional<double> statements_per_doc() const;
};

// The table's head ("statements" or "commands" per doc, as the store calls them) and a row.
std::string figures_header(store_kind kind);
std::string figures_row(const strategy_figures& f);
// {"store":..., "docs":N, "processes":K, "latency":"none", "strategies":[{...}, ...]}
std::string figures_json(const std::string& store_shown, std::size_t docs, std::size_t processes,
                         const std::string& latency, const std::vector<strategy_figures>& rows);

// What a worker process prints on stdout when it has drained its share, and its parent reads.
struct worker_report {
  std::uint64_t docs = 0, failed = 0, statements = 0, conflicts = 0;
  bool counts_statements = false;
  std::string claim, write;  // latency_record::text()
};
std::string worker_line(const worker_report& r);
// nullopt for any other line.
std::optional<worker_report> parse_worker_line(const std::string& line);

// The strategies --strategies names for this kind of store, in the order given ("all": every
// one the store has). Throws std::invalid_argument naming --strategies and the store's choices.
std::vector<std::string> bench_strategies(store_kind kind, const std::string& text);

// The scratch names: dibs_bench_ and 12 random lowercase hex digits; whether a name is one.
std::string scratch_name();
bool is_scratch_name(const std::string& name);

// The table (MongoDB: collection) a --store URI names itself (?table=, ?collection=), or "".
std::string named_table(const std::string& uri);

}  // namespace dibs::cli
