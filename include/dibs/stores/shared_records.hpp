// What a store can keep for every process that works on it, beside its items: the API's answers
// (reuse_answers store), the shared rate's record (rate_scope store) and the call budget
// (budget). A capability, found
// with std::dynamic_pointer_cast<shared_records>(store): callers need not know the store's type,
// and a new store that keeps them says so by deriving from it. MySQL/MariaDB and PostgreSQL keep
// them in the tables dibs_answers and dibs_rate, MongoDB in collections of those names; a JSON
// Lines file keeps neither (one process works on it).
#pragma once

#include <memory>

namespace dibs {

class answer_store;       // the answers kept (internal to dibs)
class shared_rate_store;  // the shared rate's record (internal to dibs)
class budget_store;       // the call budget's records (internal to dibs)

class shared_records {
 public:
  virtual ~shared_records() = default;
  // Each creates its table (collection) on first use and throws the store's error when it can't.
  // The records keep the store alive, so it must be owned by a std::shared_ptr (open_store's
  // stores are); on a store owned otherwise they throw std::bad_weak_ptr.
  virtual std::shared_ptr<answer_store> open_answers() = 0;
  virtual std::shared_ptr<shared_rate_store> open_shared_rate() = 0;
  // budget N/day: the calls every process took, in dibs_budget (created on the first take).
  virtual std::shared_ptr<budget_store> open_budget() = 0;
};

}  // namespace dibs
