#include "spend_charge.hpp"

#include <cmath>

namespace dibs::http {

namespace {
std::uint64_t micro_dollars(double tokens, double price_per_token) {
  return static_cast<std::uint64_t>(std::ceil(tokens * price_per_token * 1e6));
}
}  // namespace

std::uint64_t most_cost(const token_estimator& e, const std::string& body, const processor_options::token_prices& p) {
  const auto max_out = max_output_tokens(body);
  const auto all = e.estimate(body.size(), max_out);
  const auto out = max_out ? *max_out : e.estimate(0, std::nullopt);  // without a prompt: the output part alone
  const auto in = all > out ? all - out : 0;
  return micro_dollars(static_cast<double>(in), p.input) + micro_dollars(static_cast<double>(out), p.output);
}

std::optional<std::uint64_t> answer_cost(const response& r, const processor_options::token_prices& p) {
  if (r.ec) {
    const bool maybe_charged = r.stage == "read" || r.stage == "write";
    return maybe_charged ? std::nullopt : std::optional<std::uint64_t>(0);
  }
  if (r.status < 200 || r.status >= 300) return 0;
  const auto used = answer_usage(r.body);
  if (used.input < 0 && used.output < 0) return std::nullopt;
  return micro_dollars(static_cast<double>(std::max<std::int64_t>(used.input, 0)), p.input) +
         micro_dollars(static_cast<double>(std::max<std::int64_t>(used.output, 0)), p.output);
}

}  // namespace dibs::http
