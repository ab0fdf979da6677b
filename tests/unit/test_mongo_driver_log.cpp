// The MongoDB driver's own messages go through dibs's logger: with --log-json every stderr line
// stays one JSON object (a CI machine without /dev/shm broke `dibs demo --log-json` with mongoc's
// "Falling back to malloc for counters" in mongoc's own format).
#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/driver_log.hpp>

#include <catch2/catch.hpp>
#include <mongoc/mongoc.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace dibs;
using namespace dibs::mongo;

TEST_CASE("the driver's messages keep their weight, its counter notes are debug", "[mongo][log]") {
  auto warning = route_driver_message(MONGOC_LOG_LEVEL_WARNING, "cluster", "server selection took long");
  REQUIRE(warning);
  CHECK(warning->level == log::level::warn);
  CHECK(warning->text == "mongoc (cluster): server selection took long");
  CHECK(route_driver_message(MONGOC_LOG_LEVEL_ERROR, "client", "x")->level == log::level::error);
  CHECK(route_driver_message(MONGOC_LOG_LEVEL_CRITICAL, "client", "x")->level == log::level::error);
  CHECK(route_driver_message(MONGOC_LOG_LEVEL_INFO, "client", "x")->level == log::level::debug);
  CHECK(route_driver_message(MONGOC_LOG_LEVEL_WARNING, "mongoc", "Falling back to malloc for counters.")->level ==
        log::level::debug);
  CHECK_FALSE(route_driver_message(MONGOC_LOG_LEVEL_TRACE, "mongoc", "ENTRY"));
}

TEST_CASE("with JSON logging, a driver warning is written as one JSON line", "[mongo][log]") {
  char path[] = "/tmp/dibs-driver-log-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  std::fflush(stderr);
  const int saved = ::dup(2);
  ::dup2(fd, 2);
  const bool was_json = log::json();
  log::set_json(true);
  install_driver_log();
  mongoc_log(MONGOC_LOG_LEVEL_WARNING, "cluster", "a warning with a \"quote\"");
  mongoc_log(MONGOC_LOG_LEVEL_WARNING, "mongoc", "Falling back to malloc for counters.");  // debug: not shown
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  ::close(fd);
  log::set_json(was_json);
  mongoc_log_set_handler(mongoc_log_default_handler, nullptr);

  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  ::unlink(path);
  const std::string text = all.str();
  INFO(text);
  CHECK(text.rfind("{\"ts\":\"", 0) == 0);
  CHECK(text.find(R"("level":"warn","msg":"mongoc (cluster): a warning with a \"quote\""})") != std::string::npos);
  CHECK(text.find("counters") == std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
}

TEST_CASE("a driver message quoting a piece of a guarded connection string's password is withheld", "[mongo][log][secrets]") {
  guard_driver_secrets("mongodb://app:Pw0rd@S3cr3t@db.example:27017/x");
  CHECK(scrub_driver_message("connection refused calling hello on 'db.example:27017'") ==
        "connection refused calling hello on 'db.example:27017'");
  for (const char* leaky : {"calling hello on 'S3cr3t@db.example:27017'", "Authentication failed for Pw0rd",
                            "bad host '3cr3t@db'"})
    CHECK(scrub_driver_message(leaky).find("withheld") != std::string::npos);
  bson_error_t e{};
  bson_set_error(&e, 1, 2, "No suitable servers found: [S3cr3t@db.example:27017]");
  const std::string said = dibs::mongo::mongo_error("cannot reach MongoDB", e).what();
  CHECK(said.find("S3cr3t") == std::string::npos);
  CHECK_THAT(said, Catch::StartsWith("cannot reach MongoDB: "));
}
