// tests/servers/llm_api.py, started by a test: an LLM provider's API (OpenAI's or Anthropic's
// shape) that meters tokens per minute in a bucket refilled as it goes, states it in the
// provider's headers, and answers its classes (429, 529, a prompt too long, a truncated answer).
#pragma once

#include "http_servers/small_api.hpp"

#include "support/raw_http.hpp"

#include <regex>
#include <string>
#include <vector>

namespace dibs::test {

class llm_api : public python_api {
 public:
  explicit llm_api(std::vector<std::string> options = {}) : python_api("llm_api.py", with_name(std::move(options)), "api.port") {}

  // `dibs enrich` of a seeded table's rows on `store` (`where`: the flags after the URI, --db and
  // --collection) as OpenAI chat completions of "Label <originatingIp>" of at most 10 tokens (13-20
  // tokens of usage each), 4 at once in claims of 2, `more` flags after.
  std::vector<std::string> enrich_rows(const std::string& dibs, const std::string& store, const std::vector<std::string>& where,
                                       const std::vector<std::string>& more) const {
    std::vector<std::string> argv{dibs, "enrich", "--store", store, "--url", base_url() + "/v1/chat/completions", "--method", "POST",
                                  "--body",
                                  R"({"model": "gpt-4o-mini", "max_tokens": 10, "messages": [{"role": "user", "content": "Label {originatingIp}"}]})",
                                  "--no-status-check", "--concurrency", "4", "--claim-batch", "2", "--no-progress"};
    argv.insert(argv.end(), where.begin(), where.end());
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
  }

  // A member of its /stats that is a whole number ("refused_429", "ok", "tokens_settled", ...).
  long stat(const std::string& name) const {
    const auto body = raw_http(static_cast<std::uint16_t>(port()), "GET", "/stats").body;
    std::smatch m;
    if (!std::regex_search(body, m, std::regex("\"" + name + "\": (\\d+)"))) return -1;
    return std::stol(m[1].str());
  }

 private:
  static std::vector<std::string> with_name(std::vector<std::string> options) {
    options.insert(options.begin(), "api");  // its port in DIR/api.port
    return options;
  }
};

}  // namespace dibs::test
