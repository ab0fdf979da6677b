#include "open_shared_rate.hpp"

#include <dibs/stores/shared_records.hpp>

namespace dibs {

shared_rate_opening open_shared_rate(const std::shared_ptr<admin_store>& st) {
  if (const auto records = std::dynamic_pointer_cast<shared_records>(st)) return {records->open_shared_rate()};
  return {nullptr, "a file is worked on by one process at a time", true};
}

}  // namespace dibs
