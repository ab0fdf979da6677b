// After a stop signal the process ends by a deadline, whatever still holds it: a thread of its
// own waits for the deadline and then calls std::_Exit. It outlives the run on purpose: what
// comes after the engine (the summary's store counts, the stores' destructors joining their
// threads, answers still being kept) may wait on a database that no longer answers, and SIGTERM
// must end the process all the same. It is never disarmed: a process that ends in time simply
// ends first. What the process held is then left to its leases' expiry (fenced writes keep that
// safe).
#pragma once

#include <chrono>
#include <string>

namespace dibs::cli {

// Ends the process with `code` at `deadline` (an earlier call's earlier deadline stands), after
// logging `why` as an error. Thread-safe.
void exit_by(std::chrono::steady_clock::time_point deadline, int code, std::string why);

}  // namespace dibs::cli
