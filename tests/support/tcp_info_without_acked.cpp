// A network stack that fills TCP_INFO but keeps no count of the bytes the peer acknowledged
// (gVisor's netstack, under GKE Sandbox and Cloud Run's first generation, leaves tcpi_bytes_acked
// at 0), for a test that preloads it into the dibs program (LD_PRELOAD): getsockopt(TCP_INFO) as
// the kernel answers it, that count zeroed. (Not in the sanitized build: a preloaded library
// would come before the sanitizers' runtime.)
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstring>

extern "C" int getsockopt(int fd, int level, int name, void* __restrict value, socklen_t* __restrict length) noexcept {
  using real_getsockopt = int (*)(int, int, int, void*, socklen_t*);
  static const auto real = reinterpret_cast<real_getsockopt>(dlsym(RTLD_NEXT, "getsockopt"));
  const int rc = real(fd, level, name, value, length);
  constexpr std::size_t bytes_acked_at = 120;  // its place in the kernel's tcp_info (adapters/http/client/tcp_signals.cpp)
  if (rc == 0 && level == IPPROTO_TCP && name == TCP_INFO && *length >= bytes_acked_at + 8)
    std::memset(static_cast<char*>(value) + bytes_acked_at, 0, 8);
  return rc;
}
