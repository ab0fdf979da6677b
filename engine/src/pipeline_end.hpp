// What a pipeline's end means before its item is settled: the shard's reading of a call that
// ended, as a pure function (tests/unit/test_pipeline_end.cpp). A call cancelled by the shard's
// stop is given back unprocessed; one cancelled at its max_processing deadline is a failed
// attempt, retried like any other, whether the processor saw the cancellation or swallowed it;
// only a call that ended by itself, with an answer, tells the circuit breaker anything of the API.
#pragma once

#include <dibs/outcome.hpp>

#include <chrono>

namespace dibs {

struct pipeline_end {
  outcome o;                  // what to settle (or to wait for the API with)
  bool cancelled = false;     // given back unprocessed (settlement_of's `cancelled`)
  bool abandoned = false;     // cut at max_processing: counted, and retried as a failed attempt
  bool api_answered = false;  // the call ended by itself (not aborted, not abandoned): the API's answer,
                              // whatever it says (read only when not `cancelled`)
};

// `o`: the processor's outcome (or what its exception became); `aborted`: the call ended in the
// cancellation's operation_aborted; `abandoned`: its max_processing deadline cancelled it;
// `cancel_now`: the shard cancels its calls (stop_now, the shutdown deadline).
pipeline_end pipeline_end_of(outcome o, bool aborted, bool abandoned, bool cancel_now,
                             std::chrono::milliseconds max_processing);

}  // namespace dibs
