// Answers kept in the store itself (`reuse_answers store`): every process that works on the
// store, and the next run, reuse an answer some process already paid an API call for. One record
// per distinct request, keyed by a digest of the request (answer_reuse's request key) and aged by
// the store's clock where it has one. Only answers a run accepted are kept. Blocking: callers run
// it off their shard (adapters/http/reuse/stored_answers.hpp).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dibs {

struct answer_key {
  std::string digest;   // hex SHA-256 of `request`: the record's key
  std::string request;  // the request without its query (which may hold an API key), for people
};

// A kept answer and how long ago it was kept (by the store's clock): a process that reuses it
// counts its answer_ttl from then, not from the lookup.
struct kept_answer {
  std::string answer;
  std::chrono::milliseconds age{0};
};

class answer_store {
 public:
  virtual ~answer_store() = default;
  // The answer kept for `k`, when it was kept less than `ttl` ago. Every call must bound its own
  // time (statement timeouts): a leader waits for it.
  virtual std::optional<kept_answer> find(const answer_key& k, std::chrono::milliseconds ttl) = 0;
  // Keeps each answer for its key, replacing an older one, stamped now; one statement or bulk
  // write where the store can. The keys are distinct.
  virtual void keep(const std::vector<std::pair<answer_key, std::string>>& answers) = 0;
};

}  // namespace dibs
