// What a MongoDB bulk write's reply says about each of its statements, read without a server.
//
// A fenced write that matched nothing lost its lease; a statement the server answered with a
// write error (a $jsonSchema validator saying no: 121 DocumentValidationFailure; a document grown
// past 16 MB: 10334 BSONObjectTooLarge / 17419; ...) was refused for what it carries: nothing was
// written, the lease still holds, and sending it again would be refused again. Counting such a
// statement as a lost lease would leave the document leased, claimed again after the lease, and
// refused again, forever, and hide the server's reason. So the reply's writeErrors are read here,
// per statement index, and the lost-lease count is what is left once they are set aside.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>

#include <dibs/job.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dibs::mongo {

struct write_error {
  std::size_t index = 0;  // the statement's index in the bulk write, as sent
  std::int64_t code = 0;
  std::string code_name;  // the server's codeName when it sent one, else a known name, else ""
  std::string errmsg;
  std::string details;    // errInfo as relaxed JSON (a validator's failing rules), shortened; "" when none
};

// The writeErrors of a bulk write's reply (mongoc's merged reply: {nMatched, nModified, ...,
// writeErrors: [{index, code, errmsg, errInfo?}], writeConcernErrors: [...]}).
std::vector<write_error> write_errors_of(const bson_t* reply);

// A short text naming the server's refusal: "MongoDB refused the write: code 121
// (DocumentValidationFailure): Document failed validation; details: {...}". Never longer than
// `max_len` bytes (the reason is stored with the failed document and logged).
std::string refusal_reason(const write_error& e, std::size_t max_len = 600);

// The verdict on one bulk write of `statements` fenced statements.
struct bulk_verdict {
  std::int64_t matched = 0;                // statements whose filter matched (the lease held)
  std::int64_t upserted = 0;               // statements that inserted (upserts only)
  std::vector<write_error> refused;        // statements the server refused, by index
  std::optional<std::string> batch_error;  // the whole write failed (connection, write concern, ...)
  // Statements that neither matched nor were refused: their fence did not hold (lost leases).
  std::int64_t shortfall(std::size_t statements) const {
    const auto n = static_cast<std::int64_t>(statements) - static_cast<std::int64_t>(refused.size()) - matched;
    return n > 0 ? n : 0;
  }
  // The refusal of statement `index`, or nullptr.
  const write_error* refused_at(std::size_t index) const;
};

// `executed` is what mongoc_bulk_operation_execute returned (non-zero = success), `error` its
// error text. A failed execute whose reply carries write errors is a per-statement verdict, not a
// batch error: the other statements of an unordered write were applied. A write-concern error
// (the write was applied on the primary but not acknowledged as asked) is a batch error: the
// engine retries the batch, and the fence tells it what became of each item.
bulk_verdict judge_bulk_reply(const bson_t* reply, bool executed, const std::string& error);

// MongoDB's document limit (maxBsonObjectSize, 16 MiB on every server since 1.8). An answer over it
// can't be stored: the driver refuses the whole bulk write before sending it (no write error to
// read), so such an answer is refused before the write, with this reason; nullopt when it fits.
constexpr std::size_t max_document_bytes = 16 * 1024 * 1024;
std::optional<std::string> oversized_answer(std::size_t bson_bytes);

using refusals = std::vector<std::pair<std::string, std::string>>;  // (item id, the server's reason)

// The refs of a bulk's statements (statement k = refs[k]) that the server did not refuse; each
// refused one is appended to `refused` with refusal_reason(). The lost-lease count is
// v.shortfall(refs.size()), to be attributed among the returned refs only.
std::vector<lease_ref> split_refused(const std::vector<lease_ref>& refs, const bulk_verdict& v, refusals& refused);

// `refs` without the items named in `refused` (a refused item keeps its lease, and its lock).
std::vector<lease_ref> without_refused(const std::vector<lease_ref>& refs, const refusals& refused);

}  // namespace dibs::mongo
