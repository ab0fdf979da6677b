// The done rows whose answer is the API's "no data" (admin_store::no_data_count): a target whose
// top-level "status" is "fail". A target column that holds something else than JSON makes the
// server refuse the question: not counted then.
#include "pg_store.hpp"

#include <stdexcept>
#include <string>

namespace dibs::pg {

std::optional<std::uint64_t> pg_store::no_data_count() {
  const auto& n = names();  // plain names (check_names): quoted as they are
  try {
    const auto v = query_value("SELECT count(*) FROM \"" + n.table + "\" WHERE (\"" + n.target + "\"::jsonb)->>'status' = 'fail'");
    return v ? std::stoull(*v) : 0;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace dibs::pg
