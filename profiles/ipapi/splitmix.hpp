// splitmix64: a fixed, well-spread 64-bit hash. The stand-in derives everything it says of an
// address from it (the answer's place, a poison answer), so the same address always gets the same.
#pragma once

#include <cstdint>

namespace dibs::stub {

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace dibs::stub
