#include "random_token.hpp"

#include <random>

namespace dibs::mongo {

namespace {
std::mt19937_64& rng() {
  thread_local std::mt19937_64 r{std::random_device{}()};
  return r;
}
}  // namespace

std::uint64_t fresh_token() {
  std::uint64_t t;
  do t = rng()(); while (t == 0);
  return t;
}

unsigned __int128 random_u128() {
  const auto high = static_cast<unsigned __int128>(rng()());
  return (high << 64) | rng()();
}

}  // namespace dibs::mongo
