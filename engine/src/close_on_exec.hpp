// Every socket dibs opens is close-on-exec. A socket that a child process inherits (one the
// embedding server starts, or a script) stays open after dibs closes it, so the peer never sees
// the connection end: a database keeps that session, and the row locks of its open transaction,
// for as long as the child lives; an HTTP server keeps a dead keep-alive connection.
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/system/error_code.hpp>

#include <cerrno>

namespace dibs {

// Opens `s` for `protocol` with SOCK_CLOEXEC, so no exec can ever see it (Asio's own open()
// leaves the descriptor inheritable).
template <class Socket, class Protocol>
void open_close_on_exec(Socket& s, const Protocol& protocol, boost::system::error_code& ec) {
  const int fd = ::socket(protocol.family(), protocol.type() | SOCK_CLOEXEC, protocol.protocol());
  if (fd < 0) {
    ec.assign(errno, boost::system::system_category());
    return;
  }
  s.assign(protocol, fd, ec);
  if (ec) ::close(fd);
}

// For a descriptor some other code opened (an accepted socket, the MySQL client library's):
// an exec in another thread between that open and this call would still inherit it.
inline bool close_on_exec(int fd) noexcept {
  const int flags = ::fcntl(fd, F_GETFD);
  return flags >= 0 && ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

}  // namespace dibs
