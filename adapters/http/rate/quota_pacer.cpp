#include "quota_pacer.hpp"

#include <algorithm>

namespace dibs::http {

namespace {
using std::chrono::milliseconds;
using std::chrono::seconds;

// Times kept while no window is known: enough for the first reading to count what went out after
// its request, bounded however fast the run goes.
constexpr auto unpaced_memory = seconds(5);
constexpr std::size_t unpaced_most = 100'000;
}  // namespace

std::int64_t quota_margin(std::int64_t limit) {
  if (limit <= 1) return 0;
  return std::max<std::int64_t>(1, (limit * 5 + 99) / 100);
}

quota_pacer::clock::time_point quota_pacer::end_after(clock::time_point t) const {
  if (window_.count() <= 0) return t;
  if (t < anchor_) {
    const auto back = (anchor_ - t - clock::duration(1)) / window_;  // whole windows between t and the anchor
    return anchor_ - back * window_;
  }
  return anchor_ + ((t - anchor_) / window_ + 1) * window_;
}

std::int64_t quota_pacer::taken_between(clock::time_point from, clock::time_point to) const {
  return std::count_if(taken_.begin(), taken_.end(), [&](clock::time_point t) { return t > from && t <= to; });
}

quota_pacer::booked& quota_pacer::window_at(clock::time_point t) {
  const auto end = end_after(t);
  auto it = std::find_if(windows_.begin(), windows_.end(), [&](const booked& w) { return w.end >= end; });
  if (it != windows_.end() && it->end == end) return *it;
  booked w;
  w.end = end;
  w.cap = per_window_;
  w.used = taken_between(end - window_, end);
  w.next = end - window_;
  return *windows_.insert(it, w);
}

void quota_pacer::withdraw_after(clock::time_point now) {
  const auto before = taken_.size();
  taken_.erase(std::remove_if(taken_.begin(), taken_.end(), [&](clock::time_point t) { return t > now; }), taken_.end());
  if (taken_.size() != before) ++epoch_;
  for (auto& w : windows_) {
    w.used = taken_between(w.end - window_, w.end);
    w.next = std::max(w.end - window_, now);
  }
}

void quota_pacer::read(const quota_reading& given, clock::time_point sent, clock::time_point now) {
  if (given.reset_in.count() <= 0) return;  // nothing said of time: nothing to hold
  // Times a server may say (up to 10^15 s) bounded before any sum: no overflow, and a window of
  // more than a year paces like one of a year (max_wait bounds every wait anyway).
  constexpr milliseconds longest = std::chrono::hours(24 * 400);
  quota_reading q = given;
  q.reset_in = std::min(q.reset_in, longest);
  if (q.window) q.window = std::min(*q.window, longest);
  auto reset = std::chrono::duration_cast<clock::duration>(q.reset_in);
  // A whole number of seconds from now is rounded up by the server: the window ends somewhere in
  // the last second, taken as its middle (ending early costs a pause, ending late a 429).
  if (!q.exact && q.reset_in.count() % 1000 == 0) reset -= milliseconds(500);
  auto end = now + reset;

  if (q.window) {
    window_ = *q.window;
    window_said_ = true;
  } else if (!window_said_ && last_reading_end_ && window_.count() > 0 && end > *last_reading_end_ + window_ / 2) {
    // A reading of the next window: the windows are as long as their ends are apart.
    window_ = end - *last_reading_end_;
    window_said_ = true;
  }
  if (window_.count() <= 0) window_ = std::max<clock::duration>(seconds(1), std::chrono::ceil<seconds>(q.reset_in));
  last_reading_end_ = end;

  // Is `end` one of the windows' ends as held? Else the grid moves to it (and the times handed
  // out in windows that are no more are withdrawn).
  const auto tolerance = std::min<clock::duration>(window_ / 4, q.exact ? clock::duration(milliseconds(20))
                                                                        : clock::duration(milliseconds(600)));
  const auto held_end = end_after(end - window_ / 2);
  const auto off = held_end > end ? held_end - end : end - held_end;
  if (windows_.empty() && per_window_ == 0) {
    anchor_ = end;
  } else if (off > tolerance) {
    anchor_ = end;
    windows_.clear();
    withdraw_after(now);
  } else {
    end = held_end;  // the window as held is the one this reading speaks of
  }

  const auto ours_until_sent = taken_between(end - window_, sent);
  limit_ = q.limit && *q.limit > 0 ? *q.limit : std::max(limit_, ours_until_sent + q.remaining);
  per_window_ = std::max<std::int64_t>(1, limit_ - quota_margin(limit_));

  // The window this reading speaks of: what this process had sent there when the answered request
  // went out, and what the API says remains.
  auto& w = window_at(end - clock::duration(1));
  w.cap = std::max<std::int64_t>(0, std::min(per_window_, ours_until_sent + q.remaining));
  if (w.used > w.cap) withdraw_after(now);  // more times handed out there than it has room for
  for (auto& later : windows_)
    if (later.end > w.end) later.cap = per_window_;
}

quota_pacer::clock::time_point quota_pacer::take(clock::time_point earliest, clock::time_point now) {
  if (!pacing()) {
    while (!taken_.empty() && (taken_.front() < now - unpaced_memory || taken_.size() >= unpaced_most)) taken_.pop_front();
    taken_.push_back(earliest);
    return earliest;
  }
  // Windows and times that are past: only the last two windows' times are ever counted.
  while (windows_.size() > 1 && windows_.front().end <= now) windows_.pop_front();
  while (!taken_.empty() && taken_.front() <= now - 2 * window_) taken_.pop_front();

  // Waiting one's turn behind others is no wait the API asks for: max_wait bounds what the quota
  // adds to it (the spacing, the wait for the next window), not the queue.
  auto t = earliest;
  for (int hops = 0; hops < 1000; ++hops) {
    auto& w = window_at(t);
    t = std::max(t, w.next);  // at most max_wait after the last time handed out there
    if (t >= w.end) continue;  // the next window
    if (w.used >= w.cap) {
      const auto from = std::max(last_, earliest);
      if (w.end - from > max_wait_) {  // none left until a reset further than allowed: go at the cap
        t = std::max(t, from + max_wait_);
        break;
      }
      t = w.end;  // none left here: the next window's start
      continue;
    }
    // What is left of the window spread evenly to its end.
    const auto left = w.cap - w.used;
    w.next = t + std::min<clock::duration>((w.end - t) / left, max_wait_);
    ++w.used;
    break;
  }
  taken_.insert(std::upper_bound(taken_.begin(), taken_.end(), t), t);
  last_ = std::max(last_, t);
  return t;
}

}  // namespace dibs::http
