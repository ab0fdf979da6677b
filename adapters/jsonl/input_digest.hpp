// The SHA-256 of an input's bytes, as a journal records it: the journal's lines are the input's
// by number, so a journal goes on with the same bytes under another time (touched, copied
// without its time), and with no other input.
#pragma once

#include <cstdint>
#include <string>

namespace dibs::jsonl {

// Lowercase hex of the SHA-256 of the first `size` bytes of the file at `path`; "" when the file
// can't be read or is shorter.
std::string input_prefix_sha256(const std::string& path, std::uint64_t size);

}  // namespace dibs::jsonl
