// What a run did and why it ended: engine::summary() at any time, and what engine::async_run
// completes with once the run has ended.
#pragma once

#include <cstdint>
#include <string>

namespace dibs {

// Why a run ended (run_summary::ended).
enum class end_reason {
  running,  // it has not ended (or not begun): a summary taken mid-run
  drained,  // the store had nothing left for any shard
  stopped,  // stop(), stop_now(), or async_run's cancellation
  denied,   // the store denied a right the run needs: run_summary::denied says which
  failed,   // a shard could no longer claim (its error is in the log)
};
// "running", "drained", "stopped", "denied", "failed".
const char* to_string(end_reason e);

struct run_summary {
  std::uint64_t completed = 0;  // done with data
  std::uint64_t failed = 0;
  std::uint64_t no_data = 0;    // done with the API's "no data" answer (outcome::no_data): not failed
  std::uint64_t lost_leases = 0;
  std::uint64_t released = 0;
  std::uint64_t retries = 0;
  std::uint64_t renewals = 0;
  double elapsed_s = 0;
  // Answer reuse (counters.hpp): all 0 when the processor does not reuse answers.
  std::uint64_t answer_calls = 0;
  std::uint64_t answers_reused = 0;
  std::uint64_t answers_joined = 0;
  std::uint64_t answers_from_store = 0;  // of answers_reused: kept in the store by a process before
  // Members an adapter adds to json() (",\"api_limits\":[...]" from the HTTP processors): the
  // engine knows nothing of them.
  std::string extra_json;
  end_reason ended = end_reason::running;
  std::string denied;  // with end_reason::denied: the store's words, with what to grant
  double docs_per_s() const { return elapsed_s > 0 ? static_cast<double>(completed + no_data) / elapsed_s : 0; }
  bool reuses_answers() const { return answer_calls + answers_reused + answers_joined > 0; }
  // The share of items answered without a call of their own (reused or joined), 0..1.
  double answer_hit_ratio() const {
    const auto all = answer_calls + answers_reused + answers_joined;
    return all > 0 ? static_cast<double>(answers_reused + answers_joined) / static_cast<double>(all) : 0;
  }
  // `summary: completed=N failed=N lost_leases=N released=N elapsed_s=X docs_per_s=X`, then
  // ` no_data=N` when some items got the API's "no data" answer, then with answer reuse ` api_calls=N reused=N joined=N hit_ratio=X` (and ` from_store=N` when the store
  // keeps answers too).
  std::string line() const;
  std::string json() const;
};

}  // namespace dibs
