// tests/servers/shaped_api.py, started by a test: an API of the shapes paid APIs have (a key in a
// header, POST bodies, quota headers), every request it got kept byte for byte.
#pragma once

#include "http_servers/small_api.hpp"

#include <boost/beast/core/detail/base64.hpp>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace dibs::test {

struct recorded_request {
  std::string method, path, body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string header(const std::string& name) const {
    for (const auto& [k, v] : headers)
      if (::strcasecmp(k.c_str(), name.c_str()) == 0) return v;
    return {};
  }
};

class shaped_api : public python_api {
 public:
  explicit shaped_api(std::vector<std::string> options = {}) : python_api("shaped_api.py", std::move(options), "api.port") {}

  // Every request so far but the tests' own (/stats), in the order they came.
  std::vector<recorded_request> requests() const {
    std::vector<recorded_request> out;
    std::ifstream in(dir() + "/requests.jsonl");
    const std::regex str(R"re("((?:[^"\\]|\\.)*)")re");
    for (std::string line; std::getline(in, line);) {
      // The server writes each record with json.dumps: every value a string; headers as pairs.
      std::vector<std::string> s;
      for (std::sregex_iterator it(line.begin(), line.end(), str), end; it != end; ++it) s.push_back(unescape((*it)[1].str()));
      // "method", M, "path", P, "headers", k, v, ..., "body_b64", B
      recorded_request r;
      std::size_t i = 0;
      for (; i + 1 < s.size(); ++i) {
        if (s[i] == "method") r.method = s[++i];
        else if (s[i] == "path") r.path = s[++i];
        else if (s[i] == "headers") {
          for (++i; i + 1 < s.size() && s[i] != "body_b64"; i += 2) r.headers.emplace_back(s[i], s[i + 1]);
          --i;
        } else if (s[i] == "body_b64") r.body = base64(s[++i]);
      }
      if (r.path != "/stats") out.push_back(std::move(r));
    }
    return out;
  }

 private:
  static std::string unescape(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '\\' || i + 1 >= s.size()) {
        out += s[i];
        continue;
      }
      const char c = s[++i];
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;  // headers and paths hold no \u escapes here
    }
    return out;
  }
  static std::string base64(const std::string& text) {
    std::string out(boost::beast::detail::base64::decoded_size(text.size()), '\0');
    const auto n = boost::beast::detail::base64::decode(out.data(), text.data(), text.size());
    out.resize(n.first);
    return out;
  }
};

}  // namespace dibs::test
