// What the HTTP processors count of their own, kept with the engine's figures for the run
// (dibs/extra_figures.hpp) and shown in /metrics: API answers by status class, and how long the
// exchanges took.
#pragma once

#include <dibs/http/origin_limits.hpp>

#include <dibs/extra_figures.hpp>
#include <dibs/histogram.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace dibs::http {

struct http_figures final : figures_source {
  // Answers by status class (index 1-5), and exchanges that brought no answer at all (refused,
  // reset, timed out: index 0).
  std::array<std::atomic<std::uint64_t>, 6> responses{};
  std::atomic<std::uint64_t> throttled{0};  // 429 answers (the API said: too many requests)
  std::atomic<std::uint64_t> refused{0};    // 429 and 503 answers (the API refused for its load or rate)
  // Answers that told every shard to stop sending for a while (X-Rl: 0 with X-Ttl, Retry-After,
  // RateLimit-Remaining: 0): the dashboard shows them beside the 429s.
  std::atomic<std::uint64_t> api_stops{0};
  histogram<12> api_latency_s{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
  // Beside the exchange's time (api_latency_s, which holds them): a new connection's handshake
  // (TCP, and TLS over https), and each call's wait for a connection to write on (the adaptive
  // limit's permit, --max-connections, the pace of new connections; not the handshake). Over TLS
  // with a slow handshake, or against a server closing every connection, these are where the
  // time goes.
  histogram<12> handshake_s{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
  histogram<12> connection_wait_s{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
  // The adaptive limit of each API origin (summed over the shards' clients).
  origin_limits limits;
  // Requests abandoned on a new connection that the server never accepted (its backlog was
  // full), and sent again on another.
  std::atomic<std::uint64_t> dropped_handshakes{0};

  // An LLM API's tokens, as its answers' usage states them (token_meter.hpp), the token limit in
  // force (given or stated by the API; 0: none), and the prices per token (price; 0: none given).
  std::atomic<std::uint64_t> tokens_in{0};
  std::atomic<std::uint64_t> tokens_out{0};
  std::atomic<double> token_limit_per_minute{0};
  std::atomic<double> price_in{0};
  std::atomic<double> price_out{0};
  // What the tokens cost at the prices (dollars, or whatever currency the prices are in).
  double cost() const;
  // A cost as the summary, /status and a dry run write it: six significant digits (0.00150123,
  // 52.5), well within half a percent of usage x price however small the run.
  static std::string cost_text(double cost);
  bool priced() const { return price_in.load(std::memory_order_relaxed) > 0 || price_out.load(std::memory_order_relaxed) > 0; }
  bool metered() const { return tokens_in.load(std::memory_order_relaxed) + tokens_out.load(std::memory_order_relaxed) > 0; }

  // Adds `o`'s counts (answers, refusals, stops, tokens) to these: calls made for the run outside
  // its shards (the pre-flight's). Latencies, handshakes, waits and limits are not carried over.
  void add_counts(const http_figures& o);

  // Every exchange counted, answered or not.
  std::uint64_t exchanges() const;
  // Counts one exchange: `status` 0 when no answer came.
  void count(int status, double seconds);
  // dibs_http_responses_total{class=...}, dibs_api_latency_seconds, the adaptive limits.
  void prometheus(prometheus_writer& w) const override;
};

}  // namespace dibs::http
