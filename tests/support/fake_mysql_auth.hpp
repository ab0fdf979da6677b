// A MySQL-protocol listener that only checks a password: it sends the server greeting
// (mysql_native_password, a fixed scramble), reads the client's handshake response, records
// whether its auth data proves `expected` (SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw)))), answers
// "access denied" and closes. For tests of where a client took its password from, against which
// the fixture's MariaDB (run with --skip-grant-tables, so every password passes) can't fail.
#pragma once

#include <openssl/sha.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace dibs::test {

class fake_mysql_auth {
 public:
  explicit fake_mysql_auth(std::string expected) : expected_(std::move(expected)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 8);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~fake_mysql_auth() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }
  // What the last client sent: -1 none yet, 0 no or another password, 1 the expected one.
  int last_verdict() const { return verdict_; }
  std::string last_user() const { return user_; }
  void reset() { verdict_ = -1; }

 private:
  static constexpr std::uint32_t caps = 0x1 | 0x8 | 0x200 | 0x2000 | 0x8000 | 0x80000;

  void serve() {
    while (!stop_) {
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      session(c);
      ::close(c);
    }
  }

  static bool read_exact(int fd, unsigned char* p, std::size_t n) {
    while (n > 0) {
      const auto r = ::read(fd, p, n);
      if (r <= 0) return false;
      p += r;
      n -= static_cast<std::size_t>(r);
    }
    return true;
  }
  static void send_packet(int fd, std::uint8_t seq, const std::string& payload) {
    std::string p(4, '\0');
    p[0] = static_cast<char>(payload.size() & 0xff);
    p[1] = static_cast<char>((payload.size() >> 8) & 0xff);
    p[2] = static_cast<char>((payload.size() >> 16) & 0xff);
    p[3] = static_cast<char>(seq);
    p += payload;
    (void)!::write(fd, p.data(), p.size());
  }

  void session(int c) {
    const std::string scramble = "abcdefghijklmnopqrst";  // 20 bytes
    std::string g;
    g += '\x0a';
    g += std::string("5.5.5-10.11.0-fake") + '\0';
    g += std::string("\x01\x00\x00\x00", 4);
    g += scramble.substr(0, 8) + '\0';
    g += static_cast<char>(caps & 0xff);
    g += static_cast<char>((caps >> 8) & 0xff);
    g += '\x21';                    // utf8_general_ci
    g += std::string("\x02\x00", 2);  // autocommit
    g += static_cast<char>((caps >> 16) & 0xff);
    g += static_cast<char>((caps >> 24) & 0xff);
    g += '\x15';                    // 21 bytes of auth data
    g += std::string(10, '\0');
    g += scramble.substr(8) + '\0';
    g += std::string("mysql_native_password") + '\0';
    send_packet(c, 0, g);

    unsigned char head[4];
    if (!read_exact(c, head, 4)) return;
    const std::size_t len = head[0] | (head[1] << 8) | (head[2] << 16);
    std::vector<unsigned char> body(len);
    if (!read_exact(c, body.data(), len) || len < 33) return;
    std::size_t i = 32;  // caps, max packet, charset, 23 reserved
    std::string user;
    while (i < len && body[i]) user += static_cast<char>(body[i++]);
    ++i;
    std::string auth;
    if (i < len) {
      const std::size_t n = body[i++];
      auth.assign(reinterpret_cast<const char*>(&body[i]), std::min(n, len - i));
    }
    user_ = user;
    verdict_ = auth == proof(scramble) ? 1 : 0;
    send_packet(c, head[3] + 1, std::string("\xff\x15\x04#28000fake server: access denied", 35));
  }

  std::string proof(const std::string& scramble) const {
    unsigned char h1[20], h2[20], h3[20];
    SHA1(reinterpret_cast<const unsigned char*>(expected_.data()), expected_.size(), h1);
    SHA1(h1, 20, h2);
    std::string salted = scramble + std::string(reinterpret_cast<char*>(h2), 20);
    SHA1(reinterpret_cast<const unsigned char*>(salted.data()), salted.size(), h3);
    std::string out(20, '\0');
    for (int k = 0; k < 20; ++k) out[k] = static_cast<char>(h1[k] ^ h3[k]);
    return out;
  }

  std::string expected_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> verdict_{-1};
  std::string user_;
};

}  // namespace dibs::test
