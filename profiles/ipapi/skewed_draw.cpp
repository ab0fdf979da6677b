#include <dibs/ipapi/ipv4_ranges.hpp>
#include "skewed_draw.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_set>

namespace dibs {

std::vector<std::uint32_t> skewed_ranks(std::size_t docs, std::size_t distinct, std::mt19937_64& rng) {
  std::vector<std::uint32_t> ranks;
  if (distinct == 0 || docs == 0) return ranks;
  if (distinct > UINT32_MAX) throw std::invalid_argument("distinct: at most 4294967295");
  ranks.reserve(docs);
  const auto every = std::min(docs, distinct);
  for (std::size_t k = 0; k < every; ++k) ranks.push_back(static_cast<std::uint32_t>(k));
  // Log-uniform x in [1, distinct+1): P(floor(x) = k+1) ~ ln((k+2)/(k+1)) ~ 1/(k+1).
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double span = std::log(static_cast<double>(distinct) + 1.0);
  for (std::size_t i = every; i < docs; ++i) {
    const auto x = static_cast<std::size_t>(std::exp(u(rng) * span));
    ranks.push_back(static_cast<std::uint32_t>(std::clamp<std::size_t>(x, 1, distinct) - 1));
  }
  std::shuffle(ranks.begin(), ranks.end(), rng);
  return ranks;
}

std::vector<std::uint32_t> distinct_public_ipv4(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::uint32_t> out;
  out.reserve(n);
  std::unordered_set<std::uint32_t> seen;
  seen.reserve(n);
  while (out.size() < n) {
    const auto a = random_public_ipv4(rng);
    if (seen.insert(a).second) out.push_back(a);
  }
  return out;
}

ipv4_draw::ipv4_draw(std::size_t docs, std::size_t distinct, std::uint64_t seed) : rng_(seed) {
  if (distinct == 0) return;
  addresses_ = distinct_public_ipv4(std::min(docs, distinct), rng_);
  ranks_ = skewed_ranks(docs, distinct, rng_);
}

std::uint32_t ipv4_draw::next() {
  if (addresses_.empty() || at_ >= ranks_.size()) return random_public_ipv4(rng_);
  return addresses_[ranks_[at_++]];
}

}  // namespace dibs
