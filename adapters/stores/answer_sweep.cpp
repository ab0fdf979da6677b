#include "answer_sweep.hpp"

#include "open_answer_store.hpp"

namespace dibs {

std::optional<std::uint64_t> remove_expired_answers(const std::shared_ptr<admin_store>& st, std::chrono::milliseconds older_than) {
  const auto records = std::dynamic_pointer_cast<own_records>(st);
  if (!records) return std::nullopt;
  return records->open_records(answers_kind)->remove_older(older_than);
}

}  // namespace dibs
