// What file mode's pieces (jsonl_store.cpp, jsonl_output.cpp) say of IN and of a file they
// can't use: which lines are items, the journal header IN's size and time make, and the error
// that names a file and the system's reason.
#pragma once

#include <adapters/jsonl/input_digest.hpp>
#include <adapters/jsonl/journal_format.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/stat.h>

namespace dibs::jsonl {

[[noreturn]] inline void fail_file(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

// A blank line of IN is no item (and no line of OUT).
inline bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

// The journal's header for IN as stat(2) found it: a journal for another IN is refused.
inline std::string header_of(const struct stat& in) {
  return journal_header(static_cast<std::uint64_t>(in.st_size),
                        static_cast<std::int64_t>(in.st_mtim.tv_sec) * 1'000'000'000LL + in.st_mtim.tv_nsec);
}

// Whether IN is, byte for byte, the input a journal's header recorded (its size and its content's
// SHA-256) under another time: touched, copied without its time. An IN grown by lines is not: a
// resumed run would journal the new lines under a header that still names the old size, and a
// later change of them would go unseen (answers on the wrong lines).
inline same_content_fn same_content_of(const std::string& in) {
  return [in](const recorded_input& r) {
    struct stat st {};
    return ::stat(in.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) == r.size &&
           input_prefix_sha256(in, r.size) == r.sha256;
  };
}

}  // namespace dibs::jsonl
