#include "clock_sync.hpp"

#include <dibs/log.hpp>

#include <optional>

namespace dibs::mongo {

namespace {
// One reading of the server's clock and the steady instants around its round trip.
struct clock_sample {
  store_time server;
  server_clock::steady::time_point before, after;
  server_clock::steady::duration round_trip() const { return after - before; }
};

// Readings taken for one measurement. The first round trip on a client may include what the
// command waited for before it was sent (server selection, a new connection's handshake, a
// stalled link); the server reads its clock only at the end of it, so the shortest round trip is
// the one kept.
constexpr int samples_per_measurement = 3;
}  // namespace

void clock_sync::measure() {
  auto c = conn_.client();
  measure_on(c.get());
}

void clock_sync::measure_on(mongoc_client_t* c) {
  std::optional<clock_sample> best;
  for (int i = 0; i < samples_per_measurement; ++i) {
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
    if (!ok) {
      if (!best) throw mongo_error("cannot reach MongoDB at " + conn_.redacted(), err);
      break;  // the readings so far will do
    }
    bson_iter_t it;
    // A server that does not tell its time: this machine's clock stands in.
    if (!bson_iter_init_find(&it, hello_ok ? hello.get() : is_master.get(), "localTime") || !BSON_ITER_HOLDS_DATE_TIME(&it))
      break;
    const clock_sample s{store_time{} + millis(bson_iter_date_time(&it)), before, after};
    if (!best || s.round_trip() < best->round_trip()) best = s;
  }
  gate_.mark(clock_.steady_now());
  if (!best) return;
  if (auto jump = clock_.record(best->server, best->before, best->after))
    log::warn("mongodb: the server's clock is ", jump->count(), " ms off what the last measurement predicted "
              "(a clock was stepped); leases now follow the server's new time");
  log::debug("mongodb: the server's clock measured: ", clock_.offset().count(), " ms ahead of this machine's, within ",
             clock_.uncertainty().count(), " ms");
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
