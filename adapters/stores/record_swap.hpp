// A change to one of dibs's own records (own_records.hpp) made as every process makes it: read
// the record and the store's now, decide, write only if no other process wrote in between, and
// read again when one did. No record is locked across round trips, so a process frozen between
// its read and its write (SIGSTOP, a paused VM, a lost link) holds no other process back.
#pragma once

#include <dibs/stores/own_records.hpp>

#include <stdexcept>
#include <string>

namespace dibs {

// decide(const record_read&) gives the numbers to write (std::nullopt: nothing to write); returns
// what the deciding read saw.
template <class Decide>
record_read swap_record(record_table& t, const std::string& key, Decide decide) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const auto seen = t.read(key);  // a record holds every number of its kind (own_records.hpp)
    const std::optional<std::vector<std::int64_t>> next = decide(seen);
    if (!next) return seen;
    std::optional<std::vector<std::int64_t>> was;
    if (seen.record) was = seen.record->numbers;
    if (t.swap(key, was, *next)) return seen;
  }
  throw std::runtime_error("the record of " + key + " kept changing under 100 tries");
}

}  // namespace dibs
