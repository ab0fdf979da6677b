// The wiring: options checked, the parts made for the chosen strategy, each call handed on.
#include "store_impl.hpp"

#include "claim_indexes.hpp"
#include "failed_documents.hpp"
#include "pending_sampler.hpp"
#include "settings_record.hpp"
#include "start_retry.hpp"
#include "store_admin.hpp"
#include "worker_leases.hpp"

#include "engine/src/init_hint.hpp"
#include <dibs/log.hpp>
#include <dibs/setting_error.hpp>

#include <stdexcept>

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

// `dibs init` with the flags that name what this store opened (the URI redacted).
std::string init_command(const std::string& redacted_uri, const mongo_options& o) {
  std::string cmd = init_hint(redacted_uri, o.names.source, o.names.target) + " " + setting_name("db") + " " + o.db + " " +
                    setting_name("collection") + " " + o.collection;
  if (o.names.lock != default_lock_field) cmd += " " + setting_name("lock_field") + " " + o.names.lock;
  return cmd;
}

const mongo_options& checked(const mongo_options& o) {
  if (o.db.empty()) throw setting_error("db", "must not be empty");
  if (o.collection.empty()) throw setting_error("collection", "must not be empty");
  if (o.names.source.empty() || o.names.target.empty() || o.names.lock.empty())
    throw std::invalid_argument(setting_name("source") + ", " + setting_name("target") + " and " + setting_name("lock_field") +
                                " must not be empty");
  if (o.names.target == o.names.lock || o.names.source == o.names.target)
    throw std::invalid_argument(setting_name("source") + ", " + setting_name("target") + " and " + setting_name("lock_field") +
                                " must name different fields");
  return o;
}

std::unique_ptr<claimer> make_claimer(store_context& ctx) {
  switch (ctx.opts.strategy) {
    case claim_strategy::update_find: return update_find_claimer(ctx);
    case claim_strategy::find_and_modify: return find_and_modify_claimer(ctx);
    case claim_strategy::batch: return batch_claimer(ctx);
    case claim_strategy::lock_collection: return lock_collection_claimer(ctx);
  }
  throw std::invalid_argument("unknown claim strategy");
}

std::unique_ptr<lease_keeper> make_lease_keeper(store_context& ctx) {
  if (ctx.opts.strategy == claim_strategy::lock_collection) return lock_lease_keeper(ctx);
  return document_lease_keeper(ctx);
}

}  // namespace

mongo_store::impl::impl(const mongo_options& o)
    : ctx(o), claims(make_claimer(ctx)), leases(make_lease_keeper(ctx)), watcher(ctx.conn, o.db, o.collection) {}

mongo_store::mongo_store(mongo_options opts)
    : blocking_store(opts.threads), impl_(std::make_unique<impl>(checked(opts))) {
  const auto& conn = impl_->ctx.conn;
  try {
    start_within(conn.server_selection_timeout(), [this] { start(); });
  } catch (const mongo_error& e) {
    if (!connection_failed(e.domain)) throw;
    // Whichever step met it, the same one line, with what to do.
    const std::string said = e.what();
    const std::string prefix = "cannot reach MongoDB at " + conn.redacted();
    mongo_error told((said.rfind(prefix, 0) == 0 ? said : prefix + ": " + said) +
                     "; check that the server is running and that " + setting_name("store") + " names it (host, port, replicaSet)");
    told.domain = e.domain;
    told.code = e.code;
    throw told;
  }
}

namespace {
// No lock_field given nor recorded, and the collection keeps an earlier dibs's default field
// (its claim index says so): that one.
void settle_lease_field(store_context& ctx, const settings_record& recorded, const std::vector<index_fact>& indexes) {
  const bool named = ctx.opts.settings.was_given("lock_field") || recorded_value(recorded, "lock_field");
  if (named || ctx.opts.names.lock != default_lock_field || !earlier_lock_field_in_use(indexes)) return;
  ctx.opts.names.lock = earlier_lock_field;
  if (ctx.opts.settings.read) ctx.opts.settings.result->in_effect = in_effect_settings(ctx.opts);
  log::info("mongodb: ", ctx.opts.db, ".", ctx.opts.collection, " keeps its leases in ", earlier_lock_field,
            ", as an earlier dibs made it (its claim index is there): dibs goes on with it (", setting_name("lock_field"), " ",
            earlier_lock_field, ")");
}

// dibs init on an existing collection: a lease field the documents have of their own is refused;
// a claim index made for another target is dropped, to be made again for this one.
void prepare_collection(store_context& ctx, const settings_record& recorded, const std::vector<index_fact>& indexes) {
  const auto& names = ctx.opts.names;
  // The lease field is dibs's when dibs init recorded it, or a claim index of dibs's reads it;
  // else a document that has it holds the user's own value.
  const auto* recorded_lock = recorded_value(recorded, "lock_field");
  if (!(recorded_lock && *recorded_lock == names.lock) && !has_index(indexes, claim_index_name(names)))
    require_free_lease_field(ctx);
  if (const auto reads = stale_claim_index(indexes, names)) {
    drop_index(ctx, claim_index_name(names));  // made again below, for the target of now
    log::warn("mongodb: ", ctx.opts.db, ".", ctx.opts.collection, ": moved the claim index ", claim_index_name(names), " from ",
              *reads, " to the target ", names.target);
  }
}
}  // namespace

// Every step may run again after a connection failure (start_retry.hpp): each is a read, or
// creates only what is missing.
void mongo_store::start() {
  auto& ctx = impl_->ctx;
  ctx.clock.measure();  // the first round trip: throws when the server can't be reached
  const auto recorded = apply_settings_record(ctx);  // before anything reads the field names
  const bool init = ctx.opts.settings.record;
  if (!ctx.opts.create_collection)
    require_collection(ctx, init ? "a collection that is new: add " + setting_name("new_table")
                                 : "dibs enrich and dibs status create no collection; create it with: " +
                                       init_command(ctx.conn.redacted(), ctx.opts) + " " + setting_name("new_table"));
  const auto indexes = list_indexes(ctx);
  settle_lease_field(ctx, recorded, indexes);
  follow_lock_collection();
  // dibs init's record of this target is the user's word that it is meant; dibs init given
  // another one is asked the same as a first run.
  const auto* recorded_target = recorded_value(recorded, "target");
  if (ctx.opts.require_target && !ctx.opts.target_is_new && !(recorded_target && *recorded_target == ctx.opts.names.target))
    require_target_field(ctx, init ? "" : init_command(ctx.conn.redacted(), ctx.opts));
  if (init) prepare_collection(ctx, recorded, indexes);
  if (ctx.opts.settings.record) write_settings_record(ctx);
  if (ctx.opts.create_indexes) {
    impl_->leases->create_indexes();
    // Said once per run, with the count: such documents are left alone (never claimed, counted
    // as failed), so a run still ends; the user decides what the field should be.
    if (const auto foreign = count_foreign_leases(ctx); foreign > 0)
      log::warn("mongodb: ", foreign, " document(s) of ", ctx.opts.db, ".", ctx.opts.collection,
                " hold in ", setting_name("lock_field"), " ", ctx.opts.names.lock,
                " a value dibs did not write (not a document): dibs leaves them alone and counts them as failed; "
                "choose another ", setting_name("lock_field"), ", or remove that field from them");
  }
}

// A collection whose documents an earlier or running dibs claims through the lock collection keeps
// its leases there, not in the documents: a run claiming by the documents' own field would claim
// past them (the same documents called and written by two runs). A run (enrich, init) claims
// through the locks too, said; one given another claim by name is refused. The reading
// commands (status, retry, failed, release) read the leases there.
void mongo_store::follow_lock_collection() {
  auto& ctx = impl_->ctx;
  if (ctx.opts.strategy == claim_strategy::lock_collection) return;
  if (ctx.opts.detect_lock_collection) {  // the reading commands read every lock kept there
    impl_->lock_collection_found = lock_collection_in_use(ctx);
    return;
  }
  if (!lock_collection_holds_leases(ctx)) return;
  const auto where = ctx.opts.db + "." + ctx.lock_collection;
  if (ctx.opts.settings.was_given("claim"))
    throw setting_error("claim", to_string(ctx.opts.strategy) + ": the lock collection " + where +
                                     " holds leases of a run with " + setting_name("claim") +
                                     " lock-collection (this collection's documents are claimed through it); claiming with " +
                                     to_string(ctx.opts.strategy) + " would take documents that run holds: give " +
                                     setting_name("claim") + " lock-collection, or no " + setting_name("claim"));
  ctx.opts.strategy = claim_strategy::lock_collection;
  impl_->claims = make_claimer(ctx);
  impl_->leases = make_lease_keeper(ctx);  // its indexes made with the others, next
  log::warn("mongodb: ", ctx.opts.db, ".", ctx.opts.collection, "'s leases are kept in the lock collection ", where,
            " (a run with ", setting_name("claim"), " lock-collection worked on it): this run claims through it too (",
            setting_name("claim"), " lock-collection)");
}

mongo_store::~mongo_store() {
  join_pool();  // no driver call may outlive the client pool
  impl_->watcher.stop();
}

std::string mongo_store::describe() const {
  const auto& o = impl_->ctx.opts;
  return impl_->ctx.conn.redacted() + " " + o.db + "." + o.collection + " (claim " + to_string(o.strategy) + ")";
}

claim_strategy mongo_store::strategy() const { return impl_->ctx.opts.strategy; }
store_time mongo_store::server_now() const { return impl_->ctx.clock.now(); }
std::chrono::milliseconds mongo_store::clock_offset() const { return impl_->ctx.clock.offset(); }
std::uint64_t mongo_store::claim_conflicts() const { return impl_->ctx.conflicts.load(); }
std::optional<std::uint64_t> mongo_store::statements_sent() const {
  if (!impl_->ctx.opts.count_commands) return std::nullopt;
  return impl_->ctx.conn.commands_sent();
}
bool mongo_store::watch(std::function<void()> on_change) { return impl_->watcher.start(std::move(on_change)); }
void mongo_store::stop_watching() { impl_->watcher.stop(); }

std::vector<job> mongo_store::claim_blocking(const claim_request& req) {
  impl_->ctx.clock.refresh_if_due(nullptr);  // before the claimer borrows its client
  return impl_->claims->claim(req);
}
write_result mongo_store::complete_blocking(const std::vector<completion>& b) { return impl_->leases->complete(b); }
renew_result mongo_store::renew_blocking(const std::vector<renewal>& b, millis lease) { return impl_->leases->renew(b, lease); }
write_result mongo_store::release_blocking(const std::vector<release_item>& b) { return impl_->leases->release(b); }
write_result mongo_store::fail_blocking(const std::vector<failure>& b) { return impl_->leases->fail(b); }
store_stats mongo_store::stats_blocking() {
  if (impl_->lock_collection_found) return lock_lease_stats(impl_->ctx);
  return impl_->leases->stats();
}

store_stats mongo_store::open_stats_blocking() {
  if (impl_->lock_collection_found) return lock_lease_stats(impl_->ctx, false);
  return impl_->leases->stats(false);
}
std::uint64_t mongo_store::open_count_blocking() { return count_open_documents(impl_->ctx); }
std::uint64_t mongo_store::retry_failed(const retry_filter& which) {
  const bool locks = impl_->lock_collection_found || impl_->ctx.opts.strategy == claim_strategy::lock_collection;
  return retry_failed_documents(impl_->ctx, which, locks);
}
std::vector<failure_reason> mongo_store::failure_reasons(std::size_t top) { return failure_reason_counts(impl_->ctx, top); }
void mongo_store::list_failed(const retry_filter& which, const std::function<void(const failed_item&)>& each) {
  list_failed_documents(impl_->ctx, which, each);
}
std::optional<std::uint64_t> mongo_store::no_data_count() { return count_no_data(impl_->ctx); }
// The leases live where the run that took them put them: the lock collection when it holds any.
std::vector<lease_holder> mongo_store::lease_holders() {
  const bool locks = impl_->lock_collection_found || impl_->ctx.opts.strategy == claim_strategy::lock_collection;
  return lease_holders_blocking(impl_->ctx, locks);
}
std::uint64_t mongo_store::release_worker(const std::string& name) {
  const bool locks = impl_->lock_collection_found || impl_->ctx.opts.strategy == claim_strategy::lock_collection;
  return release_worker_blocking(impl_->ctx, locks, name);
}
std::size_t mongo_store::seed(std::size_t n, std::uint64_t s) { return seed_documents(impl_->ctx, n, s, 0); }
std::size_t mongo_store::seed_skewed(std::size_t n, std::uint64_t s, std::size_t distinct) {
  return seed_documents(impl_->ctx, n, s, distinct);
}
std::vector<pending_sample> mongo_store::sample_pending_items(std::size_t n) { return sample_open_documents(impl_->ctx, n); }
std::optional<pending_sample> mongo_store::sample_done() { return sample_done_document(impl_->ctx); }

}  // namespace dibs::mongo
