// The SHA-256 of an input's first bytes, as a journal records it: the journal's lines are the
// input's by number, so a journal goes on with an input whose first `size` bytes are still the
// ones it was made for (touched, copied without its time, grown by lines appended), and with no
// other.
#pragma once

#include <cstdint>
#include <string>

namespace dibs::jsonl {

// Lowercase hex of the SHA-256 of the first `size` bytes of the file at `path`; "" when the file
// can't be read or is shorter.
std::string input_prefix_sha256(const std::string& path, std::uint64_t size);

}  // namespace dibs::jsonl
