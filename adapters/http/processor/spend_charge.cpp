#include "spend_charge.hpp"

#include <cmath>

namespace dibs::http {

namespace {
std::uint64_t micro_dollars(double tokens, double price_per_token) {
  return static_cast<std::uint64_t>(std::ceil(tokens * price_per_token * 1e6));
}
}  // namespace

std::uint64_t most_cost(const token_estimator& e, std::size_t body_bytes, std::optional<std::int64_t> max_out,
                        const processor_options::token_prices& p) {
  const auto all = e.estimate(body_bytes, max_out);
  const auto out = max_out ? *max_out : e.estimate(0, std::nullopt);  // without a prompt: the output part alone
  const auto in = all > out ? all - out : 0;
  return micro_dollars(static_cast<double>(in), p.input) + micro_dollars(static_cast<double>(out), p.output);
}

std::optional<std::uint64_t> answer_cost(const response& r, const processor_options::token_prices& p, const token_usage* read) {
  if (r.ec) {
    const bool maybe_charged = r.stage == "read" || r.stage == "write";
    return maybe_charged ? std::nullopt : std::optional<std::uint64_t>(0);
  }
  if (r.status < 200 || r.status >= 300) return 0;
  const auto used = read ? *read : answer_usage(r.body);
  if (used.input < 0 && used.output < 0) return std::nullopt;
  // answer_usage counts a cache write as input (Anthropic meters it so); billed, it is 1.25 times
  // an input token (2 times written for an hour) and a cache read 0.1 times.
  const auto hour_writes = std::min(used.cache_write_1h, used.cache_write);
  const double billed_input = static_cast<double>(std::max<std::int64_t>(used.input, 0) - used.cache_write) +
                              1.25 * static_cast<double>(used.cache_write - hour_writes) + 2.0 * static_cast<double>(hour_writes) +
                              0.1 * static_cast<double>(used.cache_read);
  return micro_dollars(billed_input, p.input) + micro_dollars(static_cast<double>(std::max<std::int64_t>(used.output, 0)), p.output);
}

std::string never_fits(const std::vector<std::shared_ptr<spend_budget>>& budgets, std::uint64_t most) {
  for (const auto& b : budgets)
    if (b->never_fits(most))
      return "not sent: the request could cost up to " + dollars_text(most) + " (its prompt and max_tokens at the prices), "
             "more than the whole of " + b->what() + " (" + dollars_text(b->limit()) + "): it could never be sent";
  return {};
}

awaitable<std::optional<std::vector<spend_ticket>>> take_spend(const std::vector<std::shared_ptr<spend_budget>>& budgets,
                                                               std::uint64_t most) {
  std::vector<spend_ticket> tickets;
  for (const auto& b : budgets) {
    auto t = co_await b->take(most);
    if (!t) co_return std::nullopt;  // the tickets taken so far, dropped unsent, go back whole
    tickets.push_back(std::move(*t));
  }
  co_return std::optional(std::move(tickets));
}

void settle_spend(std::vector<spend_ticket>& tickets, const response& r, bool refused, const processor_options::token_prices& p,
                  const token_usage* read) {
  if (tickets.empty()) return;
  const auto cost = refused ? std::optional<std::uint64_t>(0) : answer_cost(r, p, read);
  for (auto& t : tickets) t.settle(cost);
  tickets.clear();
}

}  // namespace dibs::http
