// An engine's config as most tests set it, in one line: `shards` shards sharing `concurrency`
// calls, claiming `claim_batch` items at a time under leases of `lease`; the rest as the defaults.
#pragma once

#include <dibs/engine_config.hpp>

#include <chrono>
#include <cstddef>

namespace dibs::test {

inline engine_config config_of(std::size_t shards, std::size_t concurrency, std::size_t claim_batch,
                               std::chrono::milliseconds lease) {
  engine_config c;
  c.shards = shards;
  c.concurrency = concurrency;
  c.claim_batch = claim_batch;
  c.lease = lease;
  return c;
}

}  // namespace dibs::test
