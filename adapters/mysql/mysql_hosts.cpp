#include "mysql_hosts.hpp"

#include "server_errors.hpp"

namespace dibs::mysql {

std::vector<std::size_t> connect_order(std::size_t hosts, std::size_t current) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < hosts; ++i) order.push_back((current + i) % hosts);
  return order;
}

std::size_t after_loss(std::size_t hosts, std::size_t failed) { return hosts == 0 ? 0 : (failed + 1) % hosts; }

bool another_host_may_answer(unsigned code, std::string_view server_message) {
  const auto kind = classify(code);
  if (kind == error_class::node_unready) return server_message.find("WSREP") != std::string_view::npos;
  return kind == error_class::link_lost;
}

bool is_claim_conflict(unsigned code) { return classify(code) == error_class::rerun; }

}  // namespace dibs::mysql
