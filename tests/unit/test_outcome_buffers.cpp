// When a shard's flusher writes its buffered outcomes (engine/src/outcome_buffers.hpp), on a clock
// the test moves.
#include "engine/src/outcome_buffers.hpp"

#include <catch2/catch.hpp>

using dibs::outcome_buffers;
using ms = std::chrono::milliseconds;

namespace {
const outcome_buffers::clock::time_point zero{};

dibs::lease_ref ref(const std::string& id) { return dibs::lease_ref{id, "w", 1}; }
}  // namespace

TEST_CASE("outcome buffers: the first outcome starts the linger, the rest wait for it or a full flush",
          "[outcome_buffers]") {
  outcome_buffers b;
  b.done.push_back(dibs::completion{ref("a"), "{}"});
  CHECK(b.added(zero + ms(10), 3, false));  // the first: the flusher starts its clock
  CHECK(b.write_at(3, ms(5), false) == zero + ms(15));
  b.failures.push_back(dibs::failure{ref("b"), "why", 500, 1});
  CHECK_FALSE(b.added(zero + ms(12), 3, false));  // neither first nor full: the linger holds
  CHECK(b.write_at(3, ms(5), false) == zero + ms(15));  // from the oldest, not the newest
  b.releases.push_back(dibs::release_item{ref("c"), ms(0), "shutdown", 0, true});
  CHECK(b.added(zero + ms(13), 3, false));  // a full flush: at once
  CHECK(b.write_at(3, ms(5), false) <= zero);
}

TEST_CASE("outcome buffers: a stopping shard writes at once, and giving up hands back every lease", "[outcome_buffers]") {
  outcome_buffers b;
  b.done.push_back(dibs::completion{ref("a"), "{}"});
  b.added(zero, 100, false);
  b.releases.push_back(dibs::release_item{ref("b"), ms(0), "shutdown", 0, true});
  CHECK(b.added(zero + ms(1), 100, true));
  CHECK(b.write_at(100, ms(5), true) <= zero);
  b.failures.push_back(dibs::failure{ref("c"), "why", 0, 1});
  const auto dropped = b.drop_all();
  REQUIRE(dropped.size() == 3);
  CHECK(dropped[0].id == "a");
  CHECK(dropped[1].id == "b");
  CHECK(dropped[2].id == "c");
  CHECK(b.size() == 0);
  // Emptied, the next outcome is a first again and restarts the clock.
  b.done.push_back(dibs::completion{ref("d"), "{}"});
  CHECK(b.added(zero + ms(50), 100, false));
  CHECK(b.write_at(100, ms(5), false) == zero + ms(55));
}

TEST_CASE("outcome buffers: outcomes wait the running linger while items still run, the idle one once none does") {
  CHECK(dibs::linger_while(false, ms(5), ms(100)) == ms(5));
  CHECK(dibs::linger_while(true, ms(5), ms(100)) == ms(100));
  CHECK(dibs::linger_while(true, ms(0), ms(0)) == ms(0));  // "write at once", set by hand, stays
  CHECK(dibs::linger_while(true, ms(5), ms(0)) == ms(5));
  CHECK(dibs::linger_while(false, ms(0), ms(100)) == ms(0));
}
