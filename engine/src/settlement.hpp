// What an item's outcome becomes in the store: the shard's settle decision as a pure function
// (tests/unit/test_settlement.cpp). The answer is written (a completion); the item is given back
// to be claimed again after its delay (a retry: an attempt spent, unless the API asked for the
// pause: a 429 or 529 gives the claim's attempt back), or at once and unprocessed (a
// cancelled call, a shutdown); or it fails (the processor's verdict, or a retry once the item has
// spent max_attempts). Reasons are bounded (reason_text.hpp): the store keeps them.
#pragma once

#include <dibs/job.hpp>
#include <dibs/outcome.hpp>
#include <dibs/store.hpp>

#include <string>
#include <variant>

namespace dibs {

struct settlement {
  enum class kind {
    complete,   // the answer is written (no_data: the API's definitive "no data", counted apart)
    retry,      // given back, to be claimed again after the release's delay
    give_back,  // given back at once, unprocessed
    fail,       // failed: the processor's verdict
    give_up,    // failed: a retry of an item that has spent max_attempts
  };
  kind k = kind::fail;
  std::variant<completion, release_item, failure> write;
  bool no_data = false;
  std::string why;  // complete with no_data: the API's words (the log says them)
};

// `cancelled`: the call never ended (stop_now, the shutdown deadline) or its processor swallowed
// the cancellation; `stopping`: the shard is shutting down (a cancelled item's reason then says so).
settlement settlement_of(const job& j, outcome o, bool cancelled, bool stopping, int max_attempts);

}  // namespace dibs
