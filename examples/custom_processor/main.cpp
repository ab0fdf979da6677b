// A processor that is not HTTP, run by the engine on the caller's own io_context: it classifies
// each document's IPv4 address locally (public, private or reserved, and its /24 network).
// This file is the README's "library" example, compiled with the project.
#include <dibs/stores/memory_store.hpp>

#include <dibs/engine.hpp>
#include <dibs/ipapi/ipv4_ranges.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdio>

// A processor is a coroutine from a claimed job to an outcome: done(json), retry(after, why) or
// fail(why). The engine makes one per shard, so it may keep state without locks.
class classify_processor final : public dibs::processor {
 public:
  dibs::awaitable<dibs::outcome> process(dibs::job j) override {
    const auto* ip = j.field("originatingIp");
    std::uint32_t addr = 0;
    if (!ip || ip->st != dibs::job_field::state::string || !dibs::parse_ipv4(ip->value, addr))
      co_return dibs::outcome::fail("originatingIp is not an IPv4 address");
    const char* range = "public";
    switch (dibs::classify_ipv4(addr)) {
      case dibs::ipv4_range::private_: range = "private"; break;
      case dibs::ipv4_range::reserved: range = "reserved"; break;
      case dibs::ipv4_range::public_: break;
    }
    co_return dibs::outcome::done(std::string("{\"range\":\"") + range + "\",\"network\":\"" +
                                  dibs::ipv4_to_string(addr & 0xffffff00u) + "/24\"}");
  }
};

int main() {
  auto store = std::make_shared<dibs::memory_store>();
  store->seed_random_ips(10'000, 7);
  store->add("192.168.1.20");
  store->add("not an address");

  dibs::engine_config cfg;
  cfg.concurrency = 100;
  dibs::engine e(cfg, store, [](const dibs::shard_info&) { return std::make_unique<classify_processor>(); });

  boost::asio::io_context ioc;  // the application's own; one thread runs it
  e.start_on(ioc);
  auto report = [&]() -> dibs::awaitable<void> {
    co_await e.join();  // resumes on this io_context once the engine has ended
    std::printf("custom_processor: %s\n", e.summary().line().c_str());
  };
  boost::asio::co_spawn(ioc, report(), boost::asio::detached);
  ioc.run();

  std::printf("custom_processor: %s\n", store->document_json("10001").c_str());
  const auto s = e.summary();
  return s.completed == 10'001 && s.failed == 1 ? 0 : 1;
}
