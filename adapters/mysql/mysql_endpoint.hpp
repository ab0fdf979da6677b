// Where a mysql:// URI connects, as the mysql client (and libmariadb under it) decides: the host
// `localhost` without socket= means the server's Unix socket (MYSQL_UNIX_PORT, else the client's
// default path), whatever the port says; any other host, TCP to host:port. A failed connection
// names what was really tried, and for `localhost` how to get the other one. Pure functions.
#pragma once

#include <adapters/mysql/mysql_uri.hpp>

#include <cstdlib>
#include <string>

namespace dibs::mysql {

// True when libmariadb will use a Unix socket for `u`.
bool uses_unix_socket(const mysql_uri& u);
// The socket's path for `u` (socket=, else `env_socket` when set, else the client's default).
std::string unix_socket_path(const mysql_uri& u, const char* env_socket);
// "the Unix socket /run/mysqld/mysqld.sock" or "127.0.0.1:3306".
std::string endpoint_text(const mysql_uri& u, const char* env_socket);
// After a failed connection through the socket that `localhost` chose: what to write instead
// (" (localhost means ...: 127.0.0.1 ... or socket=...)"); "" otherwise.
std::string endpoint_hint(const mysql_uri& u);

}  // namespace dibs::mysql
