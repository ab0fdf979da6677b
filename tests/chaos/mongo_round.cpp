#include "mongo_round.hpp"

#include "mongo_checker.hpp"
#include "support/mongo_env.hpp"

#include <adapters/mongo/test_hooks.hpp>
#include <dibs/stores/open_store.hpp>

#include <cstdio>
#include <stdexcept>

namespace dibs::chaos {

void mongo_round::run() {
  // lock-collection too: the strategy the README calls weaker is the one to watch.
  static constexpr const char* strategies[] = {"batch", "update-find", "find-and-modify", "lock-collection"};
  strategy_ = s_.claim.empty() ? strategies[(round_ - 1) % 4] : s_.claim;
  collection_ = test::unique_collection("chaos");
  const auto uri = test::mongodb_uri();
  store_options o;
  o.database = "dibs_chaos";
  o.collection = collection_;
  o.threads = 2;
  store_ = std::dynamic_pointer_cast<mongo::mongo_store>(open_store(uri, o));
  if (!store_) throw std::runtime_error("the MongoDB URI opened another kind of store");
  mongo::drop(*store_);
  mongo_check_input in{store_.get(), collection_, s_.items, s_.max_attempts, s_.poison_rate, 0,
                       std::string(strategy_) == "lock-collection", true};
  in.write_log = watch_writes(in);
  if (!in.write_log) {
    ++t_.unchecked_rounds;
    std::printf("chaos: round %d: WARNING: this server keeps no write log (a real mongod, MONGODB_URI): the checks "
                "that need it (written-twice, unrecorded, stale-writer, stale-fail, expired-lease) are SKIPPED; "
                "only the documents are checked\n", round_);
  }
  std::printf("chaos: round %d: claim strategy %s\n", round_, strategy_.c_str());
  store_->seed(s_.items - s_.items / 50, rng_());
  std::string docs;
  for (std::size_t i = 0; i < s_.items / 50; ++i)
    docs += std::string(docs.empty() ? "" : ",") + "{\"originatingIp\": \"10.1.0." + std::to_string(i + 1) + "\", \"location\": null}";
  if (!docs.empty()) mongo::run_command(*store_, "{\"insert\": \"" + collection_ + "\", \"documents\": [" + docs + "]}");
  t_.items += s_.items;

  // The workers reach the server through the proxy: the URI's host list replaced.
  uri_ = uri;
  if (s_.proxy) {
    const auto where = parse_store_uri(uri);
    proxy_ = std::make_unique<test::tcp_proxy>(where.host, where.port ? where.port : 27017);
    uri_ = where.with_hosts("127.0.0.1:" + std::to_string(proxy_->port()));
  }

  start_api();
  in.poison_seed = poison_seed_;
  run_workers(false);
  stop_api();
  proxy_.reset();
  if (s_.inject) {
    if (!in.write_log) throw std::runtime_error("--inject-violations needs the stand-in's write log");
    inject_mongo_violations(in);
  }
  check_mongo(in, round_, t_);
  mongo::drop(*store_);
}

void mongo_round::print_open_items() {
  std::printf("chaos: open documents: %s\n",
              mongo::run_command(*store_, "{\"find\": \"" + collection_ + "\", \"filter\": {\"location\": null, "
                                  "\"_dibs.failed\": {\"$exists\": false}}, \"limit\": 20}").c_str());
}

}  // namespace dibs::chaos
