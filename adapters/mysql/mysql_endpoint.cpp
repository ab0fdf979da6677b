#include "mysql_endpoint.hpp"

#include <dibs/setting_error.hpp>

#include <mariadb_version.h>

namespace dibs::mysql {

bool uses_unix_socket(const mysql_uri& u) { return u.host == "localhost"; }

std::string unix_socket_path(const mysql_uri& u, const char* env_socket) {
  if (!u.socket.empty()) return u.socket;
  if (env_socket && *env_socket) return env_socket;
  return MARIADB_UNIX_ADDR;
}

std::string endpoint_text(const mysql_uri& u, const char* env_socket) {
  if (uses_unix_socket(u)) return "the Unix socket " + unix_socket_path(u, env_socket);
  return (u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host) + ":" + std::to_string(u.port);
}

std::string endpoint_hint(const mysql_uri& u) {
  if (!uses_unix_socket(u) || !u.socket.empty()) return {};
  return " (localhost means the server's Unix socket, as for the mysql client, and the port is not used: for TCP write "
         "127.0.0.1:" + std::to_string(u.port) + " in " + setting_name("store") + "; for another socket add socket=/path/to/mysqld.sock)";
}

}  // namespace dibs::mysql
