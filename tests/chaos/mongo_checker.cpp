#include "mongo_checker.hpp"

#include "expected_outcome.hpp"

#include <adapters/mongo/test_hooks.hpp>

#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

namespace dibs::chaos {

namespace {
std::string text_of(simdjson::dom::element e) { return std::string(simdjson::minify(e)); }

bool same_value(simdjson::dom::element a, simdjson::dom::element b) {
  if (a.is_null() || b.is_null()) return a.is_null() && b.is_null();
  if (text_of(a) == text_of(b)) return true;
  if (a.is_string() || b.is_string()) return false;
  const auto x = ejson_number(a), y = ejson_number(b);
  return x && y && *x == *y;
}

bool flag(simdjson::dom::element w, const char* key) {
  bool b = false;
  return !w[key].get_bool().get(b) && b;
}

// The stored object holds the expected answer, member by member (numbers through extended JSON).
bool holds_answer(simdjson::dom::element stored, const std::string& answer, simdjson::dom::parser& p) {
  auto expected = p.parse(answer);
  for (auto [key, value] : expected.get_object()) {
    simdjson::dom::element got;
    if (stored[key].get(got)) return false;
    if (value.is_object() || value.is_array()) {
      if (got.is_object() != value.is_object()) return false;
      continue;  // (the deep poison: its nesting, not its numbers)
    }
    const bool same = value.is_string() ? got.is_string() && got.get_string().value_unsafe() == value.get_string().value_unsafe()
                                        : ejson_number(got) == ejson_number(value);
    if (!same) return false;
  }
  return true;
}
}  // namespace

bool watch_writes(const mongo_check_input& in) {
  try {
    mongo::run_command(*in.store, "{\"dibsWatch\": \"" + in.collection + "\", \"field\": \"location\", \"lock\": \"_dibs\"}");
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void inject_mongo_violations(const mongo_check_input& in) {
  simdjson::dom::parser p;
  const auto& c = in.collection;
  auto first = [&](const std::string& filter, std::size_t skip) {
    const auto found = mongo::run_command(*in.store, "{\"find\": \"" + c + "\", \"filter\": " + filter +
                                             ", \"sort\": {\"originatingIp\": 1}, \"skip\": " + std::to_string(skip) +
                                             ", \"limit\": 1}");
    for (auto d : p.parse(found)["cursor"]["firstBatch"].get_array()) return text_of(d["_id"]);
    throw std::runtime_error("chaos: too few finished documents to break on purpose");
  };
  auto update = [&](const std::string& q, const std::string& u) {
    mongo::run_command(*in.store, "{\"update\": \"" + c + "\", \"updates\": [{\"q\": " + q + ", \"u\": " + u + "}]}");
  };
  auto forget = [&](const std::string& id) { mongo::run_command(*in.store, "{\"dibsForget\": \"" + c + "\", \"id\": " + id + "}"); };
  const std::string done = "{\"location\": {\"$ne\": null}}";
  const auto d0 = first(done, 0), d1 = first(done, 1), d2 = first(done, 2), d3 = first(done, 3);
  const auto f0 = first("{\"_dibs.failed\": {\"$exists\": true}}", 0);
  // 1. written-twice: a second write of a done document, leaving the same answer.
  update("{\"_id\": " + d0 + "}", "{\"$set\": {\"location.status\": \"success\"}}");
  // 2. stale-writer: the only write of a document, by an update whose filter names no lease.
  forget(d1);
  update("{\"_id\": " + d1 + "}", "{\"$set\": {\"location.status\": \"success\"}}");
  // 3. lost: a document deleted.
  mongo::run_command(*in.store, "{\"delete\": \"" + c + "\", \"deletes\": [{\"q\": {\"_id\": " + d2 + "}, \"limit\": 1}]}");
  // 4. expired-lease: written by its lease's holder, under a lease that ran out in 1970.
  update("{\"_id\": " + d3 + "}", "{\"$set\": {\"_dibs\": {\"by\": \"ghost-3-0\", \"token\": 778, "
                                  "\"until\": {\"$date\": {\"$numberLong\": \"0\"}}}}}");
  forget(d3);
  update("{\"_id\": " + d3 + ", \"_dibs.by\": \"ghost-3-0\", \"_dibs.token\": 778}", "{\"$unset\": {\"_dibs\": \"\"}}");
  // 5. stale-fail: the only write of a failed document, by an update whose filter names no lease.
  forget(f0);
  update("{\"_id\": " + f0 + "}", "{\"$set\": {\"_dibs.failed.injected\": true}}");
}

void check_mongo(const mongo_check_input& in, int round, tally& t) {
  auto v = [&](const char* kind, const std::string& what, std::uint64_t n) { report_violation(t, round, kind, what, n); };
  const auto st = in.store->stats_blocking();
  v("open", "neither done nor failed, or still leased", st.pending + st.leased_live + st.leased_expired);
  simdjson::dom::parser p, q;
  const auto& c = in.collection;
  const auto all = mongo::run_command(*in.store, "{\"find\": \"" + c + "\", \"filter\": {}, \"batchSize\": 1000000}");
  std::set<std::string> finished;  // _id text of the done and failed documents
  std::uint64_t docs = 0, leased = 0, both = 0, attempts = 0, wrong_answer = 0, should_fail = 0, healthy_failed = 0,
                bad_reason = 0, poisoned = 0;
  const auto store = store_kind::mongo;
  for (auto d : p.parse(all)["cursor"]["firstBatch"].get_array()) {
    ++docs;
    std::string_view ip;
    if (d["originatingIp"].get_string().get(ip)) ip = "";
    const auto e = expected_for(ip, store, in.poison_rate, in.poison_seed);
    poisoned += e.poison != stub::poison::none;
    simdjson::dom::element loc, failed, token;
    const bool is_done = !d["location"].get(loc) && !loc.is_null();
    const bool is_failed = !d["_dibs"]["failed"].get(failed);
    if (!d["_dibs"]["token"].get(token)) ++leased;
    if (is_done || is_failed) finished.insert(text_of(d["_id"]));
    if (is_done && is_failed) ++both;
    if (is_done) {
      if (!e.done) ++should_fail;
      else if (!holds_answer(loc, e.answer, q)) ++wrong_answer;
    } else if (is_failed) {
      std::string_view reason;
      simdjson::dom::element a;
      const auto n = failed["attempts"].get(a) ? std::nullopt : ejson_number(a);
      if (!n || *n > in.max_attempts) ++attempts;
      if (failed["reason"].get_string().get(reason)) reason = "";
      if (e.done ? ++healthy_failed <= 3 : !reason_fits(e, reason, store) && ++bad_reason <= 3)
        std::printf("chaos: round %d: failed: %s (%s): %.300s\n", round, std::string(ip).c_str(), stub::poison_name(e.poison),
                    std::string(reason).c_str());
    }
  }
  if (docs != in.items) v("lost", "missing of the " + std::to_string(in.items) + " seeded", docs < in.items ? in.items - docs : docs - in.items);
  v("leased", "still leased", leased);
  v("done-and-failed", "both done and failed", both);
  v("attempts", "failed past --max-attempts (or without a count)", attempts);
  v("wrong-answer", "holding an answer the stub never gave for their address", wrong_answer);
  v("should-fail", "done although the store must refuse their answer", should_fail);
  v("healthy-failed", "failed although their address has an answer the store can hold", healthy_failed);
  v("wrong-reason", "failed without the reason their address calls for", bad_reason);
  t.poisoned += poisoned;
  t.done += st.done;
  t.failed += st.failed;

  if (!in.write_log) return;
  const auto writes = mongo::run_command(*in.store, "{\"dibsWrites\": \"" + c + "\"}");
  std::map<std::string, int> per_doc;
  std::map<std::string, std::vector<std::string>> finals;  // each document's final writes, as logged
  std::uint64_t stale_done = 0, stale_fail = 0, expired = 0, late = 0, lock_late = 0, deletes = 0;
  for (auto w : q.parse(writes)["writes"].get_array()) {
    std::string_view kind;
    if (w["kind"].get_string().get(kind)) continue;
    if (kind == "delete") ++deletes;
    if (kind != "done" && kind != "fail") continue;
    finals[text_of(w["_id"])].push_back(text_of(w));
    if (++per_doc[text_of(w["_id"])] > 1) continue;  // a second write: counted below, once per document
    // The first write: by the holder of the lease the document held. A fenced write names it in
    // its filter; a lock-collection write names none, and only a lock for it must exist.
    bool by_holder;
    if (in.lock_collection) {
      by_holder = !w["lock_token"].is_null();
      if (by_holder && kind == "done" && flag(w, "lock_expired")) ++lock_late;
    } else {
      by_holder = !w["filter_token"].is_null() && !w["held_token"].is_null() &&
                  same_value(w["filter_token"], w["held_token"]) && same_value(w["filter_by"], w["held_by"]);
      // A completion's filter checks the lease's time against the writer's reading of the
      // server's clock: a lease that ran out after that reading, before the server applied the
      // write, is a late commit (the token still fenced out everyone else); one written by a
      // filter that never checked the time is a violation. (Completions only: a failure is
      // fenced by its lease's token alone, by design.)
      if (by_holder && kind == "done" && flag(w, "held_expired")) ++(flag(w, "filter_checks_until") ? late : expired);
      // A claim that found a document claimed --max-attempts times, its last lease run out (or
      // none left), fails it as it would have taken it over: by no lease, rightly.
      if (!by_holder && kind == "fail" && flag(w, "filter_exhausted") && (w["held_token"].is_null() || flag(w, "held_expired")))
        by_holder = true;
    }
    if (!by_holder) ++(kind == "done" ? stale_done : stale_fail);
  }
  std::uint64_t twice = 0, unrecorded = 0;
  for (const auto& [id, n] : per_doc)
    if (n > 1 && ++twice <= 3) {
      // Which writes, in order: the lease each named, the lock there was, the server's time.
      std::printf("chaos: round %d: written %d times: %s\n", round, n, id.c_str());
      for (const auto& w : finals[id]) std::printf("chaos: round %d:   %.600s\n", round, w.c_str());
    }
  for (const auto& id : finished) unrecorded += per_doc.count(id) == 0;
  v("written-twice", "written (done or failed) more than once", twice);
  v("unrecorded", "done or failed without a recorded write", unrecorded);
  v("stale-writer", "done by an update not naming the lease the document held", stale_done);
  v("stale-fail", "failed by an update not naming the lease the document held", stale_fail);
  v("expired-lease", "completed under a lease that had run out, by a write that never checked its time", expired);
  if (deletes) std::printf("chaos: round %d: %llu delete(s) recorded\n", round, (unsigned long long)deletes);
  // The lock-collection strategy checks its lock, then writes: a writer paused in between writes
  // after its lock ran out (the weaker fencing the README names). Counted, like late commits.
  t.late_commits += late + lock_late;
}

}  // namespace dibs::chaos
