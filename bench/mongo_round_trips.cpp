// For each claim strategy: enrich N documents (stub at 0 ms, in-process) on the MongoDB server
// at --uri, and print the MongoDB commands sent per completed document, read from the server's
// own counters (the stand-in's {dibsCounts: 1}), plus docs/s. Handshake and monitoring commands
// (hello, isMaster, ping, endSessions) are not counted.
//
//   dibs_bench_mongo --uri mongodb://127.0.0.1:PORT/ [--docs 5000] [--strategies batch,update-find]
#include <dibs/http/http_processor.hpp>
#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/test_hooks.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <CLI/CLI.hpp>

#include <sys/resource.h>

#include <cstdio>
#include <map>
#include <sstream>

using namespace dibs;

namespace {
std::map<std::string, long long> server_counts(mongo::mongo_store& s) {
  auto reply = mongo::from_json(mongo::run_command(s, R"({"dibsCounts": 1})"));
  std::map<std::string, long long> out;
  bson_iter_t it, counts;
  if (bson_iter_init_find(&it, reply.get(), "counts") && bson_iter_recurse(&it, &counts))
    while (bson_iter_next(&counts)) out[bson_iter_key(&counts)] = bson_iter_as_int64(&counts);
  return out;
}
double cpu_now() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
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
  std::string python;
  app.add_option("--uri", uri, "MongoDB-wire server with {dibsCounts: 1} (the stand-in)")->required();
  app.add_option("--docs", docs)->capture_default_str();
  app.add_option("--strategies", strategies)->capture_default_str();
  app.add_option("--concurrency", concurrency)->capture_default_str();
  app.add_option("--json", json_out, "also write the rows as JSON");
  app.add_option("--python", python, "also run this one-at-a-time pymongo reference on the same documents");
  CLI11_PARSE(app, argc, argv);

  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();

  std::printf("| strategy | docs | commands/doc | docs/s | CPU µs/doc | claim conflicts | commands |\n|---|---|---|---|---|---|---|\n");
  std::map<std::string, std::pair<double, double>> dibs_rate;  // strategy -> (docs/s, commands/doc)
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
    mongo::drop(*st);
    st->seed(docs, 7);
    mongo::run_command(*st, R"({"dibsResetCounts": 1})");

    engine_config cfg;
    cfg.shards = 2;
    cfg.concurrency = concurrency;
    cfg.claim_batch = 100;
    http::processor_options popts;
    popts.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
    engine e(cfg, st, http::make_http_processor_factory(popts));
    const double cpu0 = cpu_now();
    e.start();
    e.wait();
    const double cpu = cpu_now() - cpu0;
    const auto sum = e.summary();

    long long total = 0;
    std::string detail;
    for (auto& [cmd, n] : server_counts(*st)) {
      if (is_monitoring(cmd)) continue;
      total += n;
      detail += (detail.empty() ? "" : ", ") + cmd + " " + std::to_string(n);
    }
    const double per_doc = sum.completed ? double(total) / double(sum.completed) : 0;
    const double cpu_us = sum.completed ? cpu / double(sum.completed) * 1e6 : 0;
    dibs_rate[name] = {sum.docs_per_s(), per_doc};
    std::printf("| %s | %llu | %.3f | %.0f | %.0f | %llu | %s |\n", name.c_str(), (unsigned long long)sum.completed, per_doc,
                sum.docs_per_s(), cpu_us, (unsigned long long)st->claim_conflicts(), detail.c_str());
    std::fflush(stdout);
    json << (first ? "" : ",") << "{\"strategy\":\"" << name << "\",\"docs\":" << sum.completed
         << ",\"commands_per_doc\":" << per_doc << ",\"docs_per_s\":" << sum.docs_per_s()
         << ",\"claim_conflicts\":" << st->claim_conflicts() << "}";
    first = false;
  }
  if (!python.empty()) {
    mongo::mongo_options o;
    o.uri = uri;
    o.db = "dibs_bench";
    o.collection = "rt_python";
    auto st = std::make_shared<mongo::mongo_store>(o);
    mongo::drop(*st);
    st->seed(docs, 7);
    mongo::run_command(*st, R"({"dibsResetCounts": 1})");
    const std::string cmd = "/usr/bin/python3 " + python + " --uri '" + uri + "' --db dibs_bench --collection rt_python --url " +
                            api.base_url() + "/json/";
    FILE* p = ::popen(cmd.c_str(), "r");
    double n = 0, secs = 0, rate = 0, cpu = 0;
    char line[512];
    while (p && std::fgets(line, sizeof line, p)) std::sscanf(line, "docs=%lf seconds=%lf docs_per_s=%lf cpu_s=%lf", &n, &secs, &rate, &cpu);
    if (p) ::pclose(p);
    long long total = 0;
    for (auto& [c, k] : server_counts(*st))
      if (!is_monitoring(c)) total += k;
    const double per_doc = n > 0 ? double(total) / n : 0;
    std::printf("| pymongo one-at-a-time loop (10 threads) | %.0f | %.3f | %.0f | %.0f | | |\n\n", n, per_doc, rate,
                n > 0 ? cpu / n * 1e6 : 0);
    std::printf("| dibs against the pymongo loop | docs/s ratio | commands/doc ratio |\n|---|---|---|\n");
    for (auto& [name, f] : dibs_rate)
      std::printf("| %s | %.2f | %.3f |\n", name.c_str(), rate > 0 ? f.first / rate : 0, per_doc > 0 ? f.second / per_doc : 0);
    json << (first ? "" : ",") << "{\"strategy\":\"pymongo-loop\",\"docs\":" << n << ",\"commands_per_doc\":" << per_doc
         << ",\"docs_per_s\":" << rate << "}";
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
