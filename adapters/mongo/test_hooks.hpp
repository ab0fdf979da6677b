// What tests, the chaos driver and the bench do to a MongoDB store's collection beside the engine's
// protocol: drop it, read documents back, run a command. Not part of the store's interface (the
// CLI has no use for them); they go through the store's own connection.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <dibs/stores/mongo_store.hpp>

#include <optional>
#include <string>
#include <vector>

namespace dibs::mongo {

// Drops the collection and its lock collection, then recreates the indexes (when the store was
// opened with create_indexes).
void drop(mongo_store& s);
// A document by its id text, as canonical extended JSON ("" when absent).
std::string document_json(mongo_store& s, const std::string& id);
// The target field of a document as relaxed JSON, nullopt when null or absent.
std::optional<std::string> target_json(mongo_store& s, const std::string& id);
// Every document of the collection (small collections only).
std::vector<bson_ptr> documents(mongo_store& s);
// Runs a command on the store's database and returns its reply as canonical extended JSON.
// Throws mongo_error when the server answers with an error.
std::string run_command(mongo_store& s, const std::string& json_command);

}  // namespace dibs::mongo
