// dibs_claim_probe URI DB COLLECTION STRATEGY BATCH WORKER: claims batches until nothing is left
// (a mysql:// URI names its table itself; DB, COLLECTION and STRATEGY are then ignored)
// and prints each claimed id on its own line (leases are long and never completed). Several
// probes at once show whether two processes can ever hold the same item.
#include <adapters/mongo/mongo_store.hpp>
#include <adapters/mysql/mysql_store.hpp>

#include <memory>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s URI DB COLLECTION STRATEGY BATCH WORKER\n", argv[0]);
    return 2;
  }
  std::unique_ptr<dibs::blocking_store> store;
  const std::string uri = argv[1];
  if (uri.rfind("mysql://", 0) == 0) {
    dibs::sql::mysql_options o;
    o.uri = uri;
    o.threads = 1;
    o.create_table = false;
    store = std::make_unique<dibs::sql::mysql_store>(o);
  } else {
    dibs::mongo::mongo_options o;
    o.uri = uri;
    o.db = argv[2];
    o.collection = argv[3];
    o.strategy = *dibs::mongo::parse_strategy(argv[4]);
    o.threads = 1;
    o.create_indexes = false;
    store = std::make_unique<dibs::mongo::mongo_store>(o);
  }
  auto& s = *store;
  const auto batch = static_cast<std::size_t>(std::stoul(argv[5]));
  // A claim may come back empty while others hold the candidates: stop once nothing is pending.
  for (int rounds = 0; rounds < 100'000; ++rounds) {
    auto got = s.claim_blocking({batch, argv[6], std::chrono::minutes(10), std::chrono::seconds(1)});
    for (const auto& j : got) std::printf("%s\n", j.id.c_str());
    if (got.empty() && s.stats_blocking().pending == 0) break;
  }
  return 0;
}
