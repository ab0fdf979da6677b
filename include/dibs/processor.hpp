// A processor turns a claimed job into an outcome. It is a coroutine; the engine makes one
// processor per shard, so a processor may keep per-shard state (connection pools, parsers)
// without locks.
#pragma once

#include <dibs/job.hpp>
#include <dibs/net.hpp>
#include <dibs/outcome.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace dibs {

class processor {
 public:
  virtual ~processor() = default;
  // Called on the shard's thread. The job is passed by value: it lives in the coroutine frame.
  virtual awaitable<outcome> process(job j) = 0;
  // True when process() waits before its real work begins (for a rate-limit slot, say) and calls
  // shard_info::work_started when it does: max_processing then times the work, not the wait.
  // False (the default): the clock starts when process() is called.
  virtual bool reports_work_start() const { return false; }
  // How many items this processor can usefully work on at once now: an HTTP processor's adaptive
  // limit on the API it calls, say. The engine runs no more pipelines than this (nor than its
  // concurrency, the ceiling), and claims little more, so that no item sits claimed behind a
  // limit that will not reach it soon. 0 (the default): no limit of its own.
  virtual std::size_t capacity() const { return 0; }
  // True while this shard's part of a limit the shards share is no call at all (an adaptive limit
  // on the API below the number of shards: each shard taking one call anyway ran a limit of 1 as
  // 2 against an API a third slower at 2). The shard then claims nothing new, runs what it holds,
  // and ends once the store's last items are in other shards' hands; the last shard calling never
  // parks. False (the default): never.
  virtual bool parked() const { return false; }
  // The engine's concurrency (the ceiling) changed: a processor with a limit of its own keeps it
  // under `ceiling`, this shard's part of it.
  virtual void set_ceiling(std::size_t /*ceiling*/) {}
  // The same, with the engine's whole concurrency beside this shard's part: a limit every shard
  // shares (an API origin's) takes the whole, the same figure on every shard (each shard's part
  // times the shards differs by the rounding). By default, set_ceiling(shard_part).
  virtual void concurrency_changed(std::size_t shard_part, std::size_t /*whole*/) { set_ceiling(shard_part); }
  // The shard claims and starts nothing more (the store has nothing left it could claim, or the
  // run stops); its calls under way may still end. A limit the shards share goes to the others.
  virtual void dispatch_ended() {}
};

struct counters;

struct shard_info {
  std::size_t index = 0;
  net::any_io_executor executor;
  counters* figures = nullptr;  // the engine's, for processors that report API figures (may be null)
  // For processors that reports_work_start(): call it, on the shard's thread, with the job whose
  // work begins now (the request is about to be sent). Never empty when the engine makes the
  // processor; a no-op when there is no max_processing.
  std::function<void(const job&)> work_started = [](const job&) {};
  // For processors with a capacity(): call it, on the shard's thread, when the capacity changed,
  // so the engine runs (and claims) more or fewer items. Never empty when the engine makes the
  // processor.
  std::function<void()> capacity_changed = [] {};
  // The shard's share of the engine's concurrency when the processor is made: the most its
  // capacity() needs to reach.
  std::size_t ceiling = 0;
  std::size_t whole_ceiling = 0;  // the engine's whole concurrency, every shard's part together
  std::size_t shards = 1;  // the engine's shards, this one among them
};

using processor_factory = std::function<std::unique_ptr<processor>(const shard_info&)>;

}  // namespace dibs
