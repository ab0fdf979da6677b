// A claimed item as the engine sees it: identity, the lease that fences its write, and the
// source fields the processor reads.
#pragma once

#include <dibs/tracing.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dibs {

using store_clock = std::chrono::system_clock;
using store_time = store_clock::time_point;
using millis = std::chrono::milliseconds;

// A source field as read from the item: a string, missing, or present with another type.
// The processor decides what a missing or odd field means (the HTTP processor fails the item).
struct job_field {
  enum class state { string, missing, not_string };
  std::string name;
  state st = state::missing;
  std::string value;      // the string when st == string
  std::string type_name;  // what it was instead, when st == not_string ("int32", "object", ...)
  // ... and that value as JSON text (a number, a boolean, an object or array), when the store
  // reads it so (a JSON Lines file, MongoDB); "" when it doesn't. A request body copies it.
  std::string json;
};

// Which lease a write is fenced by: the worker that claimed (`by`) and the claim's random token.
struct lease_ref {
  std::string id;
  std::string by;
  std::uint64_t token = 0;
};

struct job {
  std::string id;  // the store's key, as text the store can parse back
  std::string by;
  std::uint64_t token = 0;
  store_time until{};  // lease expiry by the store's clock
  int attempts = 0;    // claims so far, this one included
  std::vector<job_field> fields;
  // The item's trace when the run traces (tracing.hpp): a processor's spans are children of
  // trace.span, and the trace id is what a call's traceparent header carries. Invalid otherwise.
  trace_context trace;

  lease_ref ref() const { return {id, by, token}; }

  const job_field* field(std::string_view name) const {
    for (const auto& f : fields)
      if (f.name == name) return &f;
    return nullptr;
  }
};

}  // namespace dibs
