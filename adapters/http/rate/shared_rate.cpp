#include "shared_rate.hpp"

#include <dibs/log.hpp>
#include "engine/src/rate_bucket.hpp"
#include <dibs/setting_error.hpp>

#include <boost/asio/post.hpp>

#include <algorithm>

#include <cmath>

namespace dibs::http {

namespace {
// A block that starts this much later than it was taken waited behind other processes: the
// pause may have been set meanwhile, so it is read again before the block is used.
constexpr auto recheck_after = std::chrono::milliseconds(100);
}  // namespace

shared_rate::shared_rate(std::shared_ptr<shared_rate_store> store, std::string origin, double per_second,
                         std::chrono::milliseconds store_retry, std::chrono::milliseconds max_wait,
                         std::chrono::microseconds saved)
    : store_(std::move(store)),
      origin_(std::move(origin)),
      per_second_(per_second),
      block_(block_size(per_second)),
      interval_(std::max<std::int64_t>(1, std::llround(1e6 / per_second))),
      saved_(saved),
      store_retry_(store_retry),
      max_wait_(max_wait) {}

void shared_rate::warn_insane(const char* what, std::chrono::microseconds said) {
  const auto now = clock::now();
  if (warned_at_ != clock::time_point{} && now - warned_at_ < std::chrono::minutes(1)) return;
  warned_at_ = now;
  log::warn(setting_name("rate_scope"), " store: the shared rate record of ", origin_, " says ", what, " ",
            std::chrono::duration<double>(said).count(), " s from now, beyond the longest wait this process honors (",
            std::chrono::duration<double>(max_wait_).count(),
            " s, ", setting_name("max_retry_after"), "): taken as that. A record set by hand or by a clock gone wrong? Delete it "
            "(SQL: DELETE FROM dibs_rate WHERE origin = '", origin_, "'; MongoDB: the dibs_rate document with _id '",
            origin_, "') and every process starts it afresh");
}

std::chrono::microseconds shared_rate::sane_pause(std::chrono::microseconds p) {
  if (p <= max_wait_) return std::max(p, std::chrono::microseconds(0));
  warn_insane("a pause of", p);
  return max_wait_;
}

rate_block shared_rate::sane(rate_block b, std::uint32_t asked) {
  b.granted = std::min(b.granted, asked);
  if (b.starts_in > max_wait_) {
    warn_insane("the next slot is", b.starts_in);
    b.starts_in = max_wait_;
  }
  b.starts_in = std::max<std::chrono::microseconds>(b.starts_in, -max_wait_);  // long past is as good as now
  b.paused_for = sane_pause(b.paused_for);
  return b;
}

void shared_rate::store_failed(const char* doing, const std::exception& e) {
  if (store_down_) return;
  store_down_ = true;
  log::warn(setting_name("rate_scope"), " store: can't ", doing, " the shared rate of ", origin_, " in the store (", e.what(),
            "); no API request goes out until it can, asking again every second");
}

std::uint32_t shared_rate::from_block(clock::time_point asked, turn& t, std::uint32_t want) {
  // A block's slots are sent one interval apart; slots of a block whose time has passed (the
  // process was idle) are dropped, not sent at once on top of everyone else's, unless the
  // schedule saves them up (tokens: the bucket the API refilled meanwhile holds them).
  if (used_ < granted_ && (saved_.count() > 0 || block_start_ + interval_ * used_ + interval_ >= asked)) {
    const auto k = std::min(want, granted_ - used_);
    used_ += k;
    t.granted = true;
    t.at = std::max(block_start_ + interval_ * (used_ - 1), asked);
    return k;
  }
  used_ = granted_;
  return 0;
}

shared_rate::turn shared_rate::next_blocking(std::uint32_t n) {
  // Runs on the one thread of pool_, so calls to the store never overlap; the mutex guards only
  // what pause() (on a shard's thread) also touches, and is never held during a store call: a
  // store that hangs must not hang a shard that reports a 429.
  turn t;
  const auto asked = clock::now();
  n = std::max<std::uint32_t>(n, 1);
  std::uint32_t need = n;
  std::uint32_t from_hand = 0;  // slots of the block in hand taken below (put back if the store fails)
  clock::time_point hand_start{};
  {
    std::lock_guard lock(mutex_);
    // All of them from the block in hand, if it has them.
    if (used_ + need <= granted_ && from_block(asked, t, need) == need) return t;
    // The store failed a moment ago: callers wait for the next try instead of each asking a
    // store that is down in turn (which would keep a shutdown waiting on every one of them).
    if (asked < retry_at_) {
      t.granted = false;
      t.at = retry_at_;
      return t;
    }
    from_hand = from_block(asked, t, need);
    hand_start = block_start_;
    need -= from_hand;
  }
  // Slots taken from the block in hand above stay taken: what is still needed comes from blocks
  // of the store's, as large as it (a request of many tokens: one trip, not one a block).
  while (need > 0) {
    const auto want = std::max(block_, need);
    try {
      const auto taken = store_->take_block({origin_, want, interval_, saved_});
      const auto now = clock::now();
      std::lock_guard lock(mutex_);
      const auto b = sane(taken, want);
      if (store_down_) log::info(setting_name("rate_scope"), " store: the shared rate of ", origin_, " can be read again");
      store_down_ = false;
      // The store's "from now" is counted from when its answer arrived: late by the trip back, never early.
      block_start_ = now + b.starts_in;
      granted_ = b.granted;
      used_ = std::min(need, granted_);
      need -= used_;
      t.granted = granted_ > 0;
      t.at = block_start_ + interval_ * (used_ > 0 ? used_ - 1 : 0);
      t.recheck = block_start_ > asked + recheck_after;
      if (b.paused_for.count() > 0) t.paused_until = now + b.paused_for;
      if (!t.granted) return t;
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex_);
      store_failed("take a block of", e);
      retry_at_ = clock::now() + store_retry_;
      if (from_hand > 0 && block_start_ == hand_start && used_ >= from_hand) used_ -= from_hand;  // not sent: still in hand
      t.granted = false;
      t.at = retry_at_;
      return t;
    }
  }
  return t;
}

awaitable<shared_rate::turn> shared_rate::next(std::uint32_t n) {
  // Slots of the block in hand are taken here, on the caller's thread: only a new block (or a
  // retry of the store) goes to the store's thread and back.
  turn t;
  n = std::max<std::uint32_t>(n, 1);
  {
    std::lock_guard lock(mutex_);
    // All of them from the block in hand, or none: a part taken here and the rest on the
    // store's thread would leave the part's slots behind if the store then failed.
    if (used_ + n <= granted_ && from_block(clock::now(), t, n) == n) co_return t;
  }
  auto call = [this, n] { return next_blocking(n); };  // named: no lambda temporaries at a co_await (g++ 12)
  co_return co_await offload(pool_, std::move(call));
}

shared_rate::clock::time_point shared_rate::paused_until_blocking() {
  try {
    const auto said = store_->paused_for(origin_);
    std::lock_guard lock(mutex_);
    const auto p = sane_pause(said);
    return p.count() > 0 ? clock::now() + p : clock::time_point{};
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    store_failed("read", e);
    return {};  // the next block will tell (it is not granted while the store is down)
  }
}

awaitable<shared_rate::clock::time_point> shared_rate::paused_until() {
  auto call = [this] { return paused_until_blocking(); };
  co_return co_await offload(pool_, std::move(call));
}

void shared_rate::pause(clock::time_point until) {
  {
    std::lock_guard lock(mutex_);
    used_ = granted_;  // the rest of the block falls inside the pause
    if (until <= pause_to_write_) return;
    pause_to_write_ = until;
    if (pause_posted_) return;  // the write on its way takes the latest
    pause_posted_ = true;
  }
  net::post(pool_.executor(), [this] { write_pause(); });
}

void shared_rate::write_pause() {
  clock::time_point until;
  {
    std::lock_guard lock(mutex_);
    until = pause_to_write_;
    pause_posted_ = false;
  }
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(until - clock::now());
  if (left.count() <= 0) return;
  try {
    store_->pause(origin_, left);
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    store_failed("pause", e);
  }
}

}  // namespace dibs::http
