// An ip-api-compatible HTTP server for demos, tests and benchmarks, usable in-process or as
// `dibs stub`. `GET /json/{ip}` answers an object shaped like ip-api's, deterministic per IP;
// private and reserved addresses answer {"status":"fail","message":"private range",...}.
//
// Test routes (never part of ip-api) let tests provoke what a real API does on a bad day:
//   /test/status/{code}  that status with a small JSON body
//   /test/garbage        200 with truncated JSON
//   /test/array          200 with a JSON array instead of an object
//   /test/big/{bytes}    200 with a valid JSON object of about that many bytes
//   /test/hang           never answers (until the stub stops)
//   /test/close          closes the connection without answering
//   /test/slow/{ms}/{ip} answers /json/{ip} after that many milliseconds
// With --rate-limit, /json answers follow ip-api's rate limit and its headers.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::stub {

struct stub_options {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0 = an ephemeral port, see port()
  std::chrono::milliseconds latency{0};
  std::size_t threads = 1;
  // ip-api's limit: at most `rate_limit` answers per fixed `rate_window` (0 = none); past it,
  // 429 with X-Rl: 0 and X-Ttl. Within it, answers carry X-Rl (left) and X-Ttl (seconds).
  std::size_t rate_limit = 0;
  std::chrono::milliseconds rate_window{60'000};
  bool record = false;  // keep the time of every /json answer (served_times())
};

// The body ip-api would send for `query` (an IPv4 address, or anything else: "invalid query").
std::string answer_for(std::string_view query);

class ipapi_stub {
 public:
  explicit ipapi_stub(stub_options opts);
  ~ipapi_stub();
  ipapi_stub(const ipapi_stub&) = delete;
  ipapi_stub& operator=(const ipapi_stub&) = delete;

  // Binds and starts serving on background threads. Throws when the port can't be bound.
  void start();
  // Stops serving, closing every connection. Idempotent.
  void stop();
  // Blocks until stop() is called from elsewhere (for `dibs stub`).
  void wait();

  std::uint16_t port() const;
  std::string base_url() const;

  std::uint64_t requests() const { return requests_.load(); }
  std::uint64_t connections() const { return connections_.load(); }
  std::uint64_t rate_limited() const { return rate_limited_.load(); }  // 429s answered
  // When each /json answer was sent, for tests that check the rate the stub saw.
  std::vector<std::chrono::steady_clock::time_point> served_times() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> connections_{0};
  std::atomic<std::uint64_t> rate_limited_{0};
};

}  // namespace dibs::stub
