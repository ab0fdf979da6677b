// A fresh collection of the MongoDB test database (dropped first) and dibs's store on it: where
// most MongoDB tests begin. `tune` sets what a test needs besides (a claim strategy, threads).
#pragma once

#include "support/mongo_env.hpp"

#include <dibs/stores/mongo_store.hpp>
#include <adapters/mongo/test_hooks.hpp>

#include <bson/bson.h>

#include <functional>
#include <string>
#include <vector>

namespace dibs::test {

// The options of dibs's store on `collection` of the test database.
inline mongo::mongo_options options_for_collection(const std::string& collection) {
  mongo::mongo_options o;
  o.uri = mongodb_uri();
  o.db = "dibs_test";
  o.collection = collection;
  return o;
}

struct mongo_collection {
  mongo::mongo_options o;
  mongo::mongo_store s;

  explicit mongo_collection(const std::string& prefix, const std::function<void(mongo::mongo_options&)>& tune = {})
      : o(options_for(prefix, tune)), s(o) {
    mongo::drop(s);
  }
  // The flags that name it: --store, --db, --collection.
  std::vector<std::string> where() const { return {"--store", o.uri, "--db", o.db, "--collection", o.collection}; }

 private:
  static mongo::mongo_options options_for(const std::string& prefix, const std::function<void(mongo::mongo_options&)>& tune) {
    auto o = options_for_collection(unique_collection(prefix));
    if (tune) tune(o);
    return o;
  }
};

// The string at `path` ("location.status") of `doc`, "" when there is none.
inline std::string utf8_at(const bson_t* doc, const char* path) {
  bson_iter_t it, child;
  if (bson_iter_init(&it, doc) && bson_iter_find_descendant(&it, path, &child) && BSON_ITER_HOLDS_UTF8(&child))
    return bson_iter_utf8(&child, nullptr);
  return {};
}

}  // namespace dibs::test
