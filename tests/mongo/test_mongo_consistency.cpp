// What the protocol asks of a replica set whatever the URI says: its reads (find by token after a
// claim, lease read-back, locks, candidates, stats) go to the primary, since a lagging secondary
// would not show the leases just written; its writes are acknowledged by a majority unless the URI
// names a write concern (the fence is a single-document compare-and-set: only safe with
// w:majority across a failover).
//
// A private stand-in answers as the primary of a one-member replica set (--replica-set), so that
// the driver really sends a URI's read preference, and records every command's $readPreference
// and writeConcern (dibsCommandLog).
#include "support/mongo_env.hpp"
#include "support/process.hpp"

#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/test_hooks.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {

// The stand-in as the primary of replica set "rs0", on a free port, for one test.
class replica_set_standin {
 public:
  replica_set_standin() {
    port_file_ = (std::filesystem::temp_directory_path() / (test::unique_collection("rs_port") + ".txt")).string();
    proc_ = std::make_unique<test::child_process>(std::vector<std::string>{
        "/usr/bin/python3", test::env_or("DIBS_MONGO_STANDIN", DIBS_MONGO_STANDIN), "--port", "0", "--port-file",
        port_file_, "--replica-set", "rs0"});
    for (int i = 0; i < 300 && port_.empty(); ++i) {
      std::ifstream in(port_file_);
      std::getline(in, port_);
      if (port_.empty()) std::this_thread::sleep_for(50ms);
    }
    if (port_.empty()) throw std::runtime_error("the replica-set stand-in did not start");
  }
  ~replica_set_standin() {
    proc_->signal(SIGTERM);
    std::string out;
    proc_->finish(out);
    std::filesystem::remove(port_file_);
  }
  std::string uri(const std::string& options) const {
    return "mongodb://127.0.0.1:" + port_ + "/?replicaSet=rs0&serverSelectionTimeoutMS=5000&" + options;
  }

 private:
  std::string port_file_, port_;
  std::unique_ptr<test::child_process> proc_;
};

struct logged_command {
  std::string name;
  std::string read_mode;  // "" when the command carried no $readPreference (= primary)
  std::string w;          // "" when it carried no writeConcern; "majority" or the number
  bool journal = false;
};

std::vector<logged_command> command_log(mongo::mongo_store& s) {
  auto reply = mongo::from_json(mongo::run_command(s, R"({"dibsCommandLog": 1})"));
  std::vector<logged_command> out;
  bson_iter_t it, arr;
  if (!bson_iter_init_find(&it, reply.get(), "commands") || !bson_iter_recurse(&it, &arr)) return out;
  while (bson_iter_next(&arr)) {
    bson_iter_t entry, child;
    if (!bson_iter_recurse(&arr, &entry)) continue;
    logged_command c;
    while (bson_iter_next(&entry)) {
      const std::string key = bson_iter_key(&entry);
      if (key == "name") c.name = bson_iter_utf8(&entry, nullptr);
      if (key == "readPreference" && BSON_ITER_HOLDS_DOCUMENT(&entry) && bson_iter_recurse(&entry, &child) &&
          bson_iter_find(&child, "mode"))
        c.read_mode = bson_iter_utf8(&child, nullptr);
      if (key == "writeConcern" && BSON_ITER_HOLDS_DOCUMENT(&entry) && bson_iter_recurse(&entry, &child)) {
        while (bson_iter_next(&child)) {
          const std::string k = bson_iter_key(&child);
          if (k == "w") c.w = BSON_ITER_HOLDS_UTF8(&child) ? bson_iter_utf8(&child, nullptr)
                                                          : std::to_string(bson_iter_as_int64(&child));
          if (k == "j") c.journal = bson_iter_as_bool(&child);
        }
      }
    }
    out.push_back(c);
  }
  return out;
}

const std::set<std::string> reads{"find", "aggregate", "count", "distinct", "getMore"};
const std::set<std::string> writes{"insert", "update", "delete", "findAndModify"};

// Claims and completes every document of the collection; returns how many were completed.
std::size_t claim_and_complete_all(mongo::mongo_store& s) {
  std::size_t done = 0;
  for (int round = 0; round < 100; ++round) {
    auto got = s.claim_blocking({10, "w", 60s, 1s});
    if (got.empty()) break;
    std::vector<completion> batch;
    for (auto& j : got) batch.push_back(completion{j.ref(), R"({"city":"Paris"})"});
    done += s.complete_blocking(batch).applied;
  }
  return done;
}

}  // namespace

TEST_CASE("MongoDB: with readPreference=secondaryPreferred the protocol reads from the primary and writes w:majority",
          "[mongo][replica]") {
  const char* real = std::getenv("MONGODB_URI");
  std::unique_ptr<replica_set_standin> rs;
  if (!real || !*real) rs = std::make_unique<replica_set_standin>();
  for (const char* strategy : {"batch", "update-find", "find-and-modify", "lock-collection"}) {
    DYNAMIC_SECTION(strategy) {
      mongo::mongo_options o;
      o.uri = rs ? rs->uri("readPreference=secondaryPreferred")
                 : test::mongodb_uri() + (test::mongodb_uri().find('?') == std::string::npos ? "?" : "&") +
                       "readPreference=secondaryPreferred";
      o.db = "dibs_test";
      o.collection = test::unique_collection("rs");
      o.strategy = *mongo::parse_strategy(strategy);
      o.threads = 2;
      mongo::mongo_store s(o);
      mongo::drop(s);
      REQUIRE(s.seed(40, 8) == 40);
      if (rs) mongo::run_command(s, R"({"dibsResetCommandLog": 1})");
      CHECK(claim_and_complete_all(s) == 40);
      const auto st = s.stats_blocking();
      CHECK(st.done == 40);
      CHECK(st.drained());
      if (!rs) return;  // a real server keeps no command log

      std::size_t n_reads = 0, n_writes = 0;
      for (const auto& c : command_log(s)) {
        if (reads.count(c.name)) {
          ++n_reads;
          INFO(c.name);
          CHECK((c.read_mode.empty() || c.read_mode == "primary"));
        }
        if (writes.count(c.name)) {
          ++n_writes;
          INFO(c.name);
          CHECK(c.w == "majority");
          CHECK(c.journal);
        }
      }
      CHECK(n_reads > 0);
      CHECK(n_writes > 0);
    }
  }
}

TEST_CASE("MongoDB: a write concern the URI names is honoured, and w=0 is refused at start", "[mongo][replica]") {
  const char* real = std::getenv("MONGODB_URI");
  if (real && *real) return;  // the command log is the stand-in's
  replica_set_standin rs;
  mongo::mongo_options o;
  o.uri = rs.uri("w=1");
  o.db = "dibs_test";
  o.collection = test::unique_collection("rs_w1");
  mongo::mongo_store s(o);
  mongo::drop(s);
  s.seed(5, 1);
  mongo::run_command(s, R"({"dibsResetCommandLog": 1})");
  CHECK(claim_and_complete_all(s) == 5);
  std::size_t n_writes = 0;
  for (const auto& c : command_log(s))
    if (writes.count(c.name)) {
      ++n_writes;
      CHECK(c.w == "1");
    }
  CHECK(n_writes > 0);

  o.uri = "mongodb://u:secret@127.0.0.1:1/?w=0";
  CHECK_THROWS_WITH(mongo::mongo_store(o), Catch::Contains("w=0 (unacknowledged)") && !Catch::Contains("secret"));
}
