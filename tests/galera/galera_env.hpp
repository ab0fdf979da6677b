// The ctest fixture's Galera cluster (tests/servers/galera_ctl.sh) as the tests see it: its
// nodes' URIs, the multi-host URI in any node's order, and a node killed (SIGKILL) and rejoined.
#pragma once

#include "support/process.hpp"
#include "support/server_env.hpp"

#include <fstream>
#include <stdexcept>
#include <string>

namespace dibs::test {

inline constexpr int galera_nodes = 3;

// mysql://root@127.0.0.1:PORT/dibs_test: node `n` (1..3) alone.
inline std::string galera_node_uri(int n) {
  std::ifstream in(std::string(DIBS_SERVERS_DIR) + "/galera_node" + std::to_string(n) + "_uri");
  std::string uri;
  std::getline(in, uri);
  if (uri.empty()) throw std::runtime_error("no Galera node " + std::to_string(n) + " (is the galera fixture up?)");
  return uri;
}

// "127.0.0.1:PORT" of node `n`.
inline std::string galera_host_port(int n) {
  const auto uri = galera_node_uri(n);
  const auto at = uri.find('@') + 1;
  return uri.substr(at, uri.find('/', at) - at);
}

// Every node, node `first` first and the others after it in turn: the URI a worker on that
// node is given (it moves on to the next when its node is gone).
inline std::string galera_uri_from(int first) {
  std::string hosts;
  for (int i = 0; i < galera_nodes; ++i) hosts += (i ? "," : "") + galera_host_port((first - 1 + i) % galera_nodes + 1);
  return "mysql://root@" + hosts + "/dibs_test";
}

// galera_ctl.sh `action` DIR `n`: kill (SIGKILL, as a crashed host) or rejoin (IST). Run without
// this process's descriptors (child_process), so the node inherits none of its sockets.
inline void galera_node(const std::string& action, int n) {
  child_process ctl({"bash", DIBS_GALERA_CTL, action, DIBS_SERVERS_DIR, std::to_string(n)}, true);
  std::string said;
  if (ctl.finish(said) != 0) throw std::runtime_error("galera_ctl.sh " + action + " " + std::to_string(n) + " failed: " + said);
}

}  // namespace dibs::test
