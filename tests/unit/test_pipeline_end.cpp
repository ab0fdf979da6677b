// What a pipeline's end means before its item is settled (engine/src/pipeline_end.hpp).
#include "engine/src/pipeline_end.hpp"

#include <catch2/catch.hpp>

using dibs::outcome;
using dibs::pipeline_end_of;
using ms = std::chrono::milliseconds;

TEST_CASE("pipeline end: a call that ended by itself is the API's answer, whatever it says", "[pipeline_end]") {
  auto e = pipeline_end_of(outcome::retry(ms(500), "HTTP 503", 503), false, false, false, ms(0));
  CHECK(e.api_answered);
  CHECK_FALSE(e.cancelled);
  CHECK_FALSE(e.abandoned);
  CHECK(e.o.why == "HTTP 503");
  CHECK(e.o.after == ms(500));
}

TEST_CASE("pipeline end: cut at --max-processing it is a failed attempt, retried after the processor's delay",
          "[pipeline_end]") {
  // The processor saw the cancellation (operation_aborted) ...
  auto e = pipeline_end_of(outcome{}, true, true, false, ms(2000));
  CHECK(e.abandoned);
  CHECK_FALSE(e.cancelled);  // not given back unprocessed: the attempt is spent
  CHECK_FALSE(e.api_answered);
  CHECK(e.o.k == outcome::kind::retry);
  CHECK(e.o.after == ms(0));
  CHECK(e.o.why == "abandoned after max_processing 2000 ms");
  // ... or swallowed it and reported a retry of its own: its delay is kept.
  e = pipeline_end_of(outcome::retry(ms(700), "timed out"), false, true, false, ms(2000));
  CHECK(e.abandoned);
  CHECK(e.o.after == ms(700));
  CHECK(e.o.why == "abandoned after max_processing 2000 ms");
  // An answer that made it before the deadline is kept.
  e = pipeline_end_of(outcome::done("{}"), false, true, false, ms(2000));
  CHECK_FALSE(e.abandoned);
  CHECK(e.api_answered);
  CHECK(e.o.k == outcome::kind::done);
}

TEST_CASE("pipeline end: cancelled by the shard's stop, the item is given back unprocessed unless it got its answer",
          "[pipeline_end]") {
  auto e = pipeline_end_of(outcome{}, true, false, true, ms(0));
  CHECK(e.cancelled);
  CHECK_FALSE(e.api_answered);
  // A processor that swallowed the cancellation and reported a failure: given back all the same.
  e = pipeline_end_of(outcome::fail("cancelled"), false, false, true, ms(0));
  CHECK(e.cancelled);
  e = pipeline_end_of(outcome::done("{\"a\":1}"), false, false, true, ms(0));
  CHECK_FALSE(e.cancelled);
  CHECK(e.o.result == "{\"a\":1}");
  // Abandoned at its deadline while the shard stops now: given back, not retried.
  e = pipeline_end_of(outcome{}, true, true, true, ms(1000));
  CHECK(e.cancelled);
  CHECK(e.abandoned);
}

TEST_CASE("pipeline end: a call a budget never let go tells nothing of the API, so a probe it was is due again",
          "[pipeline_end]") {
  // Taken as an answer, the breaker's probe refused by a budget left the breaker probing for good:
  // the run waited for the API with no deadline.
  const auto e = pipeline_end_of(outcome::not_sent("not sent: the budget has no room left for it"), false, false, false, ms(0));
  CHECK_FALSE(e.cancelled);
  CHECK_FALSE(e.api_answered);
  CHECK(e.o.unsent);
}
