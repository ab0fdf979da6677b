// Built against the installed dibs only, as docs/library.md tells a user to: a processor and the
// memory store, to the end; the same processor over a JSON Lines file (finish() writes OUT); and,
// when the test gives it a MariaDB URI (DIBS_CONSUMER_MYSQL_URI), over a SQL table it makes.
#include <dibs/stores/memory_store.hpp>
#include <dibs/stores/open_store.hpp>
#include <dibs/engine.hpp>

#include <boost/asio/use_future.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

class upper final : public dibs::processor {
 public:
  dibs::awaitable<dibs::outcome> process(dibs::job j) override {
    co_return dibs::outcome::done("{\"seen\":\"" + j.field("originatingIp")->value + "\"}");
  }
};

namespace {
dibs::processor_factory processors() {
  return [](const dibs::shard_info&) { return std::make_unique<upper>(); };
}

// A file of `n` lines in, OUT written by finish(): the lines it holds with the answer.
bool file_mode(const std::string& dir, int n) {
  const std::string in = dir + "/customers.jsonl", out = dir + "/enriched.jsonl";
  {
    std::ofstream f(in);
    for (int i = 0; i < n; ++i) f << "{\"cust\":" << i << ",\"originatingIp\":\"10.0.0." << i << "\"}\n";
  }
  dibs::store_options o;
  o.out = out;
  auto store = dibs::open_store("jsonl:" + in, o);
  dibs::engine e({}, store, processors());
  e.start();
  e.wait();
  const auto said = store->finish(e.drained());  // writes OUT (and removes the journal)
  std::ifstream f(out);
  int answered = 0;
  for (std::string line; std::getline(f, line);)
    if (line.find("\"seen\":\"10.0.0.") != std::string::npos) ++answered;
  std::printf("consumer: file mode: %s; OUT has %d answered lines%s%s\n", e.summary().line().c_str(), answered,
              said.empty() ? "" : "; ", said.c_str());
  return answered == n;
}

// A table of its own on the server `uri` names (no ?table=), made and seeded through the library.
bool sql_store(const std::string& uri, int n) {
  const std::string table = "consumer_" + std::to_string(::getpid());
  auto store = dibs::open_store(uri + "?table=" + table);  // a missing table is created (create_table)
  store->seed(static_cast<std::size_t>(n), 5);
  dibs::engine e({}, store, processors());
  e.start();
  e.wait();
  const auto st = store->stats_blocking();
  std::printf("consumer: sql: %s; store: done=%llu pending=%llu\n", e.summary().line().c_str(),
              static_cast<unsigned long long>(st.done), static_cast<unsigned long long>(st.pending));
  return st.done == static_cast<std::uint64_t>(n) && st.pending == 0;
}
}  // namespace

int main(int argc, char** argv) {
  auto store = std::make_shared<dibs::memory_store>();
  store->seed_random_ips(1000, 3);
  dibs::engine e({}, store, processors());
  e.start();
  e.wait();
  std::printf("consumer: %s\n", e.summary().line().c_str());

  // The same as an Asio operation, completing with the summary.
  auto again = std::make_shared<dibs::memory_store>();
  again->seed_random_ips(500, 4);
  dibs::engine op({}, again, processors());
  const dibs::run_summary s = op.async_run(boost::asio::use_future).get();
  std::printf("consumer: async_run: %s ended=%s\n", s.line().c_str(), dibs::to_string(s.ended));
  bool ok = e.summary().completed == 1000 && s.completed == 500 && s.ended == dibs::end_reason::drained;

  if (argc > 1) ok = file_mode(argv[1], 40) && ok;
  if (const char* uri = std::getenv("DIBS_CONSUMER_MYSQL_URI"); uri && *uri) ok = sql_store(uri, 30) && ok;
  return ok ? 0 : 1;
}
