// dibs_claim_probe URI DB COLLECTION STRATEGY BATCH WORKER: claims batches until nothing is left
// and prints each claimed id on its own line (leases are long and never completed). Several
// probes at once show whether two processes can ever hold the same item.
#include <adapters/mongo/mongo_store.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s URI DB COLLECTION STRATEGY BATCH WORKER\n", argv[0]);
    return 2;
  }
  dibs::mongo::mongo_options o;
  o.uri = argv[1];
  o.db = argv[2];
  o.collection = argv[3];
  o.strategy = *dibs::mongo::parse_strategy(argv[4]);
  o.threads = 1;
  o.create_indexes = false;
  dibs::mongo::mongo_store s(o);
  const auto batch = static_cast<std::size_t>(std::stoul(argv[5]));
  // A claim may come back empty while others hold the candidates: stop once nothing is pending.
  for (int rounds = 0; rounds < 100'000; ++rounds) {
    auto got = s.claim_blocking({batch, argv[6], std::chrono::minutes(10), std::chrono::seconds(1)});
    for (const auto& j : got) std::printf("%s\n", j.id.c_str());
    if (got.empty() && s.stats_blocking().pending == 0) break;
  }
  return 0;
}
