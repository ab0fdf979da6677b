// The demo's API: the ip-api stand-in that `dibs demo` calls in-process and `dibs stub` serves
// alone, and the kind API that the tests, the bench and the chaos driver call (it answers
// deterministically, and misbehaves on request). Not part of the engine: a driving-side
// companion of the CLI, installed with the libraries (dibs::stub) for users' own demos.
//
// An ip-api-compatible HTTP server for demos, tests and benchmarks, usable in-process or as
// `dibs stub`. `GET /json/{ip}` answers an object shaped like ip-api's, deterministic per IP;
// private and reserved addresses answer {"status":"fail","message":"private range",...}.
//
// `POST /batch` takes a JSON array of up to 100 queries (strings, or objects with "query") and
// answers an array of those objects in the same order; more than 100 answer 422, a body that
// is not such an array 400 (ip-api's rules).
//
// Fault knobs (drawn per /json or /batch request from a seeded generator, after the rate limit):
// errors (500), timeouts (never answers), garbage (200 with truncated JSON), big bodies, resets
// (the head and part of the body, then the connection closes). With TLS files it serves HTTPS.
// Poison answers (ipapi_poison.cpp) replace the answer of a fixed share of addresses, chosen by a
// hash of the address and `poison_seed`, so a checker knows which: valid JSON a store may refuse.
// `idle_close` ends a kept-alive connection idle that long, as Node's keepAliveTimeout does.
//
// Test routes (never part of ip-api) let tests provoke what a real API does on a bad day:
//   /test/status/{code}  that status with a small JSON body
//   /test/garbage        200 with truncated JSON
//   /test/array          200 with a JSON array instead of an object
//   /test/big/{bytes}    200 with a valid JSON object of about that many bytes
//   /test/hang           never answers (until the stub stops)
//   /test/close          closes the connection without answering
//   /test/slow/{ms}/{ip} answers /json/{ip} after that many milliseconds
// With rate_limit, /json answers follow ip-api's rate limit and its headers.
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
  bool record = false;  // keep the time of every /json and /batch answer (served_times())
  double error_rate = 0;
  double timeout_rate = 0;
  double garbage_rate = 0;
  double big_rate = 0;
  double reset_rate = 0;
  double slow_rate = 0;  // answered correctly, but only after `slow_latency` (longer than a lease, say)
  std::chrono::milliseconds slow_latency{2'000};
  double poison_rate = 0;  // share of addresses answered with a poison answer (poison_for)
  std::uint64_t poison_seed = 0;
  std::chrono::milliseconds idle_close{0};  // 0 = keep an idle kept-alive connection 120 s
  std::size_t big_bytes = 2 << 20;  // a "big" answer's body; the client's default cap is 1 MiB
  std::uint64_t seed = 1;
  std::string tls_cert_file;  // PEM certificate chain and key: serve HTTPS
  std::string tls_key_file;

  // A loopback stub on an ephemeral port, one thread, with this latency and nothing else.
  static stub_options loopback(std::chrono::milliseconds latency = std::chrono::milliseconds{0}) {
    stub_options o;
    o.latency = latency;
    return o;
  }
  // The same, serving HTTPS with this certificate chain and key (PEM files).
  static stub_options loopback_tls(std::string cert_file, std::string key_file) {
    stub_options o;
    o.tls_cert_file = std::move(cert_file);
    o.tls_key_file = std::move(key_file);
    return o;
  }
};

// What the fault knobs did, by kind.
struct fault_counts {
  std::uint64_t errors = 0, timeouts = 0, garbage = 0, big = 0, resets = 0, slow = 0;
  std::uint64_t poisoned = 0, idle_closes = 0;  // poison answers sent; idle connections closed
  std::uint64_t total() const { return errors + timeouts + garbage + big + resets; }  // slow answers are right
};

// The body ip-api's `POST /batch` answers for `request_body`, and its status (200, 400, 422).
struct batch_reply {
  unsigned status = 200;
  std::string body;
};
// With a poison rate, poisoned addresses get their poison answer (poison_for).
batch_reply batch_answer_for(std::string_view request_body, double poison_rate = 0, std::uint64_t poison_seed = 0);

// The body ip-api would send for `query` (an IPv4 address, or anything else: "invalid query").
std::string answer_for(std::string_view query);

// Poison: answers a store may refuse to hold. `deep_json`: valid JSON nested 40 levels (MariaDB's
// JSON check refuses a depth of 32 or more); `long_fail`: ip-api's {"status":"fail"} with a
// 70 KB message (longer than a TEXT column); `nul_string`: a string holding \u0000 (BSON's keys
// and C strings can't). Which addresses are poisoned is a pure function of the address, the rate
// and the seed, so a checker can tell which items should fail and how.
enum class poison { none, deep_json, long_fail, nul_string };
poison poison_for(std::string_view query, double rate, std::uint64_t seed);
std::string poison_answer(poison kind, std::string_view query);
const char* poison_name(poison kind);
// The body the stub answers for `query` with these options: the poison answer or answer_for.
std::string answer_with_poison(std::string_view query, double rate, std::uint64_t seed);

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
  std::string base_url() const;  // http://127.0.0.1:PORT, or https://localhost:PORT with TLS

  std::uint64_t requests() const { return requests_.load(); }
  std::uint64_t connections() const { return connections_.load(); }
  // Connections open now, and the most that were ever open at once (a client's connection limit).
  std::uint64_t open_connections() const { return open_connections_.load(); }
  std::uint64_t peak_connections() const { return peak_connections_.load(); }
  std::uint64_t rate_limited() const { return rate_limited_.load(); }  // 429s answered
  // When each /json and /batch answer was sent (with `record`), for tests that check the rate
  // the stub saw; and the same as counts per second since the first.
  std::vector<std::chrono::steady_clock::time_point> served_times() const;
  std::vector<std::uint64_t> served_per_second() const;
  fault_counts faults() const;
  std::string last_server_name() const;  // the SNI of the last TLS handshake ("" when none)
  std::uint64_t batch_requests() const { return batch_requests_.load(); }

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> connections_{0};
  std::atomic<std::uint64_t> open_connections_{0};
  std::atomic<std::uint64_t> peak_connections_{0};
  std::atomic<std::uint64_t> rate_limited_{0};
  std::atomic<std::uint64_t> batch_requests_{0};
};

}  // namespace dibs::stub
