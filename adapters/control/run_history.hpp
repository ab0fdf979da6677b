// The last minutes of a run for the dashboard's charts (GET /history): one sample a second of
// documents/s, requests/s, 429s/s and the API latency (p50, p99) of the calls of that second,
// in a bounded ring, so a page opened late shows a full chart at once.
// A sample is the difference of two readings of the run's cumulative figures; readings are
// taken by the control server's timer. Pure and single-threaded: the server's thread owns it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace dibs::http {

// The run's cumulative figures at one moment.
struct run_reading {
  double t_s = 0;               // seconds on a steady clock
  std::uint64_t outcomes = 0;   // completed + failed
  std::uint64_t requests = 0;   // API exchanges (answered or not)
  std::uint64_t throttled = 0;  // 429 answers
  // The API latency histogram: its upper bounds, and its counts per bucket (not cumulative),
  // with one more for +Inf. Empty when the run's processor keeps no HTTP figures.
  std::vector<double> latency_bounds;
  std::vector<std::uint64_t> latency_counts;
};

struct history_sample {
  double t_s = 0;  // the end of the interval
  double docs_per_s = 0;
  double requests_per_s = 0;
  double throttled_per_s = 0;
  std::optional<double> p50_s, p99_s;  // absent when no call ended in the interval
};

// The q-quantile (0..1) of the observations in `counts` (per bucket, the last one +Inf), by
// linear interpolation inside the bucket it falls in, as Prometheus' histogram_quantile does;
// the +Inf bucket answers the last finite bound. nullopt when there are no observations.
std::optional<double> bucket_quantile(const std::vector<double>& bounds, const std::vector<std::uint64_t>& counts, double q);

class run_history {
 public:
  explicit run_history(std::size_t capacity = 600) : capacity_(capacity) {}

  // Takes a reading; from the second one on, adds the sample of the interval since the last.
  void add(const run_reading& r);
  const std::deque<history_sample>& samples() const { return samples_; }
  // Items finished per second over the last `seconds` samples (fewer when the run is younger):
  // the rate the dashboard's ETA assumes. 0 before the first sample.
  double recent_docs_per_s(std::size_t seconds = 30) const;
  // {"interval_s":1,"samples":[{"t":..,"docs_per_s":..,"requests_per_s":..,"throttled_per_s":..,
  //  "p50_s":..|null,"p99_s":..|null},...]}, oldest first; "t" is seconds before the newest.
  std::string json() const;

 private:
  std::size_t capacity_;
  std::optional<run_reading> last_;
  std::deque<history_sample> samples_;
};

}  // namespace dibs::http
