// dibs's own records in a store, beside the user's items: what every process that works on the
// store shares (the shared rate, the call budget, the answers kept). A store keeps them in small
// tables (collections) of dibs's, one a kind of record, and offers only the few primitives below;
// each feature is written once over them (adapters/stores/record_*.cpp), so a new feature is one
// file, not one class per store. A capability, found with
// std::dynamic_pointer_cast<own_records>(store): MySQL/MariaDB, PostgreSQL and MongoDB have it; a
// JSON Lines file keeps none (one process works on it).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dibs {

// A kind of record: where it is kept and what it holds. The names are dibs's own constants,
// never a user's words (they are written into statements as they are).
struct record_kind {
  std::string table;                  // "dibs_budget": a table, or a collection
  std::string key;                    // the key's column ("budget_key"; MongoDB keeps it in _id)
  std::vector<std::string> numbers;   // 64-bit integer columns, 0 where missing
  std::vector<std::string> texts;     // text columns (UTF-8)
  std::string stamp;                  // a column stamped with the store's clock at each write; "" none
};

struct own_record {
  std::string key;
  std::vector<std::int64_t> numbers;  // one a kind's number, in its order
  std::vector<std::string> texts;     // one a kind's text, in its order
  std::chrono::microseconds age{0};   // since the stamp, by the store's clock (kinds with one)
};

// What a read sees: the record (none yet) and the store's clock when it was read.
struct record_read {
  std::optional<own_record> record;
  std::int64_t now_us = 0;  // microseconds since the epoch, by the store's clock
};

// One kind's records. Blocking calls, each one statement (command) or a few: a process runs them
// on a thread of its own, never on a shard. A put waits 2 s at most for a lock (PostgreSQL bounds
// every statement so); each call throws the store's error when the store can't be reached or
// refuses.
class record_table {
 public:
  virtual ~record_table() = default;
  virtual record_read read(const std::string& key) = 0;
  // Sets the numbers of `key` to `next` if they still are `seen` (nullopt: there is no record
  // yet), stamping the record: false when another process wrote first (read again, decide again).
  virtual bool swap(const std::string& key, const std::optional<std::vector<std::int64_t>>& seen,
                    const std::vector<std::int64_t>& next) = 0;
  // Writes each record whole, replacing what its key held, stamped now; as few statements as the
  // store allows. A record too large for any statement the store takes is left out (false).
  virtual bool put(const std::vector<own_record>& records) = 0;
  // Every record, by key.
  virtual std::vector<own_record> list() = 0;
  // Removes the records stamped more than `age` ago (kinds with a stamp): how many.
  virtual std::uint64_t remove_older(std::chrono::microseconds age) = 0;
};

class own_records {
 public:
  virtual ~own_records() = default;
  // `kind`'s records, its table (collection) created when missing unless `create` is false (a
  // reader such as dibs status: then a missing table is the store's error at the first call). The
  // table keeps the store alive, so the store must be owned by a std::shared_ptr (open_store's
  // stores are); on a store owned otherwise this throws std::bad_weak_ptr.
  virtual std::shared_ptr<record_table> open_records(const record_kind& kind, bool create = true) = 0;
};

}  // namespace dibs
