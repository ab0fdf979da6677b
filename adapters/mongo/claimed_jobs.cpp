// Jobs from claimed documents, shared by the claim strategies.
#include "claimer.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "protocol.hpp"

namespace dibs::mongo {

job claimed_job(const bson_t* doc, const field_names& f, const std::string& by, std::uint64_t token, store_time until,
                int attempts) {
  job j;
  auto id = doc_id(doc);
  j.id = id ? id_to_text(id->value()) : "";
  j.by = by;
  j.token = token;
  j.until = until;
  j.attempts = attempts;
  j.fields.push_back(read_field(doc, f.source));
  return j;
}

std::vector<job> jobs_with_token(mongoc_collection_t* coll, const field_names& f, const std::string& by,
                                 std::uint64_t token, store_time until, std::int64_t limit) {
  auto proj = claim_projection(f);
  std::vector<job> out;
  for (auto& d : find_docs(coll, token_filter(f, token).get(), find_opts(proj.get(), limit).get(), "claim (find by token)"))
    out.push_back(claimed_job(d.get(), f, by, token, until, read_int(d.get(), f.lock_attempts(), 1)));
  return out;
}

}  // namespace dibs::mongo
