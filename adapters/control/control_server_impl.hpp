// The control server's insides (control_server.hpp), shared by the two files that make it:
// control_server.cpp, what each endpoint answers; control_session.cpp, how connections are
// taken (control_slots.hpp), bounded (control_framing.hpp) and let through (control_access.hpp).
// Private to those two files.
#pragma once

#include "adapters/http/reuse/cached_fetch.hpp"
#include "control_access.hpp"
#include <dibs/control/control_server.hpp>
#include "control_slots.hpp"
#include "run_history.hpp"

#include <dibs/offload.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/verb.hpp>

#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::http {

struct control_server::impl : std::enable_shared_from_this<impl> {
  impl(net::io_context& i, engine& e, control_options o);

  struct answer {
    unsigned status = 200;
    std::string content_type = "application/json";
    std::string body;
    bool page = false;  // the dashboard: sent with headers that keep it out of other sites' frames
  };
  // What an endpoint knows of its request besides the route: its body and who sent it.
  struct request_in {
    const std::string& body;
    bool peer_loopback;  // the connection comes from this host
  };

  // ---- the endpoints (control_server.cpp) -------------------------------------------------
  run_reading reading() const;
  awaitable<void> sample_loop();
  awaitable<std::optional<store_stats>> store_counts();
  awaitable<std::optional<std::vector<lease_holder>>> store_holders();
  awaitable<std::optional<std::vector<failure_reason>>> store_reasons();
  static answer error(unsigned status, const std::string& why);
  static answer no_admin();
  // A store's failure, as the controls answer it: without the store's own words, which may
  // quote a statement (SQL) or a server's details; those go to the log.
  static std::string store_failure(const char* doing, const std::exception& e);

  awaitable<answer> page(request_in in);
  awaitable<answer> history_view(request_in in);
  awaitable<answer> status(request_in in);
  awaitable<answer> metrics(request_in in);
  awaitable<answer> workers(request_in in);
  awaitable<answer> pause_or_resume(bool pause);
  awaitable<answer> pause(request_in in);
  awaitable<answer> resume(request_in in);
  awaitable<answer> concurrency(request_in in);
  awaitable<answer> rate(request_in in);
  template <class Call>
  awaitable<std::optional<std::uint64_t>> admin_change(Call call, const char* doing, answer& failed);
  awaitable<answer> release(request_in in);
  awaitable<answer> retry(request_in in);

  using handler = awaitable<answer> (impl::*)(request_in in);
  struct route_entry {
    std::string_view path;
    boost::beast::http::verb method;
    handler run;
  };
  // Every endpoint, once: the 405 and the 404's list come from here too.
  static constexpr route_entry routes[] = {
      {"/", boost::beast::http::verb::get, &impl::page},
      {"/history", boost::beast::http::verb::get, &impl::history_view},
      {"/status", boost::beast::http::verb::get, &impl::status},
      {"/metrics", boost::beast::http::verb::get, &impl::metrics},
      {"/workers", boost::beast::http::verb::get, &impl::workers},
      {"/pause", boost::beast::http::verb::post, &impl::pause},
      {"/resume", boost::beast::http::verb::post, &impl::resume},
      {"/release", boost::beast::http::verb::post, &impl::release},
      {"/concurrency", boost::beast::http::verb::post, &impl::concurrency},
      {"/rate", boost::beast::http::verb::post, &impl::rate},
      {"/retry", boost::beast::http::verb::post, &impl::retry},
  };
  static std::string endpoint_list();
  awaitable<answer> route(boost::beast::http::verb method, std::string_view target, request_in in);

  // ---- the connections (control_session.cpp) ----------------------------------------------
  struct session_slot {
    boost::beast::tcp_stream stream;
    control_slots::id slot;
  };
  using session_list = std::list<session_slot>;
  awaitable<void> accept_loop();
  awaitable<void> session(session_list::iterator it, bool peer_loopback);
  // Closes a session's connection (its coroutine then ends and frees the slot).
  void drop(control_slots::id which);

  net::io_context& ioc;
  engine& eng;
  control_options opts;
  control_access access;
  boost::asio::ip::tcp::acceptor acceptor;
  net::steady_timer sampler;
  run_history history;
  bool stopped = false;
  session_list sessions;
  control_slots slots;
  cached_value<store_stats> counts;
  cached_value<std::vector<lease_holder>> holders;
  cached_value<std::vector<failure_reason>> reasons;
  std::uint64_t operator_released = 0;  // leases freed by POST /release, since start
  std::string holders_error_logged;     // the store's last error logged for GET /workers (once each)
  offload_pool admin_pool{1};           // the admin store's blocking calls
};

}  // namespace dibs::http
