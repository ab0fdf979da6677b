// What the first answers of a burst say of a server that queues: pure, unit-tested without a
// server (tests/unit/test_burst_order.cpp).
//
// Slow start judges a round trip against the usual one, and its first round trip has none: any
// latency passes, and the limit grows eightfold. A server that serves one request at a time (or
// a few) answers a burst sent together in the order it was sent, each answer later than the one
// before by a service time: latency rises with the send order. A server that serves the burst at
// once answers in any order (an API whose latency spreads from 10 to 90 ms answers its fastest
// first, whenever they were sent). Against a serial embeddings server, 16 batch requests went to
// 128 on the first round trip (its lower quartile 170 ms against a fastest of 57 ms): every row of
// the run sat queued at the server in batches formed before any answer could say larger ones pay.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace dibs::http {

struct burst_answer {
  std::int64_t sent_us = 0;       // when the request went out (any clock, the same for all)
  std::uint32_t latency_us = 0;   // how long its answer took
};

// When the answers rise with their send order (Spearman's rank correlation 0.8 or more, over 8
// answers at least, of which 7 or more to requests sent together: within half the fastest
// answer's latency of the first, 5 ms at least) and the slowest took twice the fastest or more: the factor to bring the
// in-flight to, twice the share the server serves without queueing (the fastest over the median,
// as Little's law has it), between 1/8 and 0.9. Else nothing: the burst says nothing of a queue.
std::optional<double> queued_in_send_order(std::vector<burst_answer> answers);

}  // namespace dibs::http
