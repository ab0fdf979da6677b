// One process's part of a `dibs bench` drain: the engine in-process on the scratch store (timed:
// timed_store.hpp), with a no-op processor (no HTTP) or the in-process ip-api stub at a latency,
// until the store has nothing pending or leased. The figures come back as a worker_report, the
// same whether this process is the parent or a worker.
#pragma once

#include "bench_figures.hpp"
#include "signal_watch.hpp"

#include <dibs/admin_store.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>

namespace dibs::cli {

struct drain_settings {
  std::optional<std::chrono::milliseconds> latency;  // nullopt: no HTTP at all
  std::size_t concurrency = 200;
  std::size_t claim_batch = 100;
  std::size_t shards = 0;  // 0: one per core
};

// Drains `st`; a signal on `signals` stops the engine at once (what it holds is released) and
// is handed to `also` (the worker processes).
worker_report drain_here(const std::shared_ptr<admin_store>& st, const drain_settings& s, signal_watch& signals,
                         const std::function<void(int)>& also = {});

}  // namespace dibs::cli
