// dibs_claim_probe URI DB COLLECTION STRATEGY BATCH WORKER: claims batches until nothing is left
// and prints each claimed id on its own line (leases are long and never completed). Several
// probes at once show whether two processes can ever hold the same item. The store comes from
// open_store, as the CLI's does; "-" for DB, COLLECTION or STRATEGY leaves it to the URI and the
// store (a mysql:// URI names its table itself).
#include <dibs/stores/open_store.hpp>

#include <dibs/blocking_store.hpp>

#include <cstdio>
#include <memory>
#include <string>

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s URI DB COLLECTION STRATEGY BATCH WORKER\n", argv[0]);
    return 2;
  }
  auto given = [](const char* arg) { return std::string(arg) == "-" ? std::string() : std::string(arg); };
  dibs::store_options o;
  o.database = given(argv[2]);
  o.collection = given(argv[3]);
  if (const auto claim = given(argv[4]); !claim.empty()) o.claim = claim;
  o.threads = 1;
  o.create_schema = false;
  const auto opened = dibs::open_store(argv[1], o);
  auto* store = dynamic_cast<dibs::blocking_store*>(opened.get());
  if (!store) {
    std::fprintf(stderr, "%s: this store has no blocking claims\n", argv[0]);
    return 2;
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
