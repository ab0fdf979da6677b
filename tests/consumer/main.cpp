// Built against the installed dibs only: a processor and the memory store, to the end.
#include <dibs/stores/memory_store.hpp>
#include <dibs/engine.hpp>

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
  return e.summary().completed == 1000 ? 0 : 1;
}
