// The answer cache's bounds with a clock the test moves: entries, bytes, time to live, and which
// entry goes first (the least recently used).
#include "adapters/http/reuse/answer_cache.hpp"

#include <catch2/catch.hpp>

using namespace dibs::http;
using namespace std::chrono_literals;

namespace {
const auto t_start = answer_cache::clock::time_point{} + 1000s;

answer_cache_limits limits(std::size_t entries, std::size_t bytes, std::chrono::milliseconds ttl = 1h) {
  answer_cache_limits l;
  l.max_entries = entries;
  l.max_bytes = bytes;
  l.ttl = ttl;
  return l;
}
std::size_t cost(const std::string& k, const std::string& a) { return k.size() + a.size() + answer_cache::entry_overhead; }
}  // namespace

TEST_CASE("an answer is found again, and a key never put is not", "[reuse][cache]") {
  answer_cache c(limits(10, 1 << 20));
  c.put("GET http://api:80/json/1.1.1.1", R"({"query":"1.1.1.1"})", t_start);
  CHECK(c.find("GET http://api:80/json/1.1.1.1", t_start) == std::optional<std::string>(R"({"query":"1.1.1.1"})"));
  CHECK_FALSE(c.find("GET http://api:80/json/2.2.2.2", t_start));
  CHECK(c.entries() == 1);
  CHECK(c.bytes() == cost("GET http://api:80/json/1.1.1.1", R"({"query":"1.1.1.1"})"));
}

TEST_CASE("past max_entries the least recently USED entry goes, not the oldest put", "[reuse][cache]") {
  answer_cache c(limits(2, 1 << 20));
  c.put("a", "1", t_start);
  c.put("b", "2", t_start);
  CHECK(c.find("a", t_start));  // a is now the most recently used
  c.put("c", "3", t_start);
  CHECK(c.entries() == 2);
  CHECK(c.find("a", t_start));
  CHECK_FALSE(c.find("b", t_start));
  CHECK(c.find("c", t_start));
  CHECK(c.evictions() == 1);
}

TEST_CASE("past max_bytes entries are evicted until the bytes fit, however few entries that leaves", "[reuse][cache]") {
  const std::string big(1000, 'x');
  // Room for two such entries, not three.
  answer_cache c(limits(100, 2 * cost("k1", big) + 10));
  c.put("k1", big, t_start);
  c.put("k2", big, t_start);
  CHECK(c.entries() == 2);
  c.put("k3", big, t_start);
  CHECK(c.entries() == 2);
  CHECK(c.bytes() <= c.limits().max_bytes);
  CHECK_FALSE(c.find("k1", t_start));
  // A small answer that fits beside the others evicts nothing.
  answer_cache d(limits(100, cost("k1", big) + cost("s", "1")));
  d.put("k1", big, t_start);
  d.put("s", "1", t_start);
  CHECK(d.entries() == 2);
  d.put("t", "1", t_start);  // one byte past: the least recently used (k1, the big one) goes
  CHECK_FALSE(d.find("k1", t_start));
  CHECK(d.find("s", t_start));
  CHECK(d.find("t", t_start));
}

TEST_CASE("an answer larger than max_bytes alone is not kept, and evicts nothing", "[reuse][cache]") {
  answer_cache c(limits(100, 500));
  c.put("small", "1", t_start);
  c.put("huge", std::string(1000, 'x'), t_start);
  CHECK_FALSE(c.find("huge", t_start));
  CHECK(c.find("small", t_start));
  CHECK(c.evictions() == 0);
}

TEST_CASE("an answer is good for ttl after it arrived, then dropped", "[reuse][cache]") {
  answer_cache c(limits(10, 1 << 20, 60s));
  c.put("k", "v", t_start);
  CHECK(c.find("k", t_start + 59s));  // using it does not make it younger
  CHECK_FALSE(c.find("k", t_start + 60s));
  CHECK(c.entries() == 0);
  CHECK(c.bytes() == 0);
  c.put("k", "w", t_start + 61s);  // a fresh answer starts its own ttl
  CHECK(c.find("k", t_start + 120s) == std::optional<std::string>("w"));
}

TEST_CASE("putting a key again replaces its answer and its bytes", "[reuse][cache]") {
  answer_cache c(limits(10, 1 << 20));
  c.put("k", "short", t_start);
  c.put("k", "a longer answer", t_start);
  CHECK(c.entries() == 1);
  CHECK(c.bytes() == cost("k", "a longer answer"));
  CHECK(c.find("k", t_start) == std::optional<std::string>("a longer answer"));
}

TEST_CASE("max_entries 0 keeps nothing (only calls in flight are joined)", "[reuse][cache]") {
  answer_cache c(limits(0, 1 << 20));
  c.put("k", "v", t_start);
  CHECK(c.entries() == 0);
  CHECK_FALSE(c.find("k", t_start));
}
