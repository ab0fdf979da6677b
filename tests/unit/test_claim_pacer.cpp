// When the dispatcher claims next (engine/src/claim_pacer.hpp), on a clock the test moves.
#include "engine/src/claim_pacer.hpp"

#include <catch2/catch.hpp>

using dibs::claim_pacer;
using ms = std::chrono::milliseconds;

namespace {
const claim_pacer::clock::time_point origin{};
}

TEST_CASE("claim pacer: claims at once, then after waits that double up to the most", "[claim_pacer]") {
  claim_pacer p(ms(10), ms(35), origin);
  CHECK(p.due(origin));
  p.idle(origin);  // an empty claim at origin
  CHECK_FALSE(p.due(origin + ms(9)));
  CHECK(p.due(origin + ms(10)));
  CHECK(p.wait() == ms(20));
  p.idle(origin + ms(10));
  CHECK(p.next() == origin + ms(30));
  p.idle(origin + ms(30));
  CHECK(p.next() == origin + ms(65));  // 35: 40 capped
  CHECK(p.wait() == ms(35));
  p.idle(origin + ms(65));
  CHECK(p.next() == origin + ms(100));  // stays at the most
}

TEST_CASE("claim pacer: items, a wake or an unpark claim at once and start the waits over", "[claim_pacer]") {
  claim_pacer p(ms(10), ms(1000), origin);
  for (int i = 0; i < 5; ++i) p.idle(origin);
  CHECK(p.wait() == ms(320));
  p.reset(origin + ms(1));
  CHECK(p.due(origin + ms(1)));
  CHECK(p.wait() == ms(10));
  p.idle(origin + ms(1));
  CHECK(p.next() == origin + ms(11));
}

TEST_CASE("claim pacer: a resume after a pause claims at once but keeps the wait it had", "[claim_pacer]") {
  claim_pacer p(ms(10), ms(1000), origin);
  p.idle(origin);
  p.idle(origin);
  CHECK_FALSE(p.due(origin + ms(5)));
  p.claim_now(origin + ms(5));
  CHECK(p.due(origin + ms(5)));
  p.idle(origin + ms(5));
  CHECK(p.next() == origin + ms(45));  // the third wait: 40
}
