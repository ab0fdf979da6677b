// Built against the installed dibs only: a processor and the memory store, to the end.
#include <dibs/stores/memory_store.hpp>
#include <dibs/engine.hpp>

#include <boost/asio/use_future.hpp>

#include <cstdio>

class upper final : public dibs::processor {
 public:
  dibs::awaitable<dibs::outcome> process(dibs::job j) override {
    co_return dibs::outcome::done("{\"seen\":\"" + j.field("originatingIp")->value + "\"}");
  }
};

int main() {
  auto store = std::make_shared<dibs::memory_store>();
  store->seed_random_ips(1000, 3);
  dibs::engine e({}, store, [](const dibs::shard_info&) { return std::make_unique<upper>(); });
  e.start();
  e.wait();
  std::printf("consumer: %s\n", e.summary().line().c_str());

  // The same as an Asio operation, completing with the summary.
  auto again = std::make_shared<dibs::memory_store>();
  again->seed_random_ips(500, 4);
  dibs::engine op({}, again, [](const dibs::shard_info&) { return std::make_unique<upper>(); });
  const dibs::run_summary s = op.async_run(boost::asio::use_future).get();
  std::printf("consumer: async_run: %s ended=%s\n", s.line().c_str(), dibs::to_string(s.ended));
  return e.summary().completed == 1000 && s.completed == 500 && s.ended == dibs::end_reason::drained ? 0 : 1;
}
