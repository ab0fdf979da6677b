// The completer's side of a shard: the outcomes that wait to be written, in three buffers
// (completions, releases, failures), and when the flusher writes them - at once when they fill a
// flush or the shard is stopping, else once the oldest has waited the linger (a few ms: outcomes
// that finish together go in one write; longer while items still run: linger_while). No store and
// no clock of its own
// (tests/unit/test_outcome_buffers.cpp).
#pragma once

#include <dibs/store.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace dibs {

// How long outcomes short of a flush wait for more: `idle` (engine_config::flush_linger, 5 ms)
// once the shard runs nothing (what waits is all there is for now), `running`
// (flush_linger_running, 100 ms) while items still run, whose outcomes would fill the flush. Under
// an adaptive limit a claim's items finish over tens of ms, not together, and a linger of 5 ms cut
// each claim's outcomes into about two writes, some of one to five items (MongoDB: 2,000 items in
// 36-42 writes, where a fixed limit wrote them in 21). A `running` of 0 is `idle`.
inline std::chrono::milliseconds linger_while(bool items_running, std::chrono::milliseconds idle,
                                              std::chrono::milliseconds running) {
  return items_running && running.count() > 0 ? running : idle;
}

class outcome_buffers {
 public:
  using clock = std::chrono::steady_clock;

  std::vector<completion> done;
  std::vector<release_item> releases;
  std::vector<failure> failures;

  std::size_t size() const { return done.size() + releases.size() + failures.size(); }

  // Called after one outcome was added at `now`: whether the flusher should look now. The first
  // outcome starts the linger's clock; a full flush is written at once, and so is everything
  // while the shard stops.
  bool added(clock::time_point now, std::size_t flush_size, bool stopping) {
    const auto n = size();
    if (n == 1) oldest_ = now;
    return n == 1 || n >= flush_size || stopping;
  }

  // When what is buffered is to be written (at once: any time up to now).
  clock::time_point write_at(std::size_t flush_size, std::chrono::milliseconds linger, bool stopping) const {
    if (stopping || size() >= flush_size) return clock::time_point::min();
    return oldest_ + linger;
  }

  // Every buffered outcome's lease, the buffers then emptied: what a shard gives up writing.
  std::vector<lease_ref> drop_all() {
    std::vector<lease_ref> out;
    out.reserve(size());
    for (const auto& x : done) out.push_back(x.ref);
    for (const auto& x : releases) out.push_back(x.ref);
    for (const auto& x : failures) out.push_back(x.ref);
    done.clear();
    releases.clear();
    failures.clear();
    return out;
  }

 private:
  clock::time_point oldest_{};
};

}  // namespace dibs
