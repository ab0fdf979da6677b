#include "lease_keeper.hpp"

#include "fenced_batches.hpp"
#include "store_context.hpp"

namespace dibs::mongo {

write_result lease_keeper::complete(const std::vector<completion>& batch) {
  write_result res;
  const auto parsed = parse_completions(batch, res);
  if (parsed.items.refs.empty()) return res;
  const store_session db(ctx_);
  write_completions(batch, parsed, db, res);
  return res;
}

}  // namespace dibs::mongo
