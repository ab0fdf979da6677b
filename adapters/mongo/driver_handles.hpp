// Owning handles for the mongo-c-driver objects the store uses: each is freed by its destructor,
// on every path (an exception between "new" and "destroy" used to leak a cursor or a bulk).
//
// A reply (`bson_t` filled by a driver call) is always initialised by the driver, success or not,
// so `driver_reply` destroys it unconditionally.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>

#include <memory>
#include <string>

namespace dibs::mongo {

template <class T, void (*Free)(T*)>
struct driver_deleter {
  void operator()(T* p) const {
    if (p) Free(p);
  }
};
template <class T, void (*Free)(T*)>
using driver_ptr = std::unique_ptr<T, driver_deleter<T, Free>>;

using uri_ptr = driver_ptr<mongoc_uri_t, mongoc_uri_destroy>;
using client_pool_ptr = driver_ptr<mongoc_client_pool_t, mongoc_client_pool_destroy>;
using collection_ptr = driver_ptr<mongoc_collection_t, mongoc_collection_destroy>;
using database_ptr = driver_ptr<mongoc_database_t, mongoc_database_destroy>;
using cursor_ptr = driver_ptr<mongoc_cursor_t, mongoc_cursor_destroy>;
using bulk_ptr = driver_ptr<mongoc_bulk_operation_t, mongoc_bulk_operation_destroy>;
using find_and_modify_opts_ptr = driver_ptr<mongoc_find_and_modify_opts_t, mongoc_find_and_modify_opts_destroy>;
using change_stream_ptr = driver_ptr<mongoc_change_stream_t, mongoc_change_stream_destroy>;
using write_concern_ptr = driver_ptr<mongoc_write_concern_t, mongoc_write_concern_destroy>;

// The reply document of one driver call.
class driver_reply {
 public:
  driver_reply() = default;
  ~driver_reply() { bson_destroy(&doc_); }
  driver_reply(const driver_reply&) = delete;
  driver_reply& operator=(const driver_reply&) = delete;
  bson_t* out() { return &doc_; }  // for the driver to fill
  const bson_t* get() const { return &doc_; }

 private:
  bson_t doc_ = BSON_INITIALIZER;
};

// A client borrowed from the pool for one operation, given back on destruction.
class pooled_client {
 public:
  explicit pooled_client(mongoc_client_pool_t* p) : pool_(p), client_(mongoc_client_pool_pop(p)) {}
  ~pooled_client() { mongoc_client_pool_push(pool_, client_); }
  pooled_client(const pooled_client&) = delete;
  pooled_client& operator=(const pooled_client&) = delete;
  mongoc_client_t* get() const { return client_; }

 private:
  mongoc_client_pool_t* pool_;
  mongoc_client_t* client_;
};

// A collection of `client` whose reads go to the primary whatever the URI's readPreference says:
// a lagging secondary would not show the leases just written (the driver's default, nullptr
// prefs, would follow the URI).
collection_ptr primary_collection(mongoc_client_t* client, const std::string& db, const std::string& name);

}  // namespace dibs::mongo
