// Reasons (why an item failed or was retried) are written into the store next to the item, and
// they may quote what an API said: an ip-api `message` of 70 KB would not fit MySQL's TEXT column,
// and its write would be refused. Every reason the engine records is bounded here, cut on a UTF-8
// character boundary so that the shortened text is still valid UTF-8.
#pragma once

#include <cstddef>
#include <string>

namespace dibs {

// The longest reason the engine records, in bytes (docs/guarantees.md says so).
inline constexpr std::size_t max_reason_bytes = 1000;

// `why` itself when it fits in `max` bytes; otherwise its head and " ... (N bytes cut)", the whole
// at most `max` bytes (for max >= 32).
inline std::string bounded_reason(std::string why, std::size_t max = max_reason_bytes) {
  if (why.size() <= max) return why;
  const std::string tail_format = " ... (" + std::to_string(why.size()) + " bytes cut)";
  std::size_t keep = max > tail_format.size() ? max - tail_format.size() : 0;
  // Back up to the start of a character: continuation bytes are 10xxxxxx.
  while (keep > 0 && (static_cast<unsigned char>(why[keep]) & 0xC0) == 0x80) --keep;
  const std::size_t cut = why.size() - keep;
  why.resize(keep);
  why += " ... (" + std::to_string(cut) + " bytes cut)";
  return why;
}

// What a store records for an item its claim fails at claim_request::max_attempts (store.hpp):
// claimed that many times, and the last lease ran out before any outcome was written.
// The text is in two pieces around the count, so that a store that writes it in SQL (one
// statement for a whole claim) spells it exactly as the others do.
inline constexpr const char* exhausted_attempts_head = "gave up after ";
inline constexpr const char* exhausted_attempts_tail =
    " attempts: the last lease ran out before any outcome was written (its worker stopped, stalled or lost the "
    "store)";
inline std::string exhausted_attempts_reason(int attempts) {
  return exhausted_attempts_head + std::to_string(attempts) + exhausted_attempts_tail;
}

}  // namespace dibs
