// What a worker is called, and which leases are a worker's. A worker id is what an operator
// reads on the dashboard, in the logs and in `dibs status`, and types into `dibs release
// worker NAME`: `worker_id NAME` (default host-pid, the pod name in Kubernetes); each shard
// leases as NAME-<shard index>.
#pragma once

#include <string>
#include <string_view>

namespace dibs {

inline constexpr std::size_t max_worker_id_chars = 64;

// "" when `name` may be a worker id, else what is wrong with it: 1 to 64 printable ASCII
// characters, no space. ASCII keeps byte and character counts equal (the SQL stores compare
// prefixes by length) and a name that can be typed back into `dibs release`.
std::string worker_id_problem(std::string_view name);
// This process's name when none is given (engine_config::worker_prefix ""): host-pid.
std::string default_worker_prefix();
// The same check for a store's admin call: throws std::invalid_argument("worker 'NAME': ...").
void require_worker_id(const std::string& name);

// Whether a lease held `by` belongs to worker `name`: `by` is NAME itself (one shard's full id)
// or NAME-<digits> (any shard of it). "web-1" owns "web-1-0" but not "web-12-0" nor "web-1-x-0".
bool worker_owns(std::string_view by, std::string_view name);

}  // namespace dibs
