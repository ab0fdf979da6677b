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
};

using processor_factory = std::function<std::unique_ptr<processor>(const shard_info&)>;

}  // namespace dibs
