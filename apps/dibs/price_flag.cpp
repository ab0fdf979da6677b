#include "price_flag.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace dibs::cli {

namespace {
[[noreturn]] void refuse(const std::string& text, const std::string& why) {
  throw std::invalid_argument("--price '" + text + "': " + why +
                              " (expected input=PRICE/1M,output=PRICE/1M, or input=PRICE/1M alone for embeddings: a price "
                              "per million tokens, /1K per thousand, none per token)");
}

// "0.15/1M" -> 0.15e-6 a token.
double per_token(const std::string& whole, const std::string& value) {
  const auto slash = value.find('/');
  const std::string number = value.substr(0, slash);
  char* end = nullptr;
  const double n = std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0' || !std::isfinite(n) || n < 0) refuse(whole, "'" + number + "' is not a price");
  if (slash == std::string::npos) return n;
  const std::string unit = value.substr(slash + 1);
  if (unit == "1M" || unit == "M" || unit == "1m") return n / 1e6;
  if (unit == "1K" || unit == "K" || unit == "1k" || unit == "k") return n / 1e3;
  if (unit == "1" || unit == "token") return n;
  refuse(whole, "'/" + unit + "' is no unit of tokens");
}
}  // namespace

http::processor_options::token_prices parse_prices(const std::string& text) {
  http::processor_options::token_prices out;
  bool input = false, output = false;
  std::size_t at = 0;
  while (at <= text.size()) {
    const auto comma = text.find(',', at);
    const std::string part = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const auto eq = part.find('=');
    if (eq == std::string::npos) refuse(text, "'" + part + "' names no kind of token");
    const std::string kind = part.substr(0, eq);
    const double price = per_token(text, part.substr(eq + 1));
    if (kind == "input" && !input) out.input = price, input = true;
    else if (kind == "output" && !output) out.output = price, output = true;
    else refuse(text, "'" + kind + "' is no kind of token, or is given twice (input, output)");
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  // An embeddings API bills its input alone: output is 0 unless given. Output alone prices nothing
  // a request sends.
  if (!input) refuse(text, "input is needed (output too, for an API that writes an answer)");
  return out;
}

}  // namespace dibs::cli
