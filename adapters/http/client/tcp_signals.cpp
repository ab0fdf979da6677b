#include "tcp_signals.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>

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

std::optional<std::uint64_t> bytes_acknowledged(int fd) {
  // glibc's tcp_info stops before tcpi_bytes_acked, and linux/tcp.h can't be included beside
  // glibc's (asio brings that one): the kernel's tcp_info read whole, tcpi_bytes_acked taken at
  // its place in the kernel's ABI (after tcpi_total_retrans at 100, the two u64 pacing rates at
  // 104 and 112: offset 120, since Linux 4.1), which never moves.
  constexpr std::size_t bytes_acked_at = 120;
  unsigned char info[256] = {};
  socklen_t len = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, info, &len) != 0) return std::nullopt;
  if (len < bytes_acked_at + sizeof(std::uint64_t)) return std::nullopt;  // an older kernel: can't tell
  std::uint64_t acked = 0;
  std::memcpy(&acked, info + bytes_acked_at, sizeof acked);
  // A connected socket's count holds the SYN's one at least: 0 is a stack that fills TCP_INFO
  // but keeps no such count (gVisor's netstack), where every request would read unacknowledged
  // for ever, and a slow first answer as a dropped handshake, sent again four times.
  if (acked == 0) return std::nullopt;
  return acked;
}

bool nothing_acknowledged(int fd) {
  const auto acked = bytes_acknowledged(fd);
  return acked && *acked <= 1;  // the SYN's one
}

bool peer_closed(int fd) {
  char c = 0;
  return ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

void reset_on_close(int fd) {
  const linger now{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof now);
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
