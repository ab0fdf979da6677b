// The pre-flight's read of open documents (admin_store::sample_pending_items), without claiming them.
#pragma once

#include <dibs/admin_store.hpp>

#include <cstddef>
#include <optional>
#include <vector>

namespace dibs::mongo {

struct store_context;
struct field_names;

// Up to `n` open documents (target null, not failed), those whose source field is a string first
// (the others only when there are none such). Throws mongo_error when the server can't be read.
std::vector<pending_sample> sample_open_documents(store_context& ctx, std::size_t n);
// One done document (its target set) whose source is a string; nullopt when none is done.
std::optional<pending_sample> sample_done_document(store_context& ctx);

}  // namespace dibs::mongo
