#include "running_calls.hpp"

namespace dibs {

void running_calls::arm_deadline(std::uint64_t id) {
  if (max_processing_.count() <= 0) return;
  auto it = calls_.find(id);
  if (it == calls_.end() || it->second.finished || it->second.abandoned) return;
  // A further request of the same call (a batch's half or part, sent after the whole was refused)
  // has its time from its own start: the call's clock starts again (the wait armed before ends).
  if (it->second.deadline)
    it->second.deadline->expires_after(max_processing_);
  else
    it->second.deadline = std::make_unique<net::steady_timer>(ioc_, max_processing_);
  it->second.deadline->async_wait([this, id](boost::system::error_code ec) {
    if (ec) return;  // disarmed, or its call erased: `this` is not touched
    auto c = calls_.find(id);
    if (c == calls_.end() || c->second.finished) return;
    c->second.abandoned = true;
    c->second.signal.emit(net::cancellation_type::terminal);
  });
}

bool running_calls::abandoned(std::uint64_t id) const {
  const auto it = calls_.find(id);
  return it != calls_.end() && it->second.abandoned;
}

void running_calls::finished(std::uint64_t id) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return;
  it->second.finished = true;
  if (it->second.deadline) it->second.deadline->cancel();
}

void running_calls::cancel_all() {
  for (auto& [id, c] : calls_)
    if (!c.finished) c.signal.emit(net::cancellation_type::terminal);
}

}  // namespace dibs
