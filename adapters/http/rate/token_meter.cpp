#include "token_meter.hpp"

#include <algorithm>
#include <cmath>

namespace dibs::http {

token_meter::token_meter(double per_minute) {
  if (per_minute > 0) {
    given_ = per_minute;
    per_minute_.store(per_minute, std::memory_order_relaxed);
  }
}

void token_meter::give_limit(double per_minute) {
  std::lock_guard lock(mutex_);
  given_ = per_minute > 0 ? per_minute : 0;
  if (given_ > 0) per_minute_.store(given_, std::memory_order_relaxed);
}

token_meter::clock::duration token_meter::per_token() const {
  const double pm = per_minute_.load(std::memory_order_relaxed);
  return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(60.0 / pm));
}

void token_meter::set_limit(double per_minute, clock::time_point now) {
  const double now_limit = per_minute_.load(std::memory_order_relaxed);
  const double next = given_ > 0 ? std::min(given_, per_minute) : per_minute;
  if (!(next > 0) || next == now_limit) return;
  if (now_limit > 0) {
    // The deficit, in tokens, carries over to the new rate.
    if (tat_ > now) {
      const double deficit = std::chrono::duration<double>(tat_ - now).count() * now_limit / 60.0;
      tat_ = now + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(deficit * 60.0 / next));
    }
  }
  per_minute_.store(next, std::memory_order_relaxed);
}

token_meter::take_result token_meter::try_take(std::int64_t tokens, clock::time_point now) {
  take_result out;
  std::lock_guard lock(mutex_);
  tokens = std::max<std::int64_t>(tokens, 0);
  if (!active()) {
    tokens = std::min<std::int64_t>(tokens, std::int64_t{1} << 40);  // an absurd max_tokens stays a number
    // No limit known yet: admitted, and remembered, so that the first reading knows what this
    // process sent that the server may not have seen yet.
    out.ticket = admitted{next_id_++, tokens, now};
    unsettled_.push_back({out.ticket->id, now, tokens});
    own_net_ += static_cast<double>(tokens);
    return out;
  }
  const auto t = per_token();
  const auto cap = capacity();
  tokens = std::min(tokens, 4 * cap);  // more is refused before (too large); kept from overflowing here
  // Admitted when the bucket holds `tokens` and a margin of 1% of it: its deficit (tat - now)
  // leaves room for them. The margin is a level kept, not throughput lost: it absorbs an estimate
  // a few tokens short and a request that reaches the server a few ms before it refilled (seen:
  // 0.6% of calls refused "try again in 1ms" without it).
  const auto margin = std::max<std::int64_t>(cap / 100, 1);
  const auto ready = tat_ - std::max<std::int64_t>(cap - tokens - margin, 0) * t;
  if (now < ready) {
    out.retry_at = ready;
    return out;
  }
  // Other processes on the key take their shares as this one takes its own: what it takes counts
  // in its bucket for the whole key's (1/share), so N processes that read the same remaining take
  // it once between them, not N times.
  tat_ = std::max(tat_, now) + std::chrono::duration_cast<clock::duration>(tokens * t / share_);
  own_net_ += static_cast<double>(tokens);
  out.ticket = admitted{next_id_++, tokens, now};
  unsettled_.push_back({out.ticket->id, now, tokens});
  // A ticket never settled (its holder gone without a word) is forgotten after two minutes.
  while (!unsettled_.empty() && now - unsettled_.front().at > std::chrono::minutes(2)) unsettled_.pop_front();
  return out;
}

std::deque<token_meter::in_flight>::iterator token_meter::unsettled_of(const admitted& a) {
  // Admitted in the order of their ids, and kept in it: a search, not a scan of every request
  // in flight (twice a request: written, settled).
  const auto it = std::lower_bound(unsettled_.begin(), unsettled_.end(), a.id,
                                   [](const in_flight& f, std::uint64_t id) { return f.id < id; });
  return it != unsettled_.end() && it->id == a.id ? it : unsettled_.end();
}

void token_meter::written(const admitted& a, clock::time_point at, bool reused) {
  std::lock_guard lock(mutex_);
  const auto it = unsettled_of(a);
  if (it == unsettled_.end()) return;
  it->written = at;
  it->fresh = !reused;
}

void token_meter::settle(const admitted& a, std::int64_t used, clock::time_point now, bool answered) {
  if (used > 0) used_total_.fetch_add(static_cast<std::uint64_t>(used), std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  const auto it = unsettled_of(a);
  auto written = a.at;
  if (it != unsettled_.end()) {
    written = it->written;
    // Answered on a new connection: the server accepted the connections opened before it. (Not
    // a connection it dropped unanswered: that one says the opposite.)
    if (answered && it->fresh) accepted_to_ = std::max(accepted_to_, written);
    unsettled_.erase(it);
  }
  if (!active() || used < 0) return;
  used = std::min(used, 4 * capacity());  // an answer's absurd usage stays within what time repays
  const auto t = per_token();
  tat_ = std::max(tat_, now);
  const auto back = std::min(a.tokens, 4 * capacity()) - used;  // > 0: reserved more than used
  own_net_ -= static_cast<double>(back);
  if (back < 0) {
    tat_ += (-back) * t;
  } else if (written > newest_read_) {
    // A reading of a request written before this one may hold its settling already (the server
    // settles before it answers): given back twice, it would be sent twice. Only what no
    // reading has seen goes back.
    tat_ = std::max(now, tat_ - back * t);
  }
}

void token_meter::read(std::int64_t remaining, std::optional<std::int64_t> limit, clock::time_point sent,
                       clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (limit && *limit > 0) {
    stated_ = static_cast<double>(*limit);
    set_limit(stated_, now);
  }
  if (!active() || sent < newest_read_) return;  // an older view than one read already
  newest_read_ = sent;
  // What the server has not seen: this process's requests written after the one read, those on
  // a new connection the server may not have accepted yet (written()), and those admitted and not
  // written yet, however long ago admitted (waiting for a rate slot or a connection: taken for
  // seen, 4 processes bursting on an API that accepts every connection at once had 24-102 calls
  // refused as the first minute's bucket ran out).
  std::int64_t pending = 0, unwritten = 0;
  for (const auto& f : unsettled_) {
    const auto seen_by = f.fresh ? std::min(sent, accepted_to_) : sent;  // written at or before: seen
    if (f.written > seen_by) pending += f.tokens;
    if (f.written == clock::time_point::max()) unwritten += f.tokens;
  }
  const auto t = per_token();
  const auto cap = capacity();
  // The server's deficit, in its own bucket's tokens (the stated limit's, or ours when it states none).
  const auto server_cap = stated_ > 0 ? static_cast<std::int64_t>(stated_) : cap;
  const auto deficit = std::min(std::max<std::int64_t>(server_cap - std::max<std::int64_t>(remaining, 0), 0) + pending, 4 * cap);
  // This process's share of what the key spends: its own net spending (admitted, less what came
  // back) over the server's (its deficit's growth plus the refill), across the last second of
  // readings. Without it, N processes that each read the same remaining each took all of it:
  // 12-29% of calls refused with 4 processes on one key.
  const auto server_deficit = static_cast<double>(std::max<std::int64_t>(server_cap - std::max<std::int64_t>(remaining, 0), 0));
  window_.push_back({now, server_deficit, own_net_ - static_cast<double>(unwritten)});
  while (window_.size() > 2 && now - window_[1].at >= std::chrono::seconds(1)) window_.pop_front();
  const auto& first = window_.front();
  const double span = std::chrono::duration<double>(now - first.at).count();
  const double spent = server_deficit - first.deficit + span * per_minute() / 60.0;
  if (span >= 0.1 && spent > static_cast<double>(cap) / 200)
    share_ = std::clamp((window_.back().own - first.own) / spent, 0.05, 1.0);
  if (given_ > 0 && stated_ > given_) {
    // The user's limit is below the server's: the server's count may only hold this process
    // back (other clients on the key), never let it past its own.
    tat_ = std::max(tat_, now + deficit * t);
  } else {
    tat_ = now + deficit * t;
  }
}

void token_meter::note_charge(std::int64_t total, std::int64_t output) {
  if (total <= 0 || output < 0) return;
  const double share = std::clamp(static_cast<double>(total - output) / static_cast<double>(total), 0.0, 1.0);
  const double was = input_share_.load(std::memory_order_relaxed);
  // The last few dozen requests' mix (a race between two writers loses one request's say).
  input_share_.store(was == 0 ? share : was + (share - was) / 32, std::memory_order_relaxed);
}

void token_meter::answered_unmetered() {
  if (!active()) unmetered_answers_.fetch_add(1, std::memory_order_relaxed);
}

std::int64_t token_meter::level(clock::time_point now) const {
  std::lock_guard lock(mutex_);
  if (!active()) return 0;
  if (tat_ <= now) return capacity();
  const auto deficit = static_cast<std::int64_t>(std::ceil(std::chrono::duration<double>(tat_ - now).count() * per_minute() / 60.0));
  return std::max<std::int64_t>(capacity() - deficit, 0);
}

}  // namespace dibs::http
