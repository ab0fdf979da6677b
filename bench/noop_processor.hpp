// The store benches' processor: every item done at once with "{}", so a drain measures the
// store (claims and fenced writes), never an API.
#pragma once

#include <dibs/processor.hpp>

namespace dibs::bench {

class noop_processor final : public processor {
 public:
  awaitable<outcome> process(job) override { co_return outcome::done("{}"); }
};

}  // namespace dibs::bench
