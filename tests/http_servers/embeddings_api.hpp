// tests/servers/embeddings_api.py, started by a test: an OpenAI-compatible /v1/embeddings whose
// vectors are a hash of each input, so a vector on the wrong row is found (check()).
#pragma once

#include "http_servers/small_api.hpp"

#include "support/raw_http.hpp"
#include "support/run_dibs.hpp"

#include <regex>
#include <string>
#include <vector>

namespace dibs::test {

class embeddings_api : public python_api {
 public:
  explicit embeddings_api(std::vector<std::string> options = {})
      : python_api("embeddings_api.py", with_name(std::move(options)), "api.port") {}

  std::string embeddings_url() const { return base_url() + "/v1/embeddings"; }

  // A member of its /stats ("requests", "inputs", "refused", "largest", "shortened").
  long stat(const std::string& name) const {
    const auto body = raw_http(static_cast<std::uint16_t>(port()), "GET", "/stats").body;
    std::smatch m;
    if (!std::regex_search(body, m, std::regex("\"" + name + "\": (\\d+)"))) return -1;
    return std::stol(m[1].str());
  }

  struct verdict {
    long right = -1, wrong = -1, missing = -1;
  };
  // The rows of a JSON Lines file, each text's vector checked against the hash of its text.
  static verdict check(const std::string& file, const std::string& text_path, const std::string& vector_path) {
    child_process p({"/usr/bin/python3", std::string(DIBS_SOURCE_DIR) + "/tests/servers/embeddings_api.py", "--check", file,
                     text_path, vector_path},
                    /*merge_stderr=*/true);
    std::string said;
    p.finish(said);
    verdict v;
    std::smatch m;
    if (std::regex_search(said, m, std::regex("right=(\\d+) wrong=(\\d+) missing=(\\d+)")))
      v = {std::stol(m[1]), std::stol(m[2]), std::stol(m[3])};
    return v;
  }

 private:
  static std::vector<std::string> with_name(std::vector<std::string> options) {
    options.insert(options.begin(), "api");  // its port in DIR/api.port
    return options;
  }
};

}  // namespace dibs::test
