// Jobs from claimed documents, shared by the claim strategies.
#include "claimer.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "primary_change.hpp"
#include "protocol.hpp"
#include "start_retry.hpp"

#include <dibs/log.hpp>
#include "engine/src/reason_text.hpp"
#include <dibs/setting_error.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

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
  for (const auto& m : f.more) j.fields.push_back(read_field(doc, m));
  return j;
}

std::int64_t fail_exhausted(mongoc_collection_t* coll, const field_names& f, const claim_cutoffs& cut, int max_attempts,
                            store_time now) {
  if (max_attempts <= 0) return 0;
  driver_reply reply;
  bson_error_t err;
  if (!mongoc_collection_update_many(coll, exhausted_filter(f, cut, max_attempts).get(),
                                     failure_update(f, exhausted_attempts_reason(max_attempts), 0, max_attempts, now).get(),
                                     nullptr, reply.out(), &err)) {
    log::warn("mongodb: failing the documents at ", setting_name("max_attempts"), ": ", driver_error_text(err), " (the next claim tries again)");
    return 0;
  }
  const auto failed = reply_int(reply.get(), "modifiedCount");
  if (failed > 0) log::warn("mongodb: ", failed, " document(s) failed: ", exhausted_attempts_reason(max_attempts));
  return failed;
}

std::vector<job> jobs_with_token(mongoc_collection_t* coll, const field_names& f, const std::string& by,
                                 std::uint64_t token, store_time until, std::int64_t limit) {
  auto proj = claim_projection(f);
  std::vector<job> out;
  // Read again while the primary changes or the link is down (primary_change.hpp): the documents
  // are ours already. This thread is the offload pool's: the pause blocks no shard.
  const auto give_up_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(claim_read_back_budget_ms);
  auto pause = std::chrono::milliseconds(50);
  for (;;) {
    try {
      for (auto& d : find_docs(coll, token_filter(f, token).get(), find_opts(proj.get(), limit).get(), "claim (find by token)"))
        out.push_back(claimed_job(d.get(), f, by, token, until, read_int(d.get(), f.lock_attempts(), 1)));
      return out;
    } catch (const mongo_error& e) {
      if (!read_back_again(e.code, connection_failed(e.domain)) || std::chrono::steady_clock::now() + pause >= give_up_at) throw;
      log::debug("mongodb: ", e.what(), "; reading the claimed documents again in ", pause.count(), " ms");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
  }
}

}  // namespace dibs::mongo
