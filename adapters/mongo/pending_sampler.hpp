// The pre-flight's read of one open document (admin_store::sample_pending), without claiming it.
#pragma once

#include <dibs/admin_store.hpp>

#include <optional>

namespace dibs::mongo {

struct store_context;
struct field_names;

// One open document (target null, not failed), preferably one whose source field is a string;
// nullopt when none is open. Throws mongo_error when the server can't be read.
std::optional<pending_sample> sample_open_document(store_context& ctx);
// Up to `n` of them (a dry run's), the same way.
std::vector<pending_sample> sample_open_documents(store_context& ctx, std::size_t n);
// One document as a sample: its id, source and more fields, its names.
pending_sample sampled_document(const bson_t* doc, const field_names& f);

}  // namespace dibs::mongo
