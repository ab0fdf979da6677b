// lock-collection: the document is untouched while locked; its lock is a document
// {_id: <doc id>, ts, by, token, until, attempts} of the lock collection, and the unique _id lets
// exactly one worker win it (weaker fencing: see the README). The decisions of each step are in
// lock_claim_decisions.hpp; this file does the round trips.
#include "claimer.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "lock_claim_decisions.hpp"
#include "protocol.hpp"
#include "random_token.hpp"
#include "store_context.hpp"

#include <dibs/log.hpp>
#include "engine/src/reason_text.hpp"
#include <dibs/setting_error.hpp>

#include <algorithm>

namespace dibs::mongo {

namespace {

std::vector<bson_value_t> values_of(const std::vector<owned_id>& ids) {
  std::vector<bson_value_t> v;
  for (const auto& id : ids) v.push_back(id.value());
  return v;
}

class lock_collection final : public claimer {
 public:
  using claimer::claimer;

  std::vector<job> claim(const claim_request& req) override {
    const auto& f = ctx_.names();
    const store_session db(ctx_);
    const auto proj = source_projection();
    for (int round = 0; round < 3; ++round) {
      const auto t = ctx_.clock.now();
      const auto until = t + req.lease;
      const auto cut = cutoffs_at(ctx_.clock.earliest(), req.grace);  // by any reading of the server's clock
      const auto token = fresh_token();
      // Candidates carry no sign of their lock (it lives in the other collection): read a wider
      // window, look up which of them are locked, and go for the free and the expired ones.
      const auto window = static_cast<std::int64_t>(std::min<std::size_t>(req.max * 4, req.max + 1000));
      auto cands = ctx_.sampler.sample(db.documents.get(), unlocked_candidate_filter(f).get(), proj.get(), window);
      if (cands.empty()) return {};
      std::vector<owned_id> cand_ids;
      std::vector<std::string> cand_texts;
      for (auto& d : cands)
        if (auto id = doc_id(d.get())) {
          cand_texts.push_back(id_to_text(id->value()));
          cand_ids.push_back(*id);
        }
      auto lock_proj = make_bson();
      BSON_APPEND_INT32(lock_proj.get(), "until", 1);
      BSON_APPEND_INT32(lock_proj.get(), "attempts", 1);
      BSON_APPEND_INT32(lock_proj.get(), "token", 1);
      const auto existing = find_docs(db.locks.get(), id_in_filter(values_of(cand_ids)).get(),
                                      find_opts(lock_proj.get(), 0).get(), "claim (read locks)");
      const auto exhausted = exhausted_locks(existing, cut, req.max_attempts);
      if (!exhausted.empty()) fail_exhausted(db.documents.get(), db.locks.get(), cand_ids, cand_texts, exhausted, req, cut);
      const auto targets = choose_lock_targets(cand_texts, lock_expiries(existing), cut, req.max, exhausted);
      if (targets.empty()) continue;

      insert_locks(db.locks.get(), cand_ids, targets.free, req.by, token, t, until);
      if (!targets.expired.empty())
        take_over(db.locks.get(), cand_ids, targets.expired, req.by, token, t, until, cut, req.max_attempts);
      auto out = read_claimed(db.documents.get(), db.locks.get(), req.by, token, until);
      if (!out.empty()) return out;
    }
    return {};
  }

 private:
  // {_id, <source>}: what a candidate and a claimed document are read with (attempts are the lock's).
  bson_ptr source_projection() const {
    auto proj = id_projection();
    BSON_APPEND_INT32(proj.get(), ctx_.names().source.c_str(), 1);
    for (const auto& m : ctx_.names().more) BSON_APPEND_INT32(proj.get(), m.c_str(), 1);
    return proj;
  }

  // A lock per free candidate; a duplicate key is a conflict (someone locked it since our read).
  void insert_locks(mongoc_collection_t* locks, const std::vector<owned_id>& ids, const std::vector<std::size_t>& free,
                    const std::string& by, std::uint64_t token, store_time t, store_time until) {
    if (free.empty()) return;
    std::vector<bson_ptr> lock_docs;
    std::vector<const bson_t*> ptrs;
    for (auto k : free) {
      lock_docs.push_back(lock_document(ids[k].value(), by, token, t, until));
      ptrs.push_back(lock_docs.back().get());
    }
    driver_reply reply;
    bson_error_t err;
    const bool ok = mongoc_collection_insert_many(locks, ptrs.data(), ptrs.size(), unordered_opts().get(), reply.out(), &err);
    const auto v = judge_lock_insert(reply.get(), ok);
    if (v.failed) throw mongo_error("claim (insert locks)", err);
    ctx_.conflicts += v.raced;
  }

  // Locks that ran out at `cut`: taken over with our token, fenced by their expiry.
  void take_over(mongoc_collection_t* locks, const std::vector<owned_id>& ids, const std::vector<std::size_t>& expired,
                 const std::string& by, std::uint64_t token, store_time t, store_time until, const claim_cutoffs& cut,
                 int max_attempts) {
    std::vector<bson_value_t> taken;
    for (auto k : expired) taken.push_back(ids[k].value());
    driver_reply reply;
    bson_error_t err;
    const bool ok = mongoc_collection_update_many(locks, lock_takeover_filter(taken, cut, max_attempts).get(),
                                                  lock_takeover_update(by, token, t, until).get(), nullptr, reply.out(), &err);
    if (!ok) throw mongo_error("claim (take over expired locks)", err);
    ctx_.conflicts += taken.size() - static_cast<std::size_t>(reply_int(reply.get(), "matchedCount"));
  }

  // Documents whose locks ran out max_attempts times (exhausted_locks): each lock is taken with a
  // token of our own, without counting an attempt (so one claimer fails each document), the
  // documents still open are failed, and the locks removed. A failure is logged, not thrown: the
  // next claim tries again.
  void fail_exhausted(mongoc_collection_t* coll, mongoc_collection_t* locks, const std::vector<owned_id>& ids,
                      const std::vector<std::string>& texts, const std::unordered_set<std::string>& exhausted,
                      const claim_request& req, const claim_cutoffs& cut) {
    const auto& f = ctx_.names();
    std::vector<bson_value_t> taken;
    for (std::size_t k = 0; k < ids.size(); ++k)
      if (exhausted.count(texts[k])) taken.push_back(ids[k].value());
    const auto token = fresh_token();
    const auto t = ctx_.clock.now();
    try {
      driver_reply reply;
      bson_error_t err;
      if (!mongoc_collection_update_many(locks, lock_takeover_filter(taken, cut, req.max_attempts, true).get(),
                                         lock_takeover_update(req.by, token, t, t + req.lease, false).get(), nullptr,
                                         reply.out(), &err))
        throw mongo_error("taking the locks of documents at " + setting_name("max_attempts"), err);
      auto lock_proj = id_projection();
      BSON_APPEND_INT32(lock_proj.get(), "attempts", 1);
      std::vector<fenced_update> writes;
      std::vector<lease_ref> mine;
      for (auto& l : find_docs(locks, lock_token_filter(token).get(), find_opts(lock_proj.get(), 0).get(),
                               "reading the locks of documents at " + setting_name("max_attempts"))) {
        const auto id = doc_id(l.get());
        if (!id) continue;
        const int attempts = read_int(l.get(), "attempts", req.max_attempts);
        auto still_open = unlocked_candidate_filter(f);
        bson_append_value(still_open.get(), "_id", 3, &id->value());
        writes.push_back({std::move(still_open), failure_update(f, exhausted_attempts_reason(attempts), 0, attempts, t)});
        mine.push_back(lease_ref{id_to_text(id->value()), req.by, token});
      }
      if (mine.empty()) return;
      const auto out = bulk_update(coll, writes, "failing documents at " + setting_name("max_attempts"));
      if (out.matched > 0)
        log::warn("mongodb: ", out.matched, " document(s) failed: ", exhausted_attempts_reason(req.max_attempts));
      remove_locks(locks, mine);
    } catch (const std::exception& e) {
      log::warn("mongodb: failing the documents at ", setting_name("max_attempts"), ": ", e.what(), " (the next claim tries again)");
    }
  }

  // Our locks, and their documents read only now that the locks are ours: one finished by another
  // worker between our candidate read and our lock (its lock already gone) shows its target here,
  // and its lock is given back.
  std::vector<job> read_claimed(mongoc_collection_t* coll, mongoc_collection_t* locks, const std::string& by,
                                std::uint64_t token, store_time until) {
    const auto& f = ctx_.names();
    auto lock_proj = id_projection();
    BSON_APPEND_INT32(lock_proj.get(), "attempts", 1);
    auto mine = find_docs(locks, lock_token_filter(token).get(), find_opts(lock_proj.get(), 0).get(), "claim (find my locks)");
    std::unordered_map<std::string, int> attempts_of;
    std::vector<owned_id> locked;
    for (auto& l : mine)
      if (auto id = doc_id(l.get())) {
        attempts_of[id_to_text(id->value())] = read_int(l.get(), "attempts", 1);
        locked.push_back(*id);
      }
    if (locked.empty()) return {};
    auto still_open = unlocked_candidate_filter(f);
    append_id_in(still_open.get(), values_of(locked));
    const auto proj = source_projection();
    std::vector<job> out;
    std::unordered_set<std::string> open_ids;
    for (auto& d : find_docs(coll, still_open.get(), find_opts(proj.get(), 0).get(), "claim (read locked documents)")) {
      const auto id = doc_id(d.get());
      if (!id) continue;
      const auto text = id_to_text(id->value());
      open_ids.insert(text);
      out.push_back(claimed_job(d.get(), f, by, token, until, attempts_of[text]));
    }
    const auto stale = stale_locks(attempts_of, open_ids, by, token);
    if (!stale.empty()) {
      ctx_.conflicts += stale.size();
      remove_locks(locks, stale);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<claimer> lock_collection_claimer(store_context& ctx) { return std::make_unique<lock_collection>(ctx); }

}  // namespace dibs::mongo
