// A request's tokens on an API metered in tokens (token_meter.hpp): admitted before it goes,
// settled by its answer. What the answer means for the bucket is decided here, without a network
// (tests/unit/test_token_meter.cpp):
//   - a 2xx with usage: settled with it (and the estimate learns from it); without usage, the
//     reservation stands (erring full);
//   - a 4xx or 5xx (a 429, 529, 400...): the provider charged nothing, all of it goes back;
//   - no answer: never sent, all of it goes back; sent and lost (a timeout), it stands;
// and the bucket the headers state (OpenAI's, Azure's, Anthropic's tokens) is read in.
#pragma once

#include "adapters/http/rate/shared_tokens.hpp"
#include "adapters/http/rate/token_meter.hpp"

#include <dibs/http/client.hpp>
#include <dibs/net.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace dibs::http {

// Held from admission to settlement: dropped unsettled (the call was cancelled), its tokens go back.
class token_ticket {
 public:
  token_ticket() = default;
  token_ticket(token_meter* m, token_meter::admitted a) : meter_(m), a_(a) {}
  token_ticket(token_ticket&& o) noexcept
      : meter_(std::exchange(o.meter_, nullptr)), shared_(std::exchange(o.shared_, nullptr)), a_(o.a_), written_(o.written_) {}
  token_ticket& operator=(token_ticket&& o) noexcept {
    if (this != &o) {
      drop();
      meter_ = std::exchange(o.meter_, nullptr);
      shared_ = std::exchange(o.shared_, nullptr);
      a_ = o.a_;
      written_ = o.written_;
    }
    return *this;
  }
  ~token_ticket() { drop(); }
  explicit operator bool() const { return meter_ != nullptr; }
  // Its tokens were taken from the shared tokens too: settled there as well.
  void taken_from(shared_tokens* s) { shared_ = s; }
  // Its request is written now, on a kept-alive connection (`reused`: the server reads it at
  // once) or a new one (read once the server accepts the connection: token_meter::written).
  void written(bool reused);
  // Settles it by `r`, the answer to its request of `body_bytes`; returns the usage it said.
  token_usage settle(const response& r, std::size_t body_bytes);
  std::int64_t tokens() const { return a_.tokens; }

 private:
  // Settles the meter and the shared tokens alike (token_meter::settle's `used`).
  void settle_used(std::int64_t used, bool answered = false);
  void drop() {
    if (meter_) settle_used(0);
  }
  token_meter* meter_ = nullptr;
  shared_tokens* shared_ = nullptr;  // taken from it too (rate_scope store with a token rate)
  token_meter::admitted a_;
  token_meter::clock::time_point written_{};  // when its request went out (its admission until then)
};

// What a request of `body` will be charged (its mix of input and output noted: note_charge); nullopt when the meter neither holds a limit nor
// watches for one (token_meter::watching). `max_out`: the body's max_output_tokens, read once by
// a caller that needs it more than once (the body-only form reads it).
std::optional<std::int64_t> token_charge(token_meter& m, std::size_t body_bytes, std::optional<std::int64_t> max_out);
std::optional<std::int64_t> token_charge(token_meter& m, const std::string& body);

// The least a request of `body` can be charged: its max_tokens and its prompt at 4 bytes a token
// (a learned estimate may be far higher after one dense answer): what decides "too large".
std::int64_t least_token_charge(std::size_t body_bytes, std::optional<std::int64_t> max_out);
std::int64_t least_token_charge(const std::string& body);

// Why a request of `body_bytes` asking at most `max_out` output tokens is never admitted (at its
// least, 4 bytes a token: more than the whole limit, or, with input and output apart, a part
// more than its own bucket), or "" when it may be.
std::string never_admitted(const token_meter& m, std::size_t body_bytes, std::optional<std::int64_t> max_out);

// "needs about N tokens ..., more than the whole limit": why a request larger than the bucket
// is never sent.
std::string too_large_for_limit(std::int64_t charge, std::int64_t capacity);

// Waits until the bucket holds `charge` tokens and takes them, and then (with `shared`) until
// the store's schedule of every process's tokens has them too.
awaitable<token_ticket> take_tokens(token_meter& m, std::int64_t charge, shared_tokens* shared = nullptr);

// Reads the token bucket an answer's headers state into `m`, for a request admitted at `sent`;
// an answer that states neither a limit nor a usage (`usage_said`) counts toward not watching.
void read_token_headers(token_meter& m, const response& r, std::chrono::steady_clock::time_point sent, bool usage_said);

}  // namespace dibs::http
