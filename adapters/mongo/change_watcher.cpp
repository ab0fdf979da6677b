#include "change_watcher.hpp"

#include <dibs/log.hpp>
#include <dibs/setting_error.hpp>

#include <memory>

namespace dibs::mongo {

namespace {

// The handles of one open stream, freed in reverse order of their making (the stream before its
// collection, the collection before the client goes back to the pool).
struct open_stream {
  explicit open_stream(const connection& conn, const std::string& db, const std::string& collection)
      : client(conn.client()), coll(mongoc_client_get_collection(client.get(), db.c_str(), collection.c_str())) {
    auto pipeline = from_json(R"({"pipeline": [{"$match": {"operationType": {"$in": ["insert", "update", "replace"]}}}]})");
    auto opts = from_json(R"({"maxAwaitTimeMS": 500})");
    stream.reset(mongoc_collection_watch(coll.get(), pipeline.get(), opts.get()));
  }
  pooled_client client;
  collection_ptr coll;
  change_stream_ptr stream;
};

}  // namespace

bool change_watcher::start(std::function<void()> on_change) {
  auto s = std::make_unique<open_stream>(conn_, db_, collection_);
  const bson_t* event = nullptr;
  bson_error_t err;
  const bson_t* err_doc = nullptr;
  // The first next() sends the aggregate: a server without change streams answers an error.
  const bool first = mongoc_change_stream_next(s->stream.get(), &event);
  if (mongoc_change_stream_error_document(s->stream.get(), &err, &err_doc)) {
    log::info("mongodb: no change streams here (", driver_error_text(err), "); ", setting_name("follow"), " polls instead");
    return false;
  }
  if (first) on_change();
  running_ = true;
  thread_ = std::thread([this, s = std::move(s), on_change = std::move(on_change)] {
    const bson_t* ev = nullptr;
    bson_error_t e;
    while (running_.load()) {
      if (mongoc_change_stream_next(s->stream.get(), &ev)) {
        on_change();
        continue;
      }
      if (mongoc_change_stream_error_document(s->stream.get(), &e, nullptr)) {
        log::warn("mongodb: the change stream ended (", driver_error_text(e), "); ", setting_name("follow"), " polls instead");
        break;
      }
    }
  });
  return true;
}

void change_watcher::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

}  // namespace dibs::mongo
