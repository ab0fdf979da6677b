// dibs against the loopback limit: every figure measured in this run, against the ip-api stub
// running as its own process (`dibs stub`, one thread), so that this process's CPU and memory
// are dibs's own.
//
//   ceiling   raw HTTP round trips/s with dibs's HTTP client and no store, then dibs end to end
//             on the memory store at 0 ms API latency: docs/s and its ratio to the ceiling
//   latency   API latency 20/100/500 ms x concurrency 100/1,000/10,000: docs/s, its ratio to
//             concurrency / latency, peak RSS and bytes per in-flight pipeline
//   cores     1 shard against 2 shards
//
//   dibs_bench_engine --dibs build/bin/dibs [--parts ceiling,latency,cores] [--json out.json]
#include <dibs/http/client.hpp>
#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <CLI/CLI.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

using namespace dibs;
using namespace std::chrono_literals;

namespace {

// `dibs stub` as a child process; its port is read from its first line of output.
class stub_process {
 public:
  stub_process(const std::string& dibs, int latency_ms) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t a;
    posix_spawn_file_actions_init(&a);
    posix_spawn_file_actions_adddup2(&a, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&a, fds[0]);
    const std::string lat = std::to_string(latency_ms);
    std::vector<const char*> argv{dibs.c_str(), "stub", "--port", "0", "--latency-ms", lat.c_str(), nullptr};
    if (::posix_spawn(&pid_, dibs.c_str(), &a, nullptr, const_cast<char**>(argv.data()), environ) != 0)
      throw std::runtime_error("cannot start " + dibs);
    posix_spawn_file_actions_destroy(&a);
    ::close(fds[1]);
    out_ = ::fdopen(fds[0], "r");
    char line[256] = {};
    if (!std::fgets(line, sizeof line, out_)) throw std::runtime_error("the stub printed nothing");
    const char* colon = std::strrchr(std::strstr(line, "http://") + 7, ':');
    port_ = static_cast<std::uint16_t>(std::atoi(colon + 1));
  }
  ~stub_process() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    if (out_) std::fclose(out_);
  }
  std::uint16_t port() const { return port_; }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  std::uint16_t port_ = 0;
};

double cpu_now() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::size_t rss_bytes() {
  std::ifstream in("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// Raw round trips: `shards` threads, each with its own client, `concurrency` loops in all.
double ceiling_rps(std::uint16_t port, std::size_t shards, std::size_t concurrency, std::size_t requests) {
  std::atomic<std::int64_t> left{static_cast<std::int64_t>(requests)};  // signed: it goes below 0 at the end
  std::atomic<std::size_t> errors{0};
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t s = 0; s < shards; ++s) {
    threads.emplace_back([&, s] {
      net::io_context ioc(1);
      http::client client(ioc.get_executor(), {});
      auto loop = [&](std::size_t i) -> awaitable<void> {
        std::string target = "/json/8.8." + std::to_string(i % 250) + "." + std::to_string(s + 1);
        while (left.fetch_sub(1) > 0) {
          http::origin to{"127.0.0.1", port, false};
          std::string t = target;
          auto r = co_await client.get(std::move(to), std::move(t));
          if (r.ec || r.status != 200) ++errors;
        }
      };
      for (std::size_t i = s; i < concurrency; i += shards) net::co_spawn(ioc, loop(i), net::detached);
      ioc.run();
    });
  }
  for (auto& t : threads) t.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (errors) std::fprintf(stderr, "ceiling: %zu errors\n", errors.load());
  return double(requests) / secs;
}

struct run_figures {
  double docs_per_s = 0;
  double cpu_us_per_doc = 0;
  double peak_rss_mb = 0;
  double bytes_per_pipeline = 0;
  bool all_done = true;  // every document completed: else the figures describe a broken run
};

run_figures engine_run(const std::string& base, std::size_t docs, std::size_t concurrency, std::size_t shards,
                       std::size_t max_connections = 0, bool fixed = false) {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(docs, 3);
  engine_config cfg;
  cfg.shards = shards;
  cfg.concurrency = concurrency;
  cfg.claim_batch = 100;
  http::processor_options popts;
  popts.url = http::url_template::parse(base + "/json/{originatingIp}");
  popts.max_connections = max_connections;  // --max-connections, split across the shards
  popts.shards = shards;
  if (fixed) popts.adaptive.reset();  // --fixed-concurrency: every pipeline calls at once
  engine e(cfg, st, http::make_http_processor_factory(popts));

  const auto baseline = rss_bytes();
  std::atomic<bool> done{false};
  std::size_t peak = baseline, at_full = 0;
  std::int64_t full_in_flight = 0;
  std::thread sampler([&] {
    const auto want = static_cast<std::int64_t>(std::min(concurrency, docs) * 95 / 100);
    while (!done) {
      const auto rss = rss_bytes();
      peak = std::max(peak, rss);
      const auto in_flight = load(e.figures().in_flight);
      if (!at_full && in_flight >= want) {
        at_full = rss;  // memory with every pipeline busy, before many results pile up
        full_in_flight = in_flight;
      }
      std::this_thread::sleep_for(2ms);
    }
  });
  const double cpu0 = cpu_now();
  e.start();
  e.wait();
  const double cpu = cpu_now() - cpu0;
  done = true;
  sampler.join();
  const auto s = e.summary();
  run_figures f;
  f.docs_per_s = s.docs_per_s();
  f.cpu_us_per_doc = s.completed ? cpu / double(s.completed) * 1e6 : 0;
  f.peak_rss_mb = double(peak) / (1024.0 * 1024.0);
  f.bytes_per_pipeline = at_full && full_in_flight ? double(at_full - baseline) / double(full_in_flight) : 0;
  f.all_done = s.completed == docs;
  if (!f.all_done) std::fprintf(stderr, "warning: %llu of %zu documents completed\n", (unsigned long long)s.completed, docs);
  return f;
}

// engine_run in a child process of this program, so that memory freed by earlier runs (which
// the allocator keeps) can't hide what this run needs.
run_figures fresh_run(const char* self, const std::string& base, std::size_t docs, std::size_t c, std::size_t shards,
                      bool fixed = false) {
  const std::string cmd = std::string(self) + " --one " + base + "," + std::to_string(docs) + "," + std::to_string(c) +
                          "," + std::to_string(shards) + ",0," + (fixed ? "1" : "0");
  FILE* p = ::popen(cmd.c_str(), "r");
  run_figures f;
  if (p) {
    if (std::fscanf(p, "%lf %lf %lf %lf", &f.docs_per_s, &f.cpu_us_per_doc, &f.peak_rss_mb, &f.bytes_per_pipeline) != 4)
      std::fprintf(stderr, "warning: no figures from %s\n", cmd.c_str());
    ::pclose(p);
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dibs against the loopback limit"};
  std::string dibs_bin = "build/bin/dibs", parts = "ceiling,latency,cores", json_path;
  app.add_option("--dibs", dibs_bin, "the dibs binary (its `stub` command serves the API)")->capture_default_str();
  app.add_option("--parts", parts)->capture_default_str();
  app.add_option("--json", json_path, "also write every row as JSON");
  // "BASE,DOCS,CONCURRENCY,SHARDS[,MAX_CONNECTIONS[,FIXED]]": one run in this fresh process (its RSS is
  // its own); scripts/bench_client.sh runs it against its own stub.
  std::string one;
  app.add_option("--one", one, "internal: one run, figures on one line");
  CLI11_PARSE(app, argc, argv);
  if (!one.empty()) {
    char base[128] = {};
    std::size_t docs = 0, c = 0, shards = 0, max_connections = 0, fixed = 0;
    if (std::sscanf(one.c_str(), "%127[^,],%zu,%zu,%zu,%zu,%zu", base, &docs, &c, &shards, &max_connections, &fixed) < 4) return 2;
    const auto f = engine_run(base, docs, c, shards, max_connections, fixed != 0);
    std::printf("%f %f %f %f\n", f.docs_per_s, f.cpu_us_per_doc, f.peak_rss_mb, f.bytes_per_pipeline);
    return f.all_done ? 0 : 1;  // scripts/bench_client.sh stops on it
  }
  ::signal(SIGPIPE, SIG_IGN);
  std::ostringstream json;
  json << "{";
  bool first_section = true;
  auto section = [&](const char* name) {
    json << (first_section ? "" : "],") << "\"" << name << "\":[";
    first_section = false;
  };

  if (parts.find("ceiling") != std::string::npos) {
    stub_process stub(dibs_bin, 0);
    const double rps = ceiling_rps(stub.port(), 2, 1000, 100'000);
    const auto d = fresh_run(argv[0], stub.base(), 100'000, 1000, 2);
    std::printf("## Ceiling: the loopback limit and dibs at 0 ms API latency\n\n");
    std::printf("| measurement | per second | ratio to the ceiling | CPU µs/doc |\n|---|---|---|---|\n");
    std::printf("| raw HTTP round trips (dibs's client, 2 threads, 1,000 in flight, no store) | %.0f | 1.00 | |\n", rps);
    const auto fixed = fresh_run(argv[0], stub.base(), 100'000, 1000, 2, true);
    std::printf("| dibs end to end, memory store, 100,000 docs, concurrency 1,000 (default flags) | %.0f | %.2f | %.1f |\n",
                d.docs_per_s, d.docs_per_s / rps, d.cpu_us_per_doc);
    std::printf("| the same with --fixed-concurrency | %.0f | %.2f | %.1f |\n\n", fixed.docs_per_s, fixed.docs_per_s / rps,
                fixed.cpu_us_per_doc);
    std::fflush(stdout);
    section("ceiling");
    json << "{\"raw_rps\":" << rps << ",\"dibs_docs_per_s\":" << d.docs_per_s << ",\"ratio\":" << d.docs_per_s / rps
         << ",\"fixed_docs_per_s\":" << fixed.docs_per_s << ",\"fixed_ratio\":" << fixed.docs_per_s / rps
         << ",\"cpu_us_per_doc\":" << d.cpu_us_per_doc << "}";
  }

  if (parts.find("latency") != std::string::npos) {
    std::printf("## Latency hiding: docs/s against concurrency / latency, default flags beside --fixed-concurrency\n\n");
    std::printf("Default: the adaptive limit on the API (--concurrency the ceiling). Fixed: every pipeline calls at once\n");
    std::printf("(--fixed-concurrency). Each row's runs last five seconds of work at the ideal rate, and sixty round trips at\n");
    std::printf("least (the default spends its first five finding a ceiling of 10,000: at 500 ms, 2.5 s); run in turns.\n\n");
    std::printf("| latency | concurrency | docs | default docs/s | fixed docs/s | default / fixed | ideal (C/latency) | default / ideal "
                "| peak RSS MB | bytes per pipeline | CPU µs/doc |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    section("latency");
    bool first = true;
    for (int latency : {20, 100, 500}) {
      stub_process stub(dibs_bin, latency);
      for (std::size_t c : {100, 1000, 10000}) {
        const double ideal = double(c) * 1000.0 / latency;
        const double seconds = std::max(5.0, 60.0 * latency / 1000.0);
        const auto docs = static_cast<std::size_t>(std::clamp(ideal * seconds, double(c) * 3, 600'000.0));
        const auto f = fresh_run(argv[0], stub.base(), docs, c, 2);
        const auto fixed = fresh_run(argv[0], stub.base(), docs, c, 2, true);
        const double vs_fixed = fixed.docs_per_s > 0 ? f.docs_per_s / fixed.docs_per_s : 0;
        std::printf("| %d ms | %zu | %zu | %.0f | %.0f | %.2f | %.0f | %.2f | %.0f | %.0f | %.1f |\n", latency, c, docs, f.docs_per_s,
                    fixed.docs_per_s, vs_fixed, ideal, f.docs_per_s / ideal, f.peak_rss_mb, f.bytes_per_pipeline, f.cpu_us_per_doc);
        std::fflush(stdout);
        json << (first ? "" : ",") << "{\"latency_ms\":" << latency << ",\"concurrency\":" << c << ",\"docs\":" << docs
             << ",\"docs_per_s\":" << f.docs_per_s << ",\"fixed_docs_per_s\":" << fixed.docs_per_s
             << ",\"default_vs_fixed\":" << vs_fixed << ",\"ideal\":" << ideal << ",\"ratio\":" << f.docs_per_s / ideal
             << ",\"peak_rss_mb\":" << f.peak_rss_mb << ",\"bytes_per_pipeline\":" << f.bytes_per_pipeline
             << ",\"cpu_us_per_doc\":" << f.cpu_us_per_doc << "}";
        first = false;
      }
    }
    std::printf("\n");
  }

  if (parts.find("cores") != std::string::npos) {
    std::printf("## Cores: 1 shard against 2 shards (concurrency 1,000)\n\n");
    std::printf("| API latency | 1 shard docs/s | 2 shards docs/s | ratio |\n|---|---|---|---|\n");
    section("cores");
    bool first = true;
    for (int latency : {0, 20}) {
      stub_process stub(dibs_bin, latency);
      const auto one = fresh_run(argv[0], stub.base(), 50'000, 1000, 1);
      const auto two = fresh_run(argv[0], stub.base(), 50'000, 1000, 2);
      std::printf("| %d ms | %.0f | %.0f | %.2f |\n", latency, one.docs_per_s, two.docs_per_s,
                  two.docs_per_s / one.docs_per_s);
      std::fflush(stdout);
      json << (first ? "" : ",") << "{\"latency_ms\":" << latency << ",\"one_shard\":" << one.docs_per_s
           << ",\"two_shards\":" << two.docs_per_s << "}";
      first = false;
    }
    std::printf("\n");
  }
  json << "]}\n";
  if (!json_path.empty()) std::ofstream(json_path) << json.str();
  return 0;
}
