// Reading values out of BSON documents and replies by (dotted) path, the few ways the store needs.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/ids.hpp>

#include <dibs/job.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace dibs::mongo {

// A numeric field of a command reply, 0 when absent.
std::int64_t reply_int(const bson_t* reply, const char* key);
// A type's name as users know it ("string", "int32", "objectId"...), for messages.
const char* type_name(bson_type_t t);
std::optional<owned_id> doc_id(const bson_t* doc);
// The field at `path` as the engine sees it: a string, missing, or another type (named).
job_field read_field(const bson_t* doc, const std::string& path);
int read_int(const bson_t* doc, const std::string& path, int fallback);
// Whether `path` exists (and, with `non_null`, is not null).
bool has_path(const bson_t* doc, const std::string& path, bool non_null = false);
std::optional<std::int64_t> read_i64(const bson_t* doc, const std::string& path);
std::string read_str(const bson_t* doc, const std::string& path);

}  // namespace dibs::mongo
