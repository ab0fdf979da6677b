// The shared rate's record (`rate_scope store`; shared_rate_store.hpp) over the store's own
// records (own_records.hpp): one record an API origin in dibs_rate, {tat_us, paused_until_us},
// moved on by rate_bucket.hpp's arithmetic at the store's clock.
#include "open_shared_rate.hpp"

#include "record_swap.hpp"

#include "engine/src/rate_bucket.hpp"

namespace dibs {

namespace {
const record_kind rate_kind{"dibs_rate", "origin", {"tat_us", "paused_until_us"}, {}, ""};

rate_bucket_state state_of(const record_read& r) {
  if (!r.record) return {};
  return {r.record->numbers[0], r.record->numbers[1]};
}

class record_shared_rate final : public shared_rate_store {
 public:
  explicit record_shared_rate(std::shared_ptr<record_table> t) : table_(std::move(t)) {}

  rate_block take_block(const rate_block_request& r) override {
    rate_block out;
    swap_record(*table_, r.origin, [&](const record_read& seen) {
      const auto g = grant_block(state_of(seen), seen.now_us, r.want, r.interval.count(), r.saved.count());
      out = g.block;
      return std::optional(std::vector<std::int64_t>{g.next.tat_us, g.next.paused_until_us});
    });
    return out;
  }

  void pause(const std::string& origin, std::chrono::microseconds for_) override {
    swap_record(*table_, origin, [&](const record_read& seen) {
      const auto s = state_of(seen), next = pause_bucket(s, seen.now_us, for_.count());
      if (seen.record && next.paused_until_us == s.paused_until_us) return std::optional<std::vector<std::int64_t>>();
      return std::optional(std::vector<std::int64_t>{next.tat_us, next.paused_until_us});
    });
  }

  std::chrono::microseconds paused_for(const std::string& origin) override {
    const auto seen = table_->read(origin);
    return std::chrono::microseconds(paused_for_us(state_of(seen), seen.now_us));
  }

 private:
  std::shared_ptr<record_table> table_;
};
}  // namespace

shared_rate_opening open_shared_rate(const std::shared_ptr<admin_store>& st) {
  if (const auto records = std::dynamic_pointer_cast<own_records>(st))
    return {std::make_shared<record_shared_rate>(records->open_records(rate_kind))};
  return {nullptr, "a file is worked on by one process at a time", true};
}

}  // namespace dibs
