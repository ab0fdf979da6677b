// What a shard shares with the rest of the process (engine.cpp makes it; the shard and its
// completer hold it): the run's settings, the store, the counters, the processor factory, and
// how a shard tells the run it ended or was denied.
#pragma once

#include <dibs/counters.hpp>
#include <dibs/engine_config.hpp>
#include <dibs/processor.hpp>
#include <dibs/store.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace dibs {

// Where a shard is in its life, which its completer reads too. running: claiming; stopping: no
// more claims, in-flight work may finish; finishing: nothing runs, the flusher writes what is
// left and the keeper stops.
enum class shard_phase { running, stopping, finishing };

// What a shard shares with the rest of the process: all of it outlives the shard.
struct shard_context {
  const engine_config& cfg;
  store& st;
  counters& figures;
  const processor_factory& factory;
  // Called once, from the shard's thread, when it has ended; `drained`: it ended because the
  // store had nothing left for it (not because it was stopped or could no longer claim).
  std::function<void(bool drained)> ended;
  // Called from the shard's thread when the store denied it a right (store_denied): the run must
  // end, every shard of it.
  std::function<void(const std::string& why)> denied;
  // Shards of the run whose dispatcher runs and is not parked (processor::parked): a shard parks
  // only while another one calls.
  std::atomic<std::int64_t>& calling_shards;
};

}  // namespace dibs
