// An API of tests/servers started by a test with the options it needs, on a free port, and
// stopped when it goes: small_api.py (Python's http.server at its defaults, as people write a
// small API), hostile_api.py (bytes no well-behaved server sends) or node_api.js (Node's http
// module at its defaults).
#pragma once

#include "support/process.hpp"

#include <dibs/http/url_template.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace dibs::test {

class python_api {
 public:
  // Runs tests/servers/`script` DIR `args`... with `interpreter`; it writes its port to DIR/`port_file`.
  python_api(const std::string& script, std::vector<std::string> args, const std::string& port_file,
             const std::string& interpreter = "/usr/bin/python3") {
    char tmpl[] = "/tmp/dibs-python-api-XXXXXX";
    if (!::mkdtemp(tmpl)) FAIL("mkdtemp failed");
    dir_ = tmpl;
    std::vector<std::string> argv = {interpreter, std::string(DIBS_SOURCE_DIR) + "/tests/servers/" + script, dir_};
    argv.insert(argv.end(), args.begin(), args.end());
    proc_ = std::make_unique<child_process>(argv, true);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (port_ == 0 && std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(dir_ + "/" + port_file);
      in >> port_;
      if (port_ == 0) {
        if (!proc_->running()) FAIL(script << " ended at start");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling for the port file, bounded
      }
    }
    if (port_ == 0) FAIL(script << " did not start in 30 s");
  }
  ~python_api() {
    proc_.reset();
    std::system(("rm -rf " + shell_quote(dir_)).c_str());
  }

  unsigned port() const { return port_; }
  const std::string& dir() const { return dir_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  http::url_template url() const { return http::url_template::parse(base_url() + "/json/{originatingIp}"); }

 private:
  std::string dir_;
  std::unique_ptr<child_process> proc_;
  unsigned port_ = 0;
};

// small_api.py: `mode` keepalive or close; `options` its own (--fail-share 0.1, --backlog 1, ...).
class small_api : public python_api {
 public:
  small_api(const std::string& mode, std::vector<std::string> options = {})
      : python_api("small_api.py", with_front({"api", mode}, std::move(options)), "api.port") {}

 private:
  static std::vector<std::string> with_front(std::vector<std::string> front, std::vector<std::string> rest) {
    front.insert(front.end(), rest.begin(), rest.end());
    return front;
  }
};

// node_api.js: Node's http server; `options` its own (--keep-alive-timeout MS).
class node_api : public python_api {
 public:
  explicit node_api(std::vector<std::string> options = {})
      : python_api("node_api.js", std::move(options), "node_api.port", "/usr/bin/node") {}
};

}  // namespace dibs::test
