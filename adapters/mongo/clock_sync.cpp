#include "clock_sync.hpp"

#include <dibs/log.hpp>

namespace dibs::mongo {

void clock_sync::measure() {
  auto c = conn_.client();
  measure_on(c.get());
}

void clock_sync::measure_on(mongoc_client_t* c) {
  bson_error_t err;
  auto try_cmd = [&](const char* name, driver_reply& reply) {
    auto cmd = make_bson();
    BSON_APPEND_INT32(cmd.get(), name, 1);
    return mongoc_client_command_simple(c, "admin", cmd.get(), nullptr, reply.out(), &err);
  };
  const auto before = clock_.steady_now();
  driver_reply hello;
  const bool hello_ok = try_cmd("hello", hello);
  driver_reply is_master;
  // isMaster only for a server too old for hello: a server that can't be reached is told after
  // one server selection timeout, not two.
  const bool ok = hello_ok || (err.domain != MONGOC_ERROR_SERVER_SELECTION && try_cmd("isMaster", is_master));
  const auto after = clock_.steady_now();
  if (!ok) throw mongo_error("cannot reach MongoDB at " + conn_.redacted(), err);
  const bson_t* reply = hello_ok ? hello.get() : is_master.get();
  bson_iter_t it;
  if (bson_iter_init_find(&it, reply, "localTime") && BSON_ITER_HOLDS_DATE_TIME(&it)) {
    const store_time server_time = store_time{} + millis(bson_iter_date_time(&it));
    if (auto jump = clock_.record(server_time, before, after))
      log::warn("mongodb: the server's clock is ", jump->count(), " ms off what the last measurement predicted "
                "(a clock was stepped); leases now follow the server's new time");
    log::debug("mongodb: the server's clock measured: ", clock_.offset().count(), " ms ahead of this machine's, ",
               "within ", std::chrono::duration_cast<std::chrono::milliseconds>(after - before).count() / 2, " ms");
  }
  gate_.mark(clock_.steady_now());
}

void clock_sync::refresh_if_due(mongoc_client_t* held) {
  if (!gate_.take(clock_.steady_now())) return;
  try {
    if (held) measure_on(held);
    else measure();
  } catch (const std::exception& e) {
    log::warn("mongodb: clock refresh failed: ", e.what());
  }
}

}  // namespace dibs::mongo
