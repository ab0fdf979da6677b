// The dibs program running with its controls, for tests that reach the control server as an
// operator (or an attacker) does: `dibs demo` slowed by --rate so it runs until stopped, its
// controls on a free port read from its log, its memory read from /proc. DIBS_BIN names another
// binary to test (an older build, to see a test fail without a fix).
#pragma once

#include "eventually.hpp"
#include "process.hpp"
#include "run_dibs.hpp"

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dibs::test {

class dibs_controls {
 public:
  // `env`: NAME=VALUE pairs for the child only; `flags`: added to the demo's.
  explicit dibs_controls(const std::vector<std::string>& env = {}, const std::vector<std::string>& flags = {}) {
    static int n = 0;
    log_ = (std::filesystem::temp_directory_path() /
            ("dibs-controls-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".log"))
               .string();
    std::filesystem::remove(log_);
    std::vector<std::string> argv{"env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {dibs_binary(), "demo", "--docs", "100000", "--latency-ms", "5", "--concurrency", "2",
                             "--rate", "20/s", "--no-progress", "--metrics-port", "0"});
    argv.insert(argv.end(), flags.begin(), flags.end());
    p_ = std::make_unique<child_process>(argv, false, log_);
    const std::regex listening(R"(controls on http://127\.0\.0\.1:(\d+))");
    // The match's text is kept here: a match refers into the string it searched, so a string
    // local to the lambda would be gone when the port is read.
    std::string text;
    std::smatch m;
    const bool up = eventually([&] {
      text = log();
      if (std::regex_search(text, m, listening)) return true;
      return !p_->running();
    }, std::chrono::seconds(30));
    if (!up || m.empty()) throw std::runtime_error("dibs demo did not start its controls; its log:\n" + log());
    port_ = static_cast<std::uint16_t>(std::stoi(m[1].str()));
  }
  ~dibs_controls() {
    p_->signal(SIGTERM);
    std::string out;
    p_->finish(out);
    std::filesystem::remove(log_);
  }
  dibs_controls(const dibs_controls&) = delete;
  dibs_controls& operator=(const dibs_controls&) = delete;

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return p_->pid(); }
  std::string log() const {
    std::ifstream in(log_, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The process's peak resident memory so far (VmHWM), in KiB; 0 when it can't be read.
  std::size_t peak_rss_kib() const {
    std::ifstream status("/proc/" + std::to_string(p_->pid()) + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmHWM:", 0) == 0) return std::stoul(line.substr(6));
    return 0;
  }

 private:
  std::string log_;
  std::unique_ptr<child_process> p_;
  std::uint16_t port_ = 0;
};

}  // namespace dibs::test
