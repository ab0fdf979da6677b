// The pre-flight's read of one open document (admin_store::sample_pending), without claiming it.
#pragma once

#include <dibs/admin_store.hpp>

#include <optional>

namespace dibs::mongo {

struct store_context;

// One open document (target null, not failed), preferably one whose source field is a string;
// nullopt when none is open. Throws mongo_error when the server can't be read.
std::optional<pending_sample> sample_open_document(store_context& ctx);

}  // namespace dibs::mongo
