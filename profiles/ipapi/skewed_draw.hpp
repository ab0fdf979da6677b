// Seeded data where the same key repeats, as in real traffic (the same address sends many
// messages): `dibs demo --distinct N` and `dibs seed --distinct N` draw their documents' addresses
// from N addresses, the popular ones far more often than the rest. Pure: a seed gives the same
// documents every time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace dibs {

// For `docs` documents, the rank (0 .. distinct-1) of the key each one gets: every rank at least
// once when docs >= distinct (so there are exactly min(docs, distinct) distinct keys, and the
// repeat factor is docs/distinct), the others drawn Zipf-like (log-uniform: rank k about
// 1/(k+1) as likely as rank 0), all in shuffled order so that repeats are spread over the run.
// distinct 0: none (the caller draws every document's key afresh).
std::vector<std::uint32_t> skewed_ranks(std::size_t docs, std::size_t distinct, std::mt19937_64& rng);

// `n` different random public IPv4 addresses.
std::vector<std::uint32_t> distinct_public_ipv4(std::size_t n, std::mt19937_64& rng);

// The addresses of `docs` documents: random public ones (distinct 0), or drawn from `distinct`
// addresses by skewed_ranks().
class ipv4_draw {
 public:
  ipv4_draw(std::size_t docs, std::size_t distinct, std::uint64_t seed);
  std::uint32_t next();

 private:
  std::mt19937_64 rng_;
  std::vector<std::uint32_t> addresses_;
  std::vector<std::uint32_t> ranks_;
  std::size_t at_ = 0;
};

}  // namespace dibs
