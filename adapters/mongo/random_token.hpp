// Random numbers of the claim protocol, from a per-thread generator: lease tokens (never 0, the
// value a token-less document can't be mistaken for) and the id sampler's pivots.
#pragma once

#include <cstdint>

namespace dibs::mongo {

std::uint64_t fresh_token();
unsigned __int128 random_u128();

}  // namespace dibs::mongo
