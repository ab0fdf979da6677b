// For each claim strategy: enrich N documents (stub at 0 ms, in-process) on the MongoDB server
// at --uri, and print the MongoDB commands sent per completed document, read from the server's
// own counters (the stand-in's {dibsCounts: 1}), plus docs/s. Handshake and monitoring commands
// (hello, isMaster, ping, endSessions) are not counted.
//
//   dibs_bench_mongo --uri mongodb://127.0.0.1:PORT/ [--docs 5000] [--strategies batch,update-find]
#include <adapters/http/http_processor.hpp>
#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/mongo_store.hpp>
#include <examples/stub/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>
#include <sstream>

using namespace dibs;

namespace {
std::map<std::string, long long> server_counts(mongo::mongo_store& s) {
  auto reply = mongo::from_json(s.run_command(R"({"dibsCounts": 1})"));
  std::map<std::string, long long> out;
  bson_iter_t it, counts;
  if (bson_iter_init_find(&it, reply.get(), "counts") && bson_iter_recurse(&it, &counts))
    while (bson_iter_next(&counts)) out[bson_iter_key(&counts)] = bson_iter_as_int64(&counts);
  return out;
}
bool is_monitoring(const std::string& name) {
  return name == "hello" || name == "isMaster" || name == "ismaster" || name == "ping" || name == "endSessions" ||
         name == "buildInfo" || name.rfind("dibs", 0) == 0;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"MongoDB commands per completed document, per claim strategy"};
  std::string uri;
  std::size_t docs = 5000;
  std::string strategies = "batch,lock-collection,update-find,find-and-modify";
  std::size_t concurrency = 200;
  std::string json_out;
  app.add_option("--uri", uri, "MongoDB-wire server with {dibsCounts: 1} (the stand-in)")->required();
  app.add_option("--docs", docs)->capture_default_str();
  app.add_option("--strategies", strategies)->capture_default_str();
  app.add_option("--concurrency", concurrency)->capture_default_str();
  app.add_option("--json", json_out, "also write the rows as JSON");
  CLI11_PARSE(app, argc, argv);

  stub::ipapi_stub api({"127.0.0.1", 0, std::chrono::milliseconds(0), 1});
  api.start();

  std::printf("| strategy | docs | commands/doc | docs/s | claim conflicts | commands |\n|---|---|---|---|---|---|\n");
  std::ostringstream json;
  json << "[";
  std::istringstream list(strategies);
  bool first = true;
  for (std::string name; std::getline(list, name, ',');) {
    auto strategy = mongo::parse_strategy(name);
    if (!strategy) {
      std::fprintf(stderr, "unknown strategy %s\n", name.c_str());
      return 2;
    }
    mongo::mongo_options o;
    o.uri = uri;
    o.db = "dibs_bench";
    o.collection = "rt_" + name;
    o.strategy = *strategy;
    auto st = std::make_shared<mongo::mongo_store>(o);
    st->drop();
    st->seed(docs, 7);
    st->run_command(R"({"dibsResetCounts": 1})");

    engine_config cfg;
    cfg.shards = 2;
    cfg.concurrency = concurrency;
    cfg.claim_batch = 100;
    http::processor_options popts;
    popts.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
    engine e(cfg, st, http::make_http_processor_factory(popts));
    e.start();
    e.wait();
    const auto sum = e.summary();

    long long total = 0;
    std::string detail;
    for (auto& [cmd, n] : server_counts(*st)) {
      if (is_monitoring(cmd)) continue;
      total += n;
      detail += (detail.empty() ? "" : ", ") + cmd + " " + std::to_string(n);
    }
    const double per_doc = sum.completed ? double(total) / double(sum.completed) : 0;
    std::printf("| %s | %llu | %.3f | %.0f | %llu | %s |\n", name.c_str(), (unsigned long long)sum.completed, per_doc,
                sum.docs_per_s(), (unsigned long long)st->claim_conflicts(), detail.c_str());
    std::fflush(stdout);
    json << (first ? "" : ",") << "{\"strategy\":\"" << name << "\",\"docs\":" << sum.completed
         << ",\"commands_per_doc\":" << per_doc << ",\"docs_per_s\":" << sum.docs_per_s()
         << ",\"claim_conflicts\":" << st->claim_conflicts() << "}";
    first = false;
  }
  json << "]\n";
  if (!json_out.empty()) {
    FILE* f = std::fopen(json_out.c_str(), "w");
    if (f) {
      std::fputs(json.str().c_str(), f);
      std::fclose(f);
    }
  }
  return 0;
}
