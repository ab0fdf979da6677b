#include "mongo_store.hpp"

#include "bson_ptr.hpp"
#include "bson_read.hpp"
#include "driver_log.hpp"
#include "ids.hpp"
#include "json_to_bson.hpp"
#include "protocol.hpp"
#include "server_clock.hpp"
#include "write_concern.hpp"
#include "write_errors.hpp"

#include <dibs/ipv4_ranges.hpp>
#include <dibs/log.hpp>
#include <dibs/uri_redact.hpp>

#include <algorithm>
#include <mutex>
#include <thread>
#include <random>
#include <unordered_map>
#include <unordered_set>

namespace dibs::mongo {

std::optional<claim_strategy> parse_strategy(const std::string& text) {
  if (text == "update-find") return claim_strategy::update_find;
  if (text == "find-and-modify") return claim_strategy::find_and_modify;
  if (text == "batch") return claim_strategy::batch;
  if (text == "lock-collection") return claim_strategy::lock_collection;
  return std::nullopt;
}

std::string to_string(claim_strategy s) {
  switch (s) {
    case claim_strategy::update_find: return "update-find";
    case claim_strategy::find_and_modify: return "find-and-modify";
    case claim_strategy::batch: return "batch";
    case claim_strategy::lock_collection: return "lock-collection";
  }
  return "?";
}

namespace {

std::once_flag g_init;
void ensure_driver() {
  // mongoc_cleanup() is never called: the driver lives as long as the process.
  std::call_once(g_init, [] {
    install_driver_log();
    mongoc_init();
  });
}

std::int64_t ms(store_time t) { return std::chrono::duration_cast<millis>(t.time_since_epoch()).count(); }
store_time from_ms(std::int64_t v) { return store_time{} + millis(v); }

std::mt19937_64& rng() {
  thread_local std::mt19937_64 r{std::random_device{}()};
  return r;
}
std::uint64_t fresh_token() {
  std::uint64_t t;
  do t = rng()(); while (t == 0);
  return t;
}

void check(bool ok, const std::string& what, const bson_error_t& e) {
  if (!ok) throw mongo_error(what, e);
}

// Every read of the protocol (find by token after a claim, lease read-back, locks, candidates,
// stats) goes to the primary whatever the URI's readPreference says: a lagging secondary would not
// show the leases just written. The driver's default (nullptr prefs) would follow the URI.
const mongoc_read_prefs_t* primary_reads() {
  static const mongoc_read_prefs_t* p = mongoc_read_prefs_new(MONGOC_READ_PRIMARY);  // process lifetime
  return p;
}

struct collection_handle {
  collection_handle(mongoc_client_t* c, const std::string& db, const std::string& name)
      : coll(mongoc_client_get_collection(c, db.c_str(), name.c_str())) {
    mongoc_collection_set_read_prefs(coll, primary_reads());
  }
  ~collection_handle() { mongoc_collection_destroy(coll); }
  collection_handle(const collection_handle&) = delete;
  collection_handle& operator=(const collection_handle&) = delete;
  mongoc_collection_t* coll;
};

struct pooled_client {
  explicit pooled_client(mongoc_client_pool_t* p) : pool(p), client(mongoc_client_pool_pop(p)) {}
  ~pooled_client() { mongoc_client_pool_push(pool, client); }
  pooled_client(const pooled_client&) = delete;
  pooled_client& operator=(const pooled_client&) = delete;
  mongoc_client_pool_t* pool;
  mongoc_client_t* client;
};

std::vector<bson_ptr> find_docs(mongoc_collection_t* coll, const bson_t* filter, const bson_t* opts,
                                const std::string& what) {
  std::vector<bson_ptr> out;
  mongoc_cursor_t* cur = mongoc_collection_find_with_opts(coll, filter, opts, nullptr);
  const bson_t* doc;
  while (mongoc_cursor_next(cur, &doc)) out.emplace_back(bson_copy(doc));
  bson_error_t err;
  const bool failed = mongoc_cursor_error(cur, &err);
  mongoc_cursor_destroy(cur);
  if (failed) throw mongo_error(what, err);
  return out;
}

bson_ptr find_opts(const bson_t* projection, std::int64_t limit, const char* sort_key = nullptr, int sort_dir = 1) {
  auto o = make_bson();
  if (projection) BSON_APPEND_DOCUMENT(o.get(), "projection", projection);
  if (limit > 0) BSON_APPEND_INT64(o.get(), "limit", limit);
  if (sort_key) {
    bson_t sort;
    BSON_APPEND_DOCUMENT_BEGIN(o.get(), "sort", &sort);
    BSON_APPEND_INT32(&sort, sort_key, sort_dir);
    bson_append_document_end(o.get(), &sort);
  }
  return o;
}

bson_ptr unordered() {
  auto o = make_bson();
  BSON_APPEND_BOOL(o.get(), "ordered", false);
  return o;
}

// ObjectIds as 96-bit numbers, to pick a random starting point between the smallest and the
// largest pending id (the batch and lock-collection strategies spread workers this way).
using u128 = unsigned __int128;
u128 oid_number(const bson_oid_t& o) {
  u128 v = 0;
  for (unsigned char b : o.bytes) v = (v << 8) | b;
  return v;
}
bson_oid_t oid_from_number(u128 v) {
  bson_oid_t o;
  for (int i = 11; i >= 0; --i) {
    o.bytes[i] = static_cast<uint8_t>(v & 0xff);
    v >>= 8;
  }
  return o;
}

}  // namespace

struct mongo_store::impl {
  impl(mongo_options o, mongo_store& s) : opts(std::move(o)), self(s) {}

  ~impl() {
    stop_watching();
    if (pool) mongoc_client_pool_destroy(pool);
    if (uri) mongoc_uri_destroy(uri);
  }

  mongo_options opts;
  mongo_store& self;
  std::string redacted;
  std::string lock_coll;
  mongoc_uri_t* uri = nullptr;
  mongoc_client_pool_t* pool = nullptr;
  std::thread watcher;
  std::atomic<bool> watching{false};

  void stop_watching() {
    watching = false;
    if (watcher.joinable()) watcher.join();
  }

  // Opens the change stream here, so that "not supported" is known before returning; the
  // stream is then read on its own thread (mongoc_change_stream_next blocks up to maxAwaitTimeMS).
  bool watch(std::function<void()> on_change) {
    pooled_client* c = new pooled_client(pool);
    mongoc_collection_t* coll = mongoc_client_get_collection(c->client, opts.db.c_str(), opts.collection.c_str());
    auto pipeline = from_json(R"({"pipeline": [{"$match": {"operationType": {"$in": ["insert", "update", "replace"]}}}]})");
    auto stream_opts = from_json(R"({"maxAwaitTimeMS": 500})");
    mongoc_change_stream_t* stream = mongoc_collection_watch(coll, pipeline.get(), stream_opts.get());
    const bson_t* event = nullptr;
    bson_error_t err;
    const bson_t* err_doc = nullptr;
    // The first next() sends the aggregate: a server without change streams answers an error.
    const bool first = mongoc_change_stream_next(stream, &event);
    if (mongoc_change_stream_error_document(stream, &err, &err_doc)) {
      log::info("mongodb: no change streams here (", err.message, "); --follow polls instead");
      mongoc_change_stream_destroy(stream);
      mongoc_collection_destroy(coll);
      delete c;
      return false;
    }
    if (first) on_change();
    watching = true;
    watcher = std::thread([this, c, coll, stream, on_change = std::move(on_change)] {
      const bson_t* ev = nullptr;
      bson_error_t e;
      while (watching.load()) {
        if (mongoc_change_stream_next(stream, &ev)) {
          on_change();
          continue;
        }
        if (mongoc_change_stream_error_document(stream, &e, nullptr)) {
          log::warn("mongodb: the change stream ended (", e.message, "); --follow polls instead");
          break;
        }
      }
      mongoc_change_stream_destroy(stream);
      mongoc_collection_destroy(coll);
      delete c;
    });
    return true;
  }
  server_clock clock;
  std::atomic<std::int64_t> last_clock_check_ns{0};  // steady clock: immune to wall-clock steps

  std::mutex range_mutex;
  bool range_known = false;
  bool range_is_oid = false;
  u128 range_min = 0, range_max = 0;
  int claims_since_range = 0;

  const field_names& f() const { return opts.names; }
  bool lock_mode() const { return opts.strategy == claim_strategy::lock_collection; }

  // ---- connection and clock ------------------------------------------------------------------

  void connect() {
    ensure_driver();
    redacted = redact_uri(opts.uri);
    bson_error_t err;
    uri = mongoc_uri_new_with_error(opts.uri.c_str(), &err);
    if (!uri) throw std::invalid_argument("bad --store URI '" + redacted + "': " + redact_driver_message(err.message, opts.uri));
    // Fail fast when nothing answers, unless the user chose otherwise in the URI.
    if (!mongoc_uri_has_option(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS))
      mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 5000);
    if (!mongoc_uri_has_option(uri, MONGOC_URI_SOCKETTIMEOUTMS))
      mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SOCKETTIMEOUTMS, 60000);
    if (!mongoc_uri_get_option_as_utf8(uri, MONGOC_URI_APPNAME, nullptr))
      mongoc_uri_set_appname(uri, "dibs");
    if (const auto wc = apply_write_concern(uri, redacted); wc.majority) log::info("mongodb: ", wc.description);
    else log::warn("mongodb: ", wc.description, ": a failover can roll back a write fewer than a majority acknowledged");
    pool = mongoc_client_pool_new(uri);
    if (!pool) throw std::invalid_argument("bad --store URI '" + redacted + "': the driver refused its options");
    mongoc_client_pool_set_error_api(pool, MONGOC_ERROR_API_VERSION_2);
    mongoc_client_pool_max_size(pool, static_cast<uint32_t>(opts.threads + 2));
    lock_coll = opts.lock_collection.empty() ? opts.collection + ".lock" : opts.lock_collection;
    measure_clock();
    if (opts.create_indexes) create_indexes();
  }

  void measure_clock() {
    pooled_client c(pool);
    bson_error_t err;
    auto try_cmd = [&](const char* name, bson_t* reply) {
      auto cmd = make_bson();
      BSON_APPEND_INT32(cmd.get(), name, 1);
      return mongoc_client_command_simple(c.client, "admin", cmd.get(), nullptr, reply, &err);
    };
    const auto before = clock.steady_now();
    bson_t reply;
    bool ok = try_cmd("hello", &reply);
    if (!ok) {
      bson_destroy(&reply);
      ok = try_cmd("isMaster", &reply);
    }
    const auto after = clock.steady_now();
    if (!ok) {
      bson_destroy(&reply);
      throw mongo_error("cannot reach MongoDB at " + redacted, err);
    }
    bson_iter_t it;
    if (bson_iter_init_find(&it, &reply, "localTime") && BSON_ITER_HOLDS_DATE_TIME(&it)) {
      if (auto jump = clock.record(from_ms(bson_iter_date_time(&it)), before, after))
        log::warn("mongodb: the server's clock is ", jump->count(), " ms off what the last measurement predicted "
                  "(a clock was stepped); leases now follow the server's new time");
    }
    bson_destroy(&reply);
    last_clock_check_ns = clock.steady_now().time_since_epoch().count();
  }

  void refresh_clock_if_due() {
    const auto now = clock.steady_now().time_since_epoch().count();
    if (server_clock::steady::duration(now - last_clock_check_ns.load()) < opts.clock_refresh) return;
    last_clock_check_ns = now;  // one refresher at a time is enough; a failure keeps the old estimate
    try {
      measure_clock();
    } catch (const std::exception& e) {
      log::warn("mongodb: clock refresh failed: ", e.what());
    }
  }

  void run_admin(mongoc_client_t* client, const bson_t* cmd, const std::string& what) {
    bson_t reply;
    bson_error_t err;
    const bool ok = mongoc_client_command_simple(client, opts.db.c_str(), cmd, nullptr, &reply, &err);
    bson_destroy(&reply);
    if (!ok) log::warn("mongodb: ", what, " failed (continuing without it): ", err.message);
  }

  void create_indexes() {
    pooled_client c(pool);
    if (lock_mode()) {
      // The TTL index is only a backstop for abandoned locks; expiry is decided by `until`.
      run_admin(c.client, lock_index_command(lock_coll, 3600).get(), "creating the lock collection's indexes");
    } else {
      run_admin(c.client, claim_index_command(opts.collection, f()).get(), "creating the claim index");
    }
  }

  store_time now() const { return clock.now(); }

  // ---- candidates from a random start --------------------------------------------------------

  void learn_range(mongoc_collection_t* coll, const bson_t* filter) {
    auto proj = make_bson();
    BSON_APPEND_INT32(proj.get(), "_id", 1);
    auto lo = find_docs(coll, filter, find_opts(proj.get(), 1, "_id", 1).get(), "reading the smallest pending _id");
    auto hi = find_docs(coll, filter, find_opts(proj.get(), 1, "_id", -1).get(), "reading the largest pending _id");
    std::lock_guard lock(range_mutex);
    range_known = true;
    range_is_oid = false;
    claims_since_range = 0;
    if (lo.empty() || hi.empty()) return;
    auto a = doc_id(lo[0].get());
    auto b = doc_id(hi[0].get());
    if (a && b && a->value().value_type == BSON_TYPE_OID && b->value().value_type == BSON_TYPE_OID) {
      range_is_oid = true;
      range_min = oid_number(a->value().value.v_oid);
      range_max = oid_number(b->value().value.v_oid);
    }
  }

  // Up to `limit` documents matching `filter` (projection `proj`), read from a random point of
  // the _id range and wrapping around, so that workers don't all fight over the queue's head.
  std::vector<bson_ptr> spread_candidates(mongoc_collection_t* coll, const bson_t* filter, const bson_t* proj,
                                          std::int64_t limit) {
    bool known, is_oid;
    u128 lo, hi;
    {
      std::lock_guard lock(range_mutex);
      if (range_known && ++claims_since_range > 256) range_known = false;  // pending set moves on
      known = range_known;
    }
    if (!known) learn_range(coll, filter);
    {
      std::lock_guard lock(range_mutex);
      is_oid = range_is_oid;
      lo = range_min;
      hi = range_max;
    }
    if (!is_oid || hi <= lo) return find_docs(coll, filter, find_opts(proj, limit).get(), "finding candidates");

    const u128 span = hi - lo;
    const u128 r = ((static_cast<u128>(rng()()) << 64) | rng()()) % (span + 1);
    const bson_oid_t pivot = oid_from_number(lo + r);

    auto with_bound = [&](const char* op) {
      auto b = make_bson();
      bson_concat(b.get(), filter);
      bson_t c;
      BSON_APPEND_DOCUMENT_BEGIN(b.get(), "_id", &c);
      BSON_APPEND_OID(&c, op, &pivot);
      bson_append_document_end(b.get(), &c);
      return b;
    };
    auto out = find_docs(coll, with_bound("$gte").get(), find_opts(proj, limit, "_id", 1).get(), "finding candidates");
    if (static_cast<std::int64_t>(out.size()) < limit) {
      auto more = find_docs(coll, with_bound("$lt").get(),
                            find_opts(proj, limit - static_cast<std::int64_t>(out.size()), "_id", 1).get(),
                            "finding candidates");
      for (auto& d : more) out.push_back(std::move(d));
      if (out.empty()) {
        std::lock_guard lock(range_mutex);
        range_known = false;
      }
    }
    return out;
  }

  // ---- claim -----------------------------------------------------------------------------------

  job make_job(const bson_t* doc, const std::string& by, std::uint64_t token, store_time until, int attempts) {
    job j;
    auto id = doc_id(doc);
    j.id = id ? id_to_text(id->value()) : "";
    j.by = by;
    j.token = token;
    j.until = until;
    j.attempts = attempts;
    j.fields.push_back(read_field(doc, f().source));
    return j;
  }

  std::vector<job> claim(const claim_request& req) {
    refresh_clock_if_due();
    pooled_client c(pool);
    collection_handle h(c.client, opts.db, opts.collection);
    switch (opts.strategy) {
      case claim_strategy::update_find: return claim_update_find(h.coll, req);
      case claim_strategy::find_and_modify: return claim_find_and_modify(h.coll, req);
      case claim_strategy::batch: return claim_batch(h.coll, req);
      case claim_strategy::lock_collection: {
        collection_handle locks(c.client, opts.db, lock_coll);
        return claim_lock_collection(h.coll, locks.coll, req);
      }
    }
    return {};
  }

  std::vector<job> claim_update_find(mongoc_collection_t* coll, const claim_request& req) {
    std::vector<job> out;
    auto proj = claim_projection(f());
    while (out.size() < req.max) {
      const auto t = now();
      const auto token = fresh_token();
      const auto until = t + req.lease;
      bson_t reply;
      bson_error_t err;
      const bool ok = mongoc_collection_update_one(coll, claimable_filter(f(), t - req.grace).get(),
                                                   lease_update(f(), req.by, token, until).get(), nullptr, &reply, &err);
      const auto matched = reply_int(&reply, "matchedCount");
      bson_destroy(&reply);
      check(ok, "claim (update_one)", err);
      if (matched == 0) break;
      auto docs = find_docs(coll, token_filter(f(), token).get(), find_opts(proj.get(), 1).get(), "claim (find by token)");
      for (auto& d : docs) out.push_back(make_job(d.get(), req.by, token, until, read_int(d.get(), f().lock_attempts(), 1)));
    }
    return out;
  }

  std::vector<job> claim_find_and_modify(mongoc_collection_t* coll, const claim_request& req) {
    std::vector<job> out;
    auto proj = claim_projection(f());
    while (out.size() < req.max) {
      const auto t = now();
      const auto token = fresh_token();
      const auto until = t + req.lease;
      auto update = lease_update(f(), req.by, token, until);
      mongoc_find_and_modify_opts_t* fam = mongoc_find_and_modify_opts_new();
      mongoc_find_and_modify_opts_set_update(fam, update.get());
      mongoc_find_and_modify_opts_set_flags(fam, MONGOC_FIND_AND_MODIFY_RETURN_NEW);
      mongoc_find_and_modify_opts_set_fields(fam, proj.get());
      bson_t reply;
      bson_error_t err;
      const bool ok = mongoc_collection_find_and_modify_with_opts(coll, claimable_filter(f(), t - req.grace).get(), fam,
                                                                  &reply, &err);
      mongoc_find_and_modify_opts_destroy(fam);
      if (!ok) {
        bson_destroy(&reply);
        throw mongo_error("claim (findAndModify)", err);
      }
      bson_iter_t it;
      bool got = false;
      if (bson_iter_init_find(&it, &reply, "value") && BSON_ITER_HOLDS_DOCUMENT(&it)) {
        uint32_t len;
        const uint8_t* data;
        bson_iter_document(&it, &len, &data);
        bson_t doc;
        if (bson_init_static(&doc, data, len)) {
          out.push_back(make_job(&doc, req.by, token, until, read_int(&doc, f().lock_attempts(), 1)));
          got = true;
        }
      }
      bson_destroy(&reply);
      if (!got) break;
    }
    return out;
  }

  std::vector<job> claim_batch(mongoc_collection_t* coll, const claim_request& req) {
    auto id_only = make_bson();
    BSON_APPEND_INT32(id_only.get(), "_id", 1);
    // A few tries: when every candidate was taken by someone else first, look again.
    for (int round = 0; round < 3; ++round) {
      const auto t = now();
      const auto threshold = t - req.grace;
      auto cands = spread_candidates(coll, claimable_filter(f(), threshold).get(), id_only.get(),
                                     static_cast<std::int64_t>(req.max));
      if (cands.empty()) return {};
      std::vector<owned_id> ids;
      std::vector<bson_value_t> values;
      for (auto& d : cands)
        if (auto id = doc_id(d.get())) ids.push_back(*id);
      for (auto& id : ids) values.push_back(id.value());

      const auto token = fresh_token();
      const auto until = t + req.lease;
      bson_t reply;
      bson_error_t err;
      const bool ok = mongoc_collection_update_many(coll, claimable_filter_in(f(), threshold, values).get(),
                                                    lease_update(f(), req.by, token, until).get(), nullptr, &reply, &err);
      const auto matched = reply_int(&reply, "matchedCount");
      bson_destroy(&reply);
      check(ok, "claim (updateMany)", err);
      self.conflicts_ += values.size() - static_cast<std::size_t>(matched);
      if (matched == 0) continue;

      auto proj = claim_projection(f());
      auto docs = find_docs(coll, token_filter(f(), token).get(), find_opts(proj.get(), 0).get(), "claim (find by token)");
      std::vector<job> out;
      for (auto& d : docs) out.push_back(make_job(d.get(), req.by, token, until, read_int(d.get(), f().lock_attempts(), 1)));
      return out;
    }
    return {};
  }

  std::vector<job> claim_lock_collection(mongoc_collection_t* coll, mongoc_collection_t* locks, const claim_request& req) {
    auto proj = make_bson();
    BSON_APPEND_INT32(proj.get(), "_id", 1);
    BSON_APPEND_INT32(proj.get(), f().source.c_str(), 1);
    for (int round = 0; round < 3; ++round) {
      const auto t = now();
      const auto until = t + req.lease;
      const auto token = fresh_token();
      // Candidates carry no sign of their lock (it lives in the other collection): read a wider
      // window, look up which of them are locked, and go for the free and the expired ones.
      const auto window = static_cast<std::int64_t>(std::min<std::size_t>(req.max * 4, req.max + 1000));
      auto cands = spread_candidates(coll, unlocked_candidate_filter(f()).get(), proj.get(), window);
      if (cands.empty()) return {};
      std::vector<owned_id> cand_ids;
      for (auto& d : cands)
        if (auto id = doc_id(d.get())) cand_ids.push_back(*id);
      std::vector<bson_value_t> cand_values;
      for (auto& id : cand_ids) cand_values.push_back(id.value());
      auto existing_filter = id_in_filter(cand_values);
      auto until_proj = make_bson();
      BSON_APPEND_INT32(until_proj.get(), "until", 1);
      std::unordered_map<std::string, store_time> locked_until;
      for (auto& l : find_docs(locks, existing_filter.get(), find_opts(until_proj.get(), 0).get(), "claim (read locks)")) {
        auto id = doc_id(l.get());
        bson_iter_t it;
        if (id) {
          store_time u{};
          if (bson_iter_init_find(&it, l.get(), "until") && BSON_ITER_HOLDS_DATE_TIME(&it)) u = from_ms(bson_iter_date_time(&it));
          locked_until[id_to_text(id->value())] = u;
        }
      }
      std::vector<owned_id> ids;         // free: no lock document
      std::vector<bson_value_t> taken;   // locked but expired beyond the grace: take over
      for (auto& id : cand_ids) {
        if (ids.size() + taken.size() >= req.max) break;
        auto l = locked_until.find(id_to_text(id.value()));
        if (l == locked_until.end()) ids.push_back(id);
        else if (l->second < t - req.grace) taken.push_back(id.value());
      }
      if (ids.empty() && taken.empty()) continue;
      std::vector<bson_ptr> lock_docs;
      for (auto& id : ids) lock_docs.push_back(lock_document(id.value(), req.by, token, t, until));
      // Insert a lock per free candidate; the unique _id lets exactly one worker win each.
      std::vector<const bson_t*> ptrs;
      for (auto& d : lock_docs) ptrs.push_back(d.get());
      bson_t reply;
      bson_error_t err;
      bool ok = true;
      if (!ptrs.empty()) {
        ok = mongoc_collection_insert_many(locks, ptrs.data(), ptrs.size(), unordered().get(), &reply, &err);
      } else {
        bson_init(&reply);
      }
      std::size_t raced = 0;
      bson_iter_t it, arr;
      if (bson_iter_init_find(&it, &reply, "writeErrors") && bson_iter_recurse(&it, &arr)) {
        while (bson_iter_next(&arr)) {
          bson_iter_t e;
          if (!bson_iter_recurse(&arr, &e)) continue;
          std::int64_t code = 0;
          while (bson_iter_next(&e))
            if (std::string(bson_iter_key(&e)) == "code") code = bson_iter_as_int64(&e);
          if (code == 11000) ++raced;
        }
      }
      bson_destroy(&reply);
      if (!ok && raced == 0) throw mongo_error("claim (insert locks)", err);
      self.conflicts_ += raced;  // someone locked it between our read and our insert

      if (!taken.empty()) {
        bson_t r2;
        const bool ok2 = mongoc_collection_update_many(locks, lock_takeover_filter(taken, t - req.grace).get(),
                                                       lock_takeover_update(req.by, token, t, until).get(), nullptr,
                                                       &r2, &err);
        const auto over = reply_int(&r2, "matchedCount");
        bson_destroy(&r2);
        check(ok2, "claim (take over expired locks)", err);
        self.conflicts_ += taken.size() - static_cast<std::size_t>(over);
      }

      auto lock_proj = make_bson();
      BSON_APPEND_INT32(lock_proj.get(), "_id", 1);
      BSON_APPEND_INT32(lock_proj.get(), "attempts", 1);
      auto mine = find_docs(locks, lock_token_filter(token).get(), find_opts(lock_proj.get(), 0).get(),
                            "claim (find my locks)");
      // Read the documents only now that the locks are ours: one finished by another worker
      // between our candidate read and our lock (its lock already gone) shows its target here.
      std::unordered_map<std::string, int> attempts_of;
      std::vector<owned_id> locked;
      for (auto& l : mine)
        if (auto id = doc_id(l.get())) {
          attempts_of[id_to_text(id->value())] = read_int(l.get(), "attempts", 1);
          locked.push_back(*id);
        }
      std::vector<job> out;
      if (locked.empty()) continue;
      std::vector<bson_value_t> locked_values;
      for (auto& id : locked) locked_values.push_back(id.value());
      auto still_open = unlocked_candidate_filter(f());
      append_id_in(still_open.get(), locked_values);
      auto docs = find_docs(coll, still_open.get(), find_opts(proj.get(), 0).get(), "claim (read locked documents)");
      std::unordered_set<std::string> open_ids;
      for (auto& d : docs) {
        const auto id = doc_id(d.get());
        if (!id) continue;
        const auto text = id_to_text(id->value());
        open_ids.insert(text);
        out.push_back(make_job(d.get(), req.by, token, until, attempts_of[text]));
      }
      std::vector<lease_ref> stale;
      for (auto& [text, n] : attempts_of)
        if (!open_ids.count(text)) stale.push_back(lease_ref{text, req.by, token});
      if (!stale.empty()) {
        self.conflicts_ += stale.size();
        delete_locks(locks, stale);
      }
      if (!out.empty()) return out;
    }
    return {};
  }

  // ---- fenced batch writes -------------------------------------------------------------------

  // One unordered bulk of fenced updates. Statements the server refused (write errors) come back
  // in the verdict; a failure of the whole write throws.
  template <class Each>
  bulk_verdict bulk_update(mongoc_collection_t* coll, std::size_t n, Each each, const std::string& what) {
    if (n == 0) return {};
    mongoc_bulk_operation_t* bulk = mongoc_collection_create_bulk_operation_with_opts(coll, unordered().get());
    bson_error_t err{};
    for (std::size_t i = 0; i < n; ++i) {
      auto [filter, update] = each(i);
      if (!mongoc_bulk_operation_update_one_with_opts(bulk, filter.get(), update.get(), nullptr, &err)) {
        mongoc_bulk_operation_destroy(bulk);
        throw mongo_error(what + " (building the bulk write)", err);
      }
    }
    bson_t reply;
    const uint32_t hint = mongoc_bulk_operation_execute(bulk, &reply, &err);
    auto v = judge_bulk_reply(&reply, hint != 0, hint != 0 ? "" : err.message);
    bson_destroy(&reply);
    mongoc_bulk_operation_destroy(bulk);
    if (v.batch_error) throw mongo_error(what + ": " + *v.batch_error);
    return v;
  }


  struct doc_state {
    bool has_token = false;
    std::uint64_t token = 0;
    std::string by;
    store_time until{};
    bool target_set = false;
    bool failed = false;
  };

  // Reads the lease state of `ids` (only when a batch write matched fewer than it sent).
  std::unordered_map<std::string, doc_state> read_states(mongoc_collection_t* coll, const std::vector<lease_ref>& refs,
                                                         bool lock_docs) {
    std::vector<owned_id> ids;
    for (const auto& r : refs)
      if (auto id = id_from_text(r.id)) ids.push_back(*id);
    std::vector<bson_value_t> values;
    for (auto& id : ids) values.push_back(id.value());
    auto filter = id_in_filter(values);
    std::unordered_map<std::string, doc_state> out;
    for (auto& d : find_docs(coll, filter.get(), nullptr, "reading lease states")) {
      auto id = doc_id(d.get());
      if (!id) continue;
      doc_state s;
      const std::string p = lock_docs ? "" : f().lock + ".";
      if (auto t = read_i64(d.get(), p + "token")) {
        s.has_token = true;
        s.token = static_cast<std::uint64_t>(*t);
      }
      s.by = read_str(d.get(), p + "by");
      bson_iter_t it, child;
      if (bson_iter_init(&it, d.get()) && bson_iter_find_descendant(&it, (p + "until").c_str(), &child) &&
          BSON_ITER_HOLDS_DATE_TIME(&child))
        s.until = from_ms(bson_iter_date_time(&child));
      if (!lock_docs) {
        s.target_set = has_path(d.get(), f().target, true);
        s.failed = has_path(d.get(), f().lock_failed());
      }
      out[id_to_text(id->value())] = s;
    }
    return out;
  }

  // When a batch write matched fewer items than it sent, names the ones that lost their lease:
  // first those whose state shows the write can't have applied, then (the count being exact,
  // the attribution best effort) any others needed to reach the shortfall.
  template <class LooksApplied>
  std::vector<std::string> lost_ids(mongoc_collection_t* coll, const std::vector<lease_ref>& refs, std::int64_t matched,
                                    bool lock_docs, LooksApplied looks_applied) {
    const auto shortfall = static_cast<std::int64_t>(refs.size()) - matched;
    if (shortfall <= 0) return {};
    auto states = read_states(coll, refs, lock_docs);
    std::vector<std::string> sure, maybe;
    for (const auto& r : refs) {
      auto it = states.find(r.id);
      if (it == states.end() || !looks_applied(r, it->second)) sure.push_back(r.id);
      else maybe.push_back(r.id);
    }
    std::vector<std::string> out;
    for (auto& id : sure)
      if (static_cast<std::int64_t>(out.size()) < shortfall) out.push_back(id);
    for (auto& id : maybe)
      if (static_cast<std::int64_t>(out.size()) < shortfall) out.push_back(id);
    return out;
  }

  static void warn_each(const std::vector<std::pair<std::string, std::string>>& refused, const char* what) {
    for (auto& [id, why] : refused) log::item(log::level::warn, id, what, why);
  }

  static bool ours(const lease_ref& r, const doc_state& s) { return s.has_token && s.token == r.token && s.by == r.by; }

  // A batch's items (those `keep` accepts) with their parsed ids; an id that doesn't parse can't
  // be ours: lost.
  template <class Item>
  struct parsed_batch {
    std::vector<lease_ref> refs;
    std::vector<owned_id> ids;
    std::vector<const Item*> items;
  };
  template <class Item, class Keep = bool (*)(const Item&)>
  static parsed_batch<Item> parse_batch(const std::vector<Item>& batch, std::vector<std::string>& lost,
                                        Keep keep = [](const Item&) { return true; }) {
    parsed_batch<Item> p;
    for (const auto& x : batch) {
      if (!keep(x)) continue;
      if (auto id = id_from_text(x.ref.id)) {
        p.ids.push_back(*id);
        p.refs.push_back(x.ref);
        p.items.push_back(&x);
      } else {
        lost.push_back(x.ref.id);
      }
    }
    return p;
  }

  // Lock-collection: the indexes of `refs` whose lock is still ours (and, with `live_at`, not
  // expired then); the others go to `lost`.
  std::vector<std::size_t> held_locks(mongoc_collection_t* locks, const std::vector<lease_ref>& refs,
                                      std::optional<store_time> live_at, std::vector<std::string>& lost) {
    auto states = read_states(locks, refs, true);
    std::vector<std::size_t> held;
    for (std::size_t k = 0; k < refs.size(); ++k) {
      auto it = states.find(refs[k].id);
      if (it != states.end() && ours(refs[k], it->second) && (!live_at || it->second.until >= *live_at)) held.push_back(k);
      else lost.push_back(refs[k].id);
    }
    return held;
  }

  write_result complete(const std::vector<completion>& batch) {
    write_result res;
    if (batch.empty()) return res;
    thread_local simdjson::ondemand::parser parser;
    // Convert every result first: one that BSON can't hold is refused with the reason (the
    // engine fails it, fenced like any failure).
    std::size_t converted = 0;
    std::vector<bson_ptr> docs(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      std::string json = batch[i].result_json;
      auto conv = json_to_bson(parser, json);
      if (conv.doc) {
        if (auto why = oversized_answer(conv.doc->len)) conv = {nullptr, *why};
      }
      if (conv.doc) {
        docs[i] = std::move(conv.doc);
        ++converted;
      } else {
        res.refused.emplace_back(batch[i].ref.id, conv.error);
      }
    }
    if (converted == 0) return res;

    pooled_client c(pool);
    collection_handle h(c.client, opts.db, opts.collection);
    const auto t = now();
    auto index_of = [&](const completion& x) { return static_cast<std::size_t>(&x - batch.data()); };
    auto p = parse_batch(batch, res.lost, [&](const completion& x) { return docs[index_of(x)] != nullptr; });
    const auto& refs = p.refs;
    const auto& ids = p.ids;
    auto doc_of = [&](std::size_t k) { return docs[index_of(*p.items[k])].get(); };

    if (lock_mode()) {
      collection_handle locks(c.client, opts.db, lock_coll);
      const auto live = held_locks(locks.coll, refs, t, res.lost);  // ours and live by the server's clock
      auto out = bulk_update(h.coll, live.size(), [&](std::size_t n) {
        const auto k = live[n];
        return std::pair{open_document_filter(f(), ids[k].value()), completion_update(f(), doc_of(k))};
      }, "writing completions");
      res.applied = static_cast<std::size_t>(out.matched);
      std::vector<lease_ref> live_refs;
      for (auto k : live) live_refs.push_back(refs[k]);
      const auto sent = split_refused(live_refs, out, res.refused);  // their locks stay: still ours
      for (auto& id : lost_ids(h.coll, sent, out.matched, false, [](const lease_ref&, const doc_state& s) { return s.target_set; }))
        res.lost.push_back(id);
      delete_locks(locks.coll, without_refused(refs, res.refused));
      return res;
    }

    auto out = bulk_update(h.coll, refs.size(), [&](std::size_t k) {
      return std::pair{completion_filter(f(), ids[k].value(), refs[k].by, refs[k].token, t),
                       completion_update(f(), doc_of(k))};
    }, "writing completions");
    res.applied = static_cast<std::size_t>(out.matched);
    for (auto& id : lost_ids(h.coll, split_refused(refs, out, res.refused), out.matched, false,
                             [](const lease_ref&, const doc_state& s) { return s.target_set && !s.has_token; }))
      res.lost.push_back(id);
    return res;
  }

  void delete_locks(mongoc_collection_t* locks, const std::vector<lease_ref>& refs) {
    if (refs.empty()) return;
    mongoc_bulk_operation_t* bulk = mongoc_collection_create_bulk_operation_with_opts(locks, unordered().get());
    bson_error_t err;
    for (const auto& r : refs) {
      auto id = id_from_text(r.id);
      if (!id) continue;
      mongoc_bulk_operation_remove_one_with_opts(bulk, lock_fenced_filter(id->value(), r.by, r.token).get(), nullptr, &err);
    }
    bson_t reply;
    if (!mongoc_bulk_operation_execute(bulk, &reply, &err))
      log::warn("mongodb: removing locks failed (their TTL will remove them): ", err.message);
    bson_destroy(&reply);
    mongoc_bulk_operation_destroy(bulk);
  }

  renew_result renew(const std::vector<renewal>& batch, millis lease) {
    renew_result res;
    if (batch.empty()) return res;
    pooled_client c(pool);
    const auto t = now();
    const auto until = t + lease;
    auto p = parse_batch(batch, res.lost);
    const auto& refs = p.refs;
    const auto& ids = p.ids;
    const bool lk = lock_mode();
    collection_handle h(c.client, opts.db, lk ? lock_coll : opts.collection);
    auto out = bulk_update(h.coll, refs.size(), [&](std::size_t k) {
      if (lk)
        return std::pair{lock_fenced_filter(ids[k].value(), refs[k].by, refs[k].token), lock_renew_update(t, until)};
      return std::pair{fenced_filter(f(), ids[k].value(), refs[k].by, refs[k].token), renew_update(f(), until)};
    }, "renewing leases");
    res.applied = static_cast<std::size_t>(out.matched);
    // A renewal the server refused did not extend the lease: to the engine, the lease is lost.
    std::vector<std::pair<std::string, std::string>> refused;
    const auto sent = split_refused(refs, out, refused);
    warn_each(refused, "renewal refused (the lease will expire)");
    for (auto& r : refused) res.lost.push_back(r.first);
    for (auto& id : lost_ids(h.coll, sent, out.matched, lk, [](const lease_ref& r, const doc_state& s) { return ours(r, s); }))
      res.lost.push_back(id);
    for (std::size_t i = 0; i < res.applied; ++i) res.until.push_back(until);
    return res;
  }

  write_result release(const std::vector<release_item>& batch) {
    write_result res;
    if (batch.empty()) return res;
    pooled_client c(pool);
    const auto t = now();
    auto p = parse_batch(batch, res.lost);
    const auto& refs = p.refs;
    const auto& ids = p.ids;
    const auto& items = p.items;
    const bool lk = lock_mode();
    collection_handle h(c.client, opts.db, lk ? lock_coll : opts.collection);
    auto out = bulk_update(h.coll, refs.size(), [&](std::size_t k) {
      const bool at_once = items[k]->delay.count() <= 0;
      const auto retry_at = t + items[k]->delay;
      if (lk)
        return std::pair{lock_fenced_filter(ids[k].value(), refs[k].by, refs[k].token),
                         lock_release_update(at_once, retry_at, t, items[k]->why)};
      return std::pair{fenced_filter(f(), ids[k].value(), refs[k].by, refs[k].token),
                       release_update(f(), at_once, retry_at, items[k]->why)};
    }, "releasing items");
    res.applied = static_cast<std::size_t>(out.matched);
    // A refused release leaves the lease as it was: the item is claimable once it expires.
    const auto sent = split_refused(refs, out, res.refused);
    warn_each(res.refused, "release refused (claimable when the lease expires)");
    for (auto& id : lost_ids(h.coll, sent, out.matched, lk, [](const lease_ref& r, const doc_state& s) {
           return !s.has_token || ours(r, s);
         }))
      res.lost.push_back(id);
    return res;
  }

  write_result fail(const std::vector<failure>& batch) {
    write_result res;
    if (batch.empty()) return res;
    pooled_client c(pool);
    collection_handle h(c.client, opts.db, opts.collection);
    const auto t = now();
    auto p = parse_batch(batch, res.lost);
    const auto& refs = p.refs;
    const auto& ids = p.ids;
    const auto& items = p.items;
    if (lock_mode()) {
      collection_handle locks(c.client, opts.db, lock_coll);
      const auto valid = held_locks(locks.coll, refs, std::nullopt, res.lost);
      auto out = bulk_update(h.coll, valid.size(), [&](std::size_t n) {
        const auto k = valid[n];
        return std::pair{open_document_filter(f(), ids[k].value()),
                         failure_update(f(), items[k]->reason, items[k]->http_status, items[k]->attempts, t)};
      }, "recording failures");
      res.applied = static_cast<std::size_t>(out.matched);
      std::vector<lease_ref> valid_refs;
      for (auto k : valid) valid_refs.push_back(refs[k]);
      split_refused(valid_refs, out, res.refused);
      warn_each(res.refused, "failure record refused");
      delete_locks(locks.coll, without_refused(refs, res.refused));  // a refused failure keeps its lock
      return res;
    }
    auto out = bulk_update(h.coll, refs.size(), [&](std::size_t k) {
      return std::pair{fenced_filter(f(), ids[k].value(), refs[k].by, refs[k].token),
                       failure_update(f(), items[k]->reason, items[k]->http_status, items[k]->attempts, t)};
    }, "recording failures");
    res.applied = static_cast<std::size_t>(out.matched);
    const auto sent = split_refused(refs, out, res.refused);
    warn_each(res.refused, "failure record refused");
    for (auto& id : lost_ids(h.coll, sent, out.matched, false,
                             [](const lease_ref&, const doc_state& s) { return s.failed && !s.has_token; }))
      res.lost.push_back(id);
    return res;
  }

  std::int64_t count(mongoc_collection_t* coll, const bson_t* filter) {
    bson_error_t err;
    const auto n = mongoc_collection_count_documents(coll, filter, nullptr, nullptr, nullptr, &err);
    if (n < 0) throw mongo_error("counting documents", err);
    return n;
  }

  store_stats stats() {
    pooled_client c(pool);
    collection_handle h(c.client, opts.db, opts.collection);
    const auto t = now();
    store_stats s;
    s.done = static_cast<std::uint64_t>(count(h.coll, done_filter(f()).get()));
    s.failed = static_cast<std::uint64_t>(count(h.coll, failed_filter(f()).get()));
    if (lock_mode()) {
      // A lock can outlive its document's end: a holder killed between writing the document and
      // removing its lock leaves it to the TTL index (about an hour). Counted as a lease, it kept
      // every worker waiting for a finished document, so only locks of open documents count.
      collection_handle locks(c.client, opts.db, lock_coll);
      auto open_locked = [&](bool live) {
        auto proj = make_bson();
        BSON_APPEND_INT32(proj.get(), "_id", 1);
        const auto held = find_docs(locks.coll, lock_leased_filter(t, live).get(), find_opts(proj.get(), 0).get(),
                                    "reading the locks");
        if (held.empty()) return std::uint64_t{0};
        std::vector<bson_value_t> ids;  // views into `held`, which outlives them
        for (const auto& d : held) {
          bson_iter_t it;
          if (bson_iter_init_find(&it, d.get(), "_id")) ids.push_back(*bson_iter_value(&it));
        }
        auto filter = unlocked_candidate_filter(f());
        append_id_in(filter.get(), ids);
        return static_cast<std::uint64_t>(count(h.coll, filter.get()));
      };
      s.leased_live = open_locked(true);
      s.leased_expired = open_locked(false);
      const auto open = count(h.coll, unlocked_candidate_filter(f()).get());
      s.pending = static_cast<std::uint64_t>(
          std::max<std::int64_t>(0, open - static_cast<std::int64_t>(s.leased_live + s.leased_expired)));
      return s;
    }
    s.pending = static_cast<std::uint64_t>(count(h.coll, pending_filter(f()).get()));
    s.leased_live = static_cast<std::uint64_t>(count(h.coll, leased_filter(f(), t, true).get()));
    s.leased_expired = static_cast<std::uint64_t>(count(h.coll, leased_filter(f(), t, false).get()));
    return s;
  }

  std::size_t seed(std::size_t n, std::uint64_t seed_value) {
    pooled_client c(pool);
    collection_handle h(c.client, opts.db, opts.collection);
    std::mt19937_64 r(seed_value);
    std::size_t inserted = 0;
    const std::size_t chunk = 1000;
    while (inserted < n) {
      const std::size_t k = std::min(chunk, n - inserted);
      std::vector<bson_ptr> docs;
      std::vector<const bson_t*> ptrs;
      for (std::size_t i = 0; i < k; ++i) {
        auto d = make_bson();
        bson_oid_t oid;
        bson_oid_init(&oid, nullptr);
        BSON_APPEND_OID(d.get(), "_id", &oid);
        const auto ip = ipv4_to_string(random_public_ipv4(r));
        // A dotted --source is stored nested, as a user's documents would have it.
        append_path(d.get(), f().source, ip);
        BSON_APPEND_NULL(d.get(), f().target.c_str());
        ptrs.push_back(d.get());
        docs.push_back(std::move(d));
      }
      bson_t reply;
      bson_error_t err;
      const bool ok = mongoc_collection_insert_many(h.coll, ptrs.data(), ptrs.size(), nullptr, &reply, &err);
      inserted += static_cast<std::size_t>(reply_int(&reply, "insertedCount"));
      bson_destroy(&reply);
      check(ok, "seeding documents", err);
    }
    return inserted;
  }

  static void append_path(bson_t* doc, const std::string& path, const std::string& value) {
    const auto dot = path.find('.');
    if (dot == std::string::npos) {
      BSON_APPEND_UTF8(doc, path.c_str(), value.c_str());
      return;
    }
    bson_t child;
    const std::string head = path.substr(0, dot);
    BSON_APPEND_DOCUMENT_BEGIN(doc, head.c_str(), &child);
    append_path(&child, path.substr(dot + 1), value);
    bson_append_document_end(doc, &child);
  }
};

mongo_store::mongo_store(mongo_options opts)
    : blocking_store(opts.threads), impl_(std::make_unique<impl>(std::move(opts), *this)) {
  if (impl_->opts.db.empty()) throw std::invalid_argument("--db must not be empty");
  if (impl_->opts.collection.empty()) throw std::invalid_argument("--collection must not be empty");
  if (impl_->opts.names.source.empty() || impl_->opts.names.target.empty() || impl_->opts.names.lock.empty())
    throw std::invalid_argument("--source, --target and --lock-field must not be empty");
  if (impl_->opts.names.target == impl_->opts.names.lock || impl_->opts.names.source == impl_->opts.names.target)
    throw std::invalid_argument("--source, --target and --lock-field must name different fields");
  impl_->connect();
}

mongo_store::~mongo_store() { join_pool(); }  // no driver call may outlive the client pool

std::string mongo_store::describe() const {
  return impl_->redacted + " " + impl_->opts.db + "." + impl_->opts.collection + " (claim " +
         to_string(impl_->opts.strategy) + ")";
}

claim_strategy mongo_store::strategy() const { return impl_->opts.strategy; }
store_time mongo_store::server_now() const { return impl_->now(); }
std::chrono::milliseconds mongo_store::clock_offset() const { return impl_->clock.offset(); }
bool mongo_store::watch(std::function<void()> on_change) { return impl_->watch(std::move(on_change)); }
void mongo_store::stop_watching() { impl_->stop_watching(); }

std::vector<job> mongo_store::claim_blocking(const claim_request& req) { return impl_->claim(req); }
write_result mongo_store::complete_blocking(const std::vector<completion>& b) { return impl_->complete(b); }
renew_result mongo_store::renew_blocking(const std::vector<renewal>& b, millis lease) { return impl_->renew(b, lease); }
write_result mongo_store::release_blocking(const std::vector<release_item>& b) { return impl_->release(b); }
write_result mongo_store::fail_blocking(const std::vector<failure>& b) { return impl_->fail(b); }
store_stats mongo_store::stats_blocking() { return impl_->stats(); }
std::size_t mongo_store::seed(std::size_t n, std::uint64_t s) { return impl_->seed(n, s); }

void mongo_store::drop() {
  pooled_client c(impl_->pool);
  for (const auto& name : {impl_->opts.collection, impl_->lock_coll}) {
    collection_handle h(c.client, impl_->opts.db, name);
    bson_error_t err;
    if (!mongoc_collection_drop(h.coll, &err) && err.code != 26)  // 26: namespace not found
      log::debug("mongodb: dropping ", name, ": ", err.message);
  }
  if (impl_->opts.create_indexes) impl_->create_indexes();
}

std::string mongo_store::document_json(const std::string& id_text) {
  auto id = id_from_text(id_text);
  if (!id) return "";
  pooled_client c(impl_->pool);
  collection_handle h(c.client, impl_->opts.db, impl_->opts.collection);
  auto filter = make_bson();
  bson_append_value(filter.get(), "_id", 3, &id->value());
  auto docs = find_docs(h.coll, filter.get(), nullptr, "reading a document");
  return docs.empty() ? "" : to_json(docs[0].get());
}

std::optional<std::string> mongo_store::target_json(const std::string& id_text) {
  auto id = id_from_text(id_text);
  if (!id) return std::nullopt;
  pooled_client c(impl_->pool);
  collection_handle h(c.client, impl_->opts.db, impl_->opts.collection);
  auto filter = make_bson();
  bson_append_value(filter.get(), "_id", 3, &id->value());
  auto docs = find_docs(h.coll, filter.get(), nullptr, "reading a document");
  if (docs.empty()) return std::nullopt;
  bson_iter_t it;
  if (!bson_iter_init_find(&it, docs[0].get(), impl_->opts.names.target.c_str()) || !BSON_ITER_HOLDS_DOCUMENT(&it))
    return std::nullopt;
  uint32_t len;
  const uint8_t* data;
  bson_iter_document(&it, &len, &data);
  bson_t sub;
  bson_init_static(&sub, data, len);
  char* s = bson_as_relaxed_extended_json(&sub, nullptr);
  std::string out(s);
  bson_free(s);
  return out;
}

std::vector<bson_ptr> mongo_store::documents() {
  pooled_client c(impl_->pool);
  collection_handle h(c.client, impl_->opts.db, impl_->opts.collection);
  auto all = make_bson();
  return find_docs(h.coll, all.get(), nullptr, "reading documents");
}

std::string mongo_store::run_command(const std::string& json_command) {
  auto cmd = from_json(json_command);
  pooled_client c(impl_->pool);
  bson_t reply;
  bson_error_t err;
  const bool ok = mongoc_client_command_simple(c.client, impl_->opts.db.c_str(), cmd.get(), nullptr, &reply, &err);
  std::string out = to_json(&reply);
  bson_destroy(&reply);
  if (!ok) throw mongo_error("command " + json_command, err);
  return out;
}

}  // namespace dibs::mongo
