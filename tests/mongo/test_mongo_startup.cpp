// A MongoDB store starting on a slow or flaky link, as a restarted worker meets one: the server's
// clock is measured on a round trip of its own (a first command that waited for the connection
// would put the estimate ahead by half that wait, and a worker whose clock runs a lease ahead
// takes every live lease over); a connection cut at start is tried again within
// serverSelectionTimeoutMS, as MongoDB's drivers retry.
#include "chaos/tcp_proxy.hpp"
#include "support/mongo_env.hpp"
#include "support/skip.hpp"

#include <dibs/stores/mongo_store.hpp>
#include <adapters/mongo/test_hooks.hpp>
#include <dibs/stores/store_uri.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <string>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
mongo::mongo_options options(const std::string& uri) {
  mongo::mongo_options o;
  o.uri = uri;
  o.db = "dibs_test";
  o.collection = test::unique_collection("startup");
  o.threads = 1;
  return o;
}
}  // namespace

TEST_CASE("the server's clock is measured on a round trip of its own, not on the wait for a connection",
          "[mongo][clock][startup]") {
  const auto uri = test::mongodb_uri();
  const auto where = parse_store_uri(uri);
  test::tcp_proxy proxy(where.host, where.port ? where.port : 27017);
  const mongo::mongo_store direct(options(uri));  // measured on an idle loopback: the reference
  // The first connection through the proxy waits 1.5 s before anything passes.
  proxy.stall(1500ms);
  const mongo::mongo_store late(options(where.with_hosts("127.0.0.1:" + std::to_string(proxy.port()))));
  const auto apart = late.clock_offset() - direct.clock_offset();
  INFO("the late store's estimate of the server's clock is " << apart.count() << " ms from the reference");
  // Taken from the command that waited, the estimate ran half the wait (750 ms) ahead.
  CHECK(std::abs(apart.count()) < 250);
}

TEST_CASE("a connection cut while the store starts is tried again within serverSelectionTimeoutMS, as the drivers do",
          "[mongo][startup]") {
  const auto uri = test::mongodb_uri();
  mongo::mongo_store admin(options(uri));
  // The store's first hello and its isMaster (tried when hello fails) each meet a connection the
  // server closes: a restarted worker whose link was reset at start (the stand-in only).
  try {
    mongo::run_command(admin, R"({"dibsHangUp": "dibs-startup-test", "commands": ["hello", "isMaster"], "n": 1})");
  } catch (const mongo::mongo_error&) {
    test::skip("the server can't close a connection on demand (a real mongod)");
  }
  const auto started = std::chrono::steady_clock::now();
  std::string error;
  try {
    const mongo::mongo_store s(options(test::with_option(uri, "appname=dibs-startup-test")));
  } catch (const std::exception& e) {
    error = e.what();
  }
  const auto took = std::chrono::steady_clock::now() - started;
  INFO(error);
  CHECK(error.empty());  // was "cannot reach MongoDB at ...: ... socket error or timeout", exit 2 for the CLI
  CHECK(took < 5s);      // the URI's serverSelectionTimeoutMS
  // Both closes were met (by the store, not by some other command).
  const auto left = mongo::run_command(admin, R"({"dibsHangUp": "dibs-startup-test", "commands": [], "n": 0})");
  CHECK_THAT(left, Catch::Contains(R"("hello" : { "$numberInt" : "0" })") && Catch::Contains(R"("isMaster" : { "$numberInt" : "0" })"));
}
