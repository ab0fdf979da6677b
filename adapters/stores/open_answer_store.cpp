#include "open_answer_store.hpp"

#include <dibs/stores/shared_records.hpp>

namespace dibs {

std::shared_ptr<answer_store> open_answer_store(const std::shared_ptr<admin_store>& st) {
  const auto records = std::dynamic_pointer_cast<shared_records>(st);
  return records ? records->open_answers() : nullptr;
}

}  // namespace dibs
