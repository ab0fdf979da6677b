// An engine with its HTTP controls, for the control server's tests: a memory store (that counts
// its stats() calls: a full-table count on a real store) of 20 items, --follow so the engine
// keeps running, calling a stub API, all on an io_context of its own thread.
#pragma once

#include "support/memory_admin.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>
#include <dibs/control/control_server.hpp>
#include <dibs/http/http_processor.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <memory>
#include <thread>

namespace dibs::test {

class counting_store final : public counted_memory<store> {
 public:
  std::string describe() const override { return "counting " + inner_.describe(); }
};

struct controlled_engine {
  stub::ipapi_stub api{stub::stub_options::loopback(std::chrono::milliseconds(1))};
  std::shared_ptr<counting_store> st = std::make_shared<counting_store>();
  std::unique_ptr<engine> e;
  net::io_context ioc{1};
  std::unique_ptr<http::control_server> controls;
  std::thread runner;

  template <class... Args>
  explicit controlled_engine(Args&&... control_args) {
    api.start();
    st->inner().seed_random_ips(20, 7);
    http::processor_options p;
    p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
    engine_config cfg;
    cfg.concurrency = 4;
    cfg.follow = true;
    e = std::make_unique<engine>(cfg, st, http::make_http_processor_factory(p));
    controls = std::make_unique<http::control_server>(ioc, *e, std::forward<Args>(control_args)...);
    controls->start();
    e->start_on(ioc);
    runner = std::thread([this] { ioc.run(); });
  }
  ~controlled_engine() {
    e->stop();
    net::post(ioc, [this] { controls->stop(); });
    runner.join();
    api.stop();
  }
  std::uint16_t port() const { return controls->port(); }
};

}  // namespace dibs::test
