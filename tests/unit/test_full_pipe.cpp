// Slow start's full pipe (include/dibs/http/full_pipe.hpp): answers a second weighed against the
// requests at the server, on samples a test feeds by hand.
#include <dibs/http/full_pipe.hpp>

#include <catch2/catch.hpp>

using namespace dibs::http;
using namespace std::chrono_literals;

namespace {

struct feeder {
  full_pipe::clock::time_point now = full_pipe::clock::time_point{} + 100s;
  full_pipe pipe{now};

  // A sample of `took` with `running` at the server at every start and `answers` answers, ended
  // by a round trip of `latency`: what the pipe says then.
  std::optional<double> sample(std::size_t running, std::uint64_t answers, std::chrono::microseconds took,
                               std::chrono::microseconds latency = 2ms) {
    for (std::uint64_t i = 0; i < answers; ++i) {
      pipe.started(running, running);
      pipe.answered();
    }
    now += took;
    return pipe.round_ended(now, latency);
  }
};

// Samples of 10 ms, each (in flight at the server, answers): where the last one fills the pipe,
// or nothing when it does not (none of the earlier ones may).
std::optional<double> fills_at(std::initializer_list<std::pair<std::size_t, std::uint64_t>> samples) {
  feeder f;
  std::optional<double> full;
  for (const auto& [running, answers] : samples) {
    REQUIRE_FALSE(full);
    full = f.sample(running, answers, 10ms);
  }
  return full;
}

}  // namespace

TEST_CASE("the pipe is full when more at the server brings no more answers, at the most in flight that answered as much", "[full-pipe]") {
  // 4,000 answers a second from 16 at the server; 24, 32 and 48 bring 4,100, 4,300, 4,200.
  const auto full = fills_at({{16, 40}, {24, 41}, {32, 43}, {48, 42}});
  REQUIRE(full);
  CHECK(*full == Approx(48));
}

TEST_CASE("a server that answers less the more it is sent fills the pipe where it answered most", "[full-pipe]") {
  // A thread per connection, all of them contending for one lock: 16 at once answer most.
  const auto full = fills_at({{16, 40}, {24, 34}, {32, 33}, {48, 32}});
  REQUIRE(full);
  CHECK(*full == Approx(16));
}

TEST_CASE("answers that grow with the in-flight never fill the pipe", "[full-pipe]") {
  feeder f;
  std::size_t running = 8;
  for (int i = 0; i < 10; ++i, running *= 2) {
    // Little's law at 10 ms: running / 10 ms answers a second, over samples of 40 ms.
    const auto answers = static_cast<std::uint64_t>(running) * 4;
    CHECK_FALSE(f.sample(running, answers, 40ms, 10ms));
  }
}

TEST_CASE("answers that stop growing while the in-flight does not grow say nothing", "[full-pipe]") {
  // The limit grew but the requests wait for connections: as many at the server as before.
  feeder f;
  for (int i = 0; i < 10; ++i) CHECK_FALSE(f.sample(16, 40, 10ms));
}

TEST_CASE("a sample needs enough answers", "[full-pipe]") {
  feeder f;
  CHECK_FALSE(f.sample(16, 40, 10ms));
  // Three times the in-flight and flat answers, but 10 answers a sample: the three add up to
  // one sample of 30, still too few (as three samples they would fill the pipe).
  for (int i = 0; i < 3; ++i) CHECK_FALSE(f.sample(48, 10, 10ms));
  CHECK_FALSE(f.sample(48, 10, 10ms));  // 40 answers: a first stall
  CHECK_FALSE(f.sample(48, 40, 10ms));
  CHECK(f.sample(48, 40, 10ms));
}

TEST_CASE("a sample lasts two round trips", "[full-pipe]") {
  feeder f;
  CHECK_FALSE(f.sample(16, 40, 10ms));
  // Enough answers in each batch of 8 ms, but a round trip takes 6 ms: two batches make a sample
  // (as samples of one batch each, three would fill the pipe by the third).
  for (int i = 0; i < 5; ++i) CHECK_FALSE(f.sample(48, 32, 8ms, 6ms));
  CHECK(f.sample(48, 32, 8ms, 6ms));  // the third stall
}

TEST_CASE("the pipe settles at the permits held, those opening a connection included", "[full-pipe]") {
  // Every call opens a connection (HTTP/1.0 over TLS): of 32 holding permits, 16 are at the
  // server. The limit counts the 32.
  feeder f;
  const auto sample = [&](std::size_t running, std::size_t held, std::uint64_t answers) {
    for (std::uint64_t i = 0; i < answers; ++i) {
      f.pipe.started(running, held);
      f.pipe.answered();
    }
    f.now += 10ms;
    return f.pipe.round_ended(f.now, 2ms);
  };
  CHECK_FALSE(sample(16, 32, 40));
  CHECK_FALSE(sample(24, 48, 40));
  CHECK_FALSE(sample(24, 48, 40));
  const auto full = sample(24, 48, 40);
  REQUIRE(full);
  CHECK(*full == Approx(48));
}

TEST_CASE("a sample between two stalls that did not grow the in-flight keeps the count", "[full-pipe]") {
  // The third at 16 is no judgement: no more in flight than the best.
  CHECK(fills_at({{16, 40}, {32, 40}, {16, 40}, {32, 40}, {32, 40}}));
}

TEST_CASE("a restart forgets what was measured", "[full-pipe]") {
  feeder f;
  CHECK_FALSE(f.sample(16, 40, 10ms));
  CHECK_FALSE(f.sample(32, 40, 10ms));
  CHECK_FALSE(f.sample(32, 40, 10ms));
  f.pipe.restart();
  CHECK_FALSE(f.sample(32, 40, 10ms));  // starts the first sample
  CHECK_FALSE(f.sample(32, 40, 10ms));  // the best
  CHECK_FALSE(f.sample(32, 40, 10ms));  // no more at the server: nothing
}

TEST_CASE("the best sample's requests at the server tell whether the current step brought more answers", "[full-pipe]") {
  feeder f;
  CHECK_FALSE(f.pipe.best_above(0));  // nothing measured yet
  REQUIRE_FALSE(f.sample(16, 40, 10ms));
  CHECK(f.pipe.best_above(8));
  CHECK_FALSE(f.pipe.best_above(16));
  REQUIRE_FALSE(f.sample(32, 41, 10ms));  // twice the in-flight, no more answers: not the best
  CHECK_FALSE(f.pipe.best_above(16));
  REQUIRE_FALSE(f.sample(32, 80, 10ms));  // twice the answers: the best, at 32
  CHECK(f.pipe.best_above(16));
}
