#include "bench_figures.hpp"

#include "engine/src/json_text.hpp"

#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <stdexcept>

namespace dibs::cli {

namespace {
constexpr double smallest = 1e-6;  // the first bucket's upper bound is just above 1 µs
constexpr double per_doubling = 16;

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A latency for the table: µs below 1 ms, ms below 10 s, else s.
std::string shown_latency(double seconds) {
  if (seconds <= 0) return "-";
  if (seconds < 1e-3) return fixed(seconds * 1e6, 0) + " µs";
  if (seconds < 10) return fixed(seconds * 1e3, seconds < 0.1 ? 2 : 0) + " ms";
  return fixed(seconds, 1) + " s";
}

std::vector<std::string> split(const std::string& text, char on) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, on);) out.push_back(part);
  return out;
}
}  // namespace

double latency_record::upper_bound(std::size_t bucket) {
  return smallest * std::exp2(double(bucket + 1) / per_doubling);
}

void latency_record::record(double seconds) {
  std::size_t i = 0;
  if (seconds > smallest) {
    const double at = std::floor(std::log2(seconds / smallest) * per_doubling);
    i = at >= double(buckets - 1) ? buckets - 1 : static_cast<std::size_t>(at);
  }
  counts_[i].fetch_add(1, std::memory_order_relaxed);
}

void latency_record::add(const latency_record& other) {
  for (std::size_t i = 0; i < buckets; ++i)
    counts_[i].fetch_add(other.counts_[i].load(std::memory_order_relaxed), std::memory_order_relaxed);
}

std::uint64_t latency_record::count() const {
  std::uint64_t n = 0;
  for (const auto& c : counts_) n += c.load(std::memory_order_relaxed);
  return n;
}

double latency_record::quantile(double q) const {
  const auto n = count();
  if (n == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * double(n)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets; ++i) {
    seen += counts_[i].load(std::memory_order_relaxed);
    if (seen >= rank && seen > 0) return upper_bound(i);
  }
  return upper_bound(buckets - 1);
}

std::string latency_record::text() const {
  std::string out;
  for (std::size_t i = 0; i < buckets; ++i)
    if (const auto c = counts_[i].load(std::memory_order_relaxed))
      out += (out.empty() ? "" : ",") + std::to_string(i) + ":" + std::to_string(c);
  return out;
}

void latency_record::parse_into(const std::string& text, latency_record& into) {
  for (const auto& pair : split(text, ',')) {
    const auto colon = pair.find(':');
    std::size_t used = 0, used2 = 0;
    if (colon == std::string::npos) throw std::invalid_argument("latency record: '" + pair + "'");
    const auto i = std::stoull(pair.substr(0, colon), &used);
    const auto c = std::stoull(pair.substr(colon + 1), &used2);
    if (used != colon || used2 != pair.size() - colon - 1 || i >= buckets)
      throw std::invalid_argument("latency record: '" + pair + "'");
    into.counts_[i].fetch_add(c, std::memory_order_relaxed);
  }
}

std::optional<double> strategy_figures::statements_per_doc() const {
  if (!statements || docs == 0) return std::nullopt;
  return double(*statements) / double(docs);
}

std::string figures_header(store_kind kind) {
  const std::string what = kind == store_kind::mongodb ? "commands/doc" : "statements/doc";
  return "| strategy | docs | docs/s | " + what +
         " | claim conflicts | claim p50 | claim p99 | write p50 | write p99 |\n"
         "|---|---|---|---|---|---|---|---|---|";
}

std::string figures_row(const strategy_figures& f) {
  const auto per_doc = f.statements_per_doc();
  return "| " + f.strategy + " | " + std::to_string(f.docs) + " | " + fixed(f.docs_per_s(), 0) + " | " +
         (per_doc ? fixed(*per_doc, 3) : std::string("-")) + " | " + std::to_string(f.conflicts) + " | " +
         shown_latency(f.claim_p50) + " | " + shown_latency(f.claim_p99) + " | " + shown_latency(f.write_p50) + " | " +
         shown_latency(f.write_p99) + " |";
}

std::string figures_json(const std::string& store_shown, std::size_t docs, std::size_t processes,
                         const std::string& latency, const std::vector<strategy_figures>& rows) {
  std::string out = "{\"store\":" + json_string(store_shown) + ",\"docs\":" + std::to_string(docs) +
                    ",\"processes\":" + std::to_string(processes) + ",\"latency\":" + json_string(latency) +
                    ",\"strategies\":[";
  bool first = true;
  for (const auto& f : rows) {
    const auto per_doc = f.statements_per_doc();
    out += std::string(first ? "" : ",") + "{\"strategy\":" + json_string(f.strategy) +
           ",\"docs\":" + std::to_string(f.docs) + ",\"failed\":" + std::to_string(f.failed) +
           ",\"seconds\":" + fixed(f.seconds, 6) + ",\"docs_per_s\":" + fixed(f.docs_per_s(), 3) +
           ",\"statements\":" + (f.statements ? std::to_string(*f.statements) : "null") +
           ",\"statements_per_doc\":" + (per_doc ? fixed(*per_doc, 6) : "null") +
           ",\"claim_conflicts\":" + std::to_string(f.conflicts) + ",\"claim_p50_ms\":" + fixed(f.claim_p50 * 1e3, 4) +
           ",\"claim_p99_ms\":" + fixed(f.claim_p99 * 1e3, 4) + ",\"write_p50_ms\":" + fixed(f.write_p50 * 1e3, 4) +
           ",\"write_p99_ms\":" + fixed(f.write_p99 * 1e3, 4) + "}";
    first = false;
  }
  return out + "]}";
}

std::string worker_line(const worker_report& r) {
  return "bench-worker: docs=" + std::to_string(r.docs) + " failed=" + std::to_string(r.failed) +
         " statements=" + (r.counts_statements ? std::to_string(r.statements) : std::string("-")) +
         " conflicts=" + std::to_string(r.conflicts) + " claim=" + r.claim + " write=" + r.write;
}

std::optional<worker_report> parse_worker_line(const std::string& line) {
  const std::string head = "bench-worker: ";
  if (line.rfind(head, 0) != 0) return std::nullopt;
  worker_report r;
  int seen = 0;
  try {
    for (const auto& word : split(line.substr(head.size()), ' ')) {
      const auto eq = word.find('=');
      if (eq == std::string::npos) return std::nullopt;
      const auto key = word.substr(0, eq), value = word.substr(eq + 1);
      if (key == "docs") r.docs = std::stoull(value);
      else if (key == "failed") r.failed = std::stoull(value);
      else if (key == "statements") {
        r.counts_statements = value != "-";
        if (r.counts_statements) r.statements = std::stoull(value);
      } else if (key == "conflicts") r.conflicts = std::stoull(value);
      else if (key == "claim") r.claim = value;
      else if (key == "write") r.write = value;
      else return std::nullopt;
      ++seen;
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (seen != 6) return std::nullopt;
  return r;
}

std::vector<std::string> bench_strategies(store_kind kind, const std::string& text) {
  const std::vector<std::string> all = kind == store_kind::mongodb
                                           ? std::vector<std::string>{"batch", "lock-collection", "update-find", "find-and-modify"}
                                           : std::vector<std::string>{"skip-locked"};
  if (text == "all") return all;
  std::string choices;
  for (const auto& s : all) choices += (choices.empty() ? "" : ", ") + s;
  std::vector<std::string> out;
  for (auto name : split(text, ',')) {
    // SQL stores take batch as the name of their one claim, as --claim does.
    if (kind != store_kind::mongodb && name == "batch") name = "skip-locked";
    bool known = false;
    for (const auto& s : all) known = known || s == name;
    if (!known)
      throw std::invalid_argument("--strategies: '" + name + "' is not a claim strategy of " + to_string(kind) +
                                  " stores (" + choices + ", or all)");
    bool repeated = false;
    for (const auto& s : out) repeated = repeated || s == name;
    if (!repeated) out.push_back(name);
  }
  if (out.empty()) throw std::invalid_argument("--strategies: name one or more of " + choices + ", or all");
  return out;
}

std::string scratch_name() {
  std::random_device rd;
  std::mt19937_64 rng((std::uint64_t(rd()) << 32) ^ rd());
  char buf[32];
  std::snprintf(buf, sizeof buf, "dibs_bench_%012llx", (unsigned long long)(rng() & 0xffffffffffffULL));
  return buf;
}

bool is_scratch_name(const std::string& name) {
  const std::string head = "dibs_bench_";
  if (name.size() != head.size() + 12 || name.rfind(head, 0) != 0) return false;
  for (std::size_t i = head.size(); i < name.size(); ++i) {
    const char c = name[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string named_table(const std::string& uri) {
  const auto q = uri.find('?');
  if (q == std::string::npos) return {};
  for (const auto& pair : split(uri.substr(q + 1), '&')) {
    const auto eq = pair.find('=');
    const auto key = pair.substr(0, eq);
    if (key == "table" || key == "collection") return eq == std::string::npos ? std::string() : pair.substr(eq + 1);
  }
  return {};
}

}  // namespace dibs::cli
