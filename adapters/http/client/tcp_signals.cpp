#include "tcp_signals.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>

namespace dibs::http {

void quick_ack(int fd) {
  const int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
}

bool request_unacknowledged(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return false;  // can't tell: wait on
  return info.tcpi_unacked > 0;
}

std::chrono::milliseconds first_byte_check_after(std::chrono::microseconds recent_first_byte) {
  using std::chrono::milliseconds;
  if (recent_first_byte.count() <= 0) return milliseconds(200);
  const auto twice = std::chrono::duration_cast<milliseconds>(recent_first_byte * 2);
  return std::clamp(twice, milliseconds(25), milliseconds(1000));
}

std::chrono::milliseconds connect_check_after(std::chrono::microseconds usual_connect) {
  using std::chrono::milliseconds;
  if (usual_connect.count() <= 0) return milliseconds(250);
  const auto four = std::chrono::duration_cast<milliseconds>(usual_connect * 4);
  return std::clamp(four, milliseconds(20), milliseconds(1000));
}

}  // namespace dibs::http
