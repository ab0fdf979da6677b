// A MongoDB store's counts are several commands; documents move between them
// (adapters/mongo/stats_counts.hpp). A scripted collection moves one document at every point
// between the counts; the stats must never call an open collection drained.
#include <adapters/mongo/stats_counts.hpp>

#include <catch2/catch.hpp>

#include <map>

using namespace dibs;
using namespace dibs::mongo;

namespace {

enum class doc_state { pending, leased_live, leased_expired, done, failed };

// Counts a collection of documents in `states`; after the `move_after`-th count, document 0 goes
// from `from` to `to` (another worker's write landing between two commands).
struct scripted_collection {
  std::vector<doc_state> states;
  int move_after;
  doc_state to;
  int calls = 0;

  std::uint64_t count(doc_count what) {
    std::uint64_t n = 0;
    for (const auto s : states) {
      const bool open = s == doc_state::pending || s == doc_state::leased_live || s == doc_state::leased_expired;
      switch (what) {
        case doc_count::done: n += s == doc_state::done; break;
        case doc_count::failed: n += s == doc_state::failed; break;
        case doc_count::leased_live: n += s == doc_state::leased_live; break;
        case doc_count::leased_expired: n += s == doc_state::leased_expired; break;
        case doc_count::open: n += open; break;
      }
    }
    if (++calls == move_after) states[0] = to;
    return n;
  }
};

}  // namespace

TEST_CASE("a document released between two count commands is still counted open", "[mongo][stats]") {
  // Another worker's lease ends (a retry released, a shutdown) while the counts are taken.
  for (int after = 0; after <= 5; ++after) {
    CAPTURE(after);
    scripted_collection c{{doc_state::leased_live, doc_state::done}, after, doc_state::pending};
    const auto s = stats_from_counts(true, [&](doc_count w) { return c.count(w); });
    CHECK_FALSE(s.drained());
    CHECK(s.pending + s.leased_live + s.leased_expired >= 1);
    CHECK(s.done == 1);
  }
}

TEST_CASE("a document claimed or taken over between two count commands is still counted open", "[mongo][stats]") {
  for (const auto& [from, to] : {std::pair{doc_state::pending, doc_state::leased_live}, std::pair{doc_state::leased_expired, doc_state::leased_live},
                                std::pair{doc_state::leased_live, doc_state::leased_expired}}) {
    for (int after = 0; after <= 5; ++after) {
      CAPTURE(after);
      scripted_collection c{{from}, after, to};
      const auto s = stats_from_counts(true, [&](doc_count w) { return c.count(w); });
      CHECK_FALSE(s.drained());
    }
  }
}

TEST_CASE("a document that ends between two count commands leaves no negative pending", "[mongo][stats]") {
  for (int after = 0; after <= 5; ++after) {
    CAPTURE(after);
    scripted_collection c{{doc_state::leased_live}, after, doc_state::done};
    const auto s = stats_from_counts(true, [&](doc_count w) { return c.count(w); });
    CHECK(s.pending <= 1);
    CHECK(s.pending + s.leased_live + s.leased_expired <= 1);
  }
}

TEST_CASE("a still collection is counted as it is", "[mongo][stats]") {
  scripted_collection c{{doc_state::pending, doc_state::pending, doc_state::leased_live, doc_state::leased_expired, doc_state::done, doc_state::failed},
                        0, doc_state::pending};
  const auto s = stats_from_counts(true, [&](doc_count w) { return c.count(w); });
  CHECK(s.pending == 2);
  CHECK(s.leased_live == 1);
  CHECK(s.leased_expired == 1);
  CHECK(s.done == 1);
  CHECK(s.failed == 1);
}

TEST_CASE("the engine's look for anything left counts the open states only: two commands fewer", "[mongo][stats]") {
  scripted_collection c{{doc_state::pending, doc_state::leased_live, doc_state::leased_expired, doc_state::done, doc_state::failed},
                        0, doc_state::pending};
  int commands = 0;
  const auto s = stats_from_counts(false, [&](doc_count w) {
    ++commands;
    CHECK(w != doc_count::done);
    CHECK(w != doc_count::failed);
    return c.count(w);
  });
  CHECK(commands == 3);
  CHECK(s.pending == 1);
  CHECK(s.leased_live == 1);
  CHECK(s.leased_expired == 1);
  CHECK(s.done == 0);
  CHECK(s.failed == 0);
}
