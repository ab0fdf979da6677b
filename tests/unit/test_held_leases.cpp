// The lease keeper's book (engine/src/held_leases.hpp), without a store or a clock of its own.
#include "engine/src/held_leases.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using dibs::held_leases;
using ms = std::chrono::milliseconds;

namespace {
const held_leases::clock::time_point start{};

dibs::job claimed(const std::string& id, std::uint64_t token, int attempts = 1) {
  dibs::job j;
  j.id = id;
  j.token = token;
  j.attempts = attempts;
  return j;
}

std::vector<std::string> ids_of(const std::vector<dibs::renewal>& r) {
  std::vector<std::string> out;
  for (const auto& x : r) out.push_back(x.ref.id);
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST_CASE("held leases: due for renewal half a lease after the claim was asked, not after it came back",
          "[held_leases]") {
  held_leases book;
  CHECK(book.add(claimed("a", 7, 2), start, start + ms(300), ms(1000)));
  CHECK(book.find("a")->attempts == 2);
  CHECK(book.find("a")->claimed_at == start + ms(300));
  CHECK(book.due(start + ms(499), "w").empty());
  const auto due = book.due(start + ms(500), "w");
  REQUIRE(due.size() == 1);
  CHECK(due[0].ref.id == "a");
  CHECK(due[0].ref.by == "w");
  CHECK(due[0].ref.token == 7);
}

TEST_CASE("held leases: a renewal moves the next one on, and a lease the store calls lost is lost unless settled",
          "[held_leases]") {
  held_leases book;
  book.add(claimed("running", 1), start, start, ms(1000));
  book.add(claimed("settled", 2), start, start, ms(1000));
  book.add(claimed("kept", 3), start, start, ms(1000));
  book.under("settled", 2)->settled = true;
  const auto asked = start + ms(600);
  const auto sent = book.due(asked, "w");
  CHECK(sent.size() == 3);
  book.renewed(sent, {"running", "settled"}, asked, ms(1000));
  CHECK_FALSE(book.kept("running", 1));  // its outcome must not be written
  CHECK(book.kept("settled", 2));        // its write will tell
  CHECK(book.kept("kept", 3));
  // A lost lease is not renewed again; a renewed one is due half a lease after the renewal was
  // asked; a settled one the store named lost is left as it was, due at the keeper's next look.
  CHECK(ids_of(book.due(asked + ms(499), "w")) == std::vector<std::string>{"settled"});
  CHECK(ids_of(book.due(asked + ms(500), "w")) == std::vector<std::string>{"kept", "settled"});
}

TEST_CASE("held leases: a lease claimed anew under another token is a new lease, untouched by the old one's news",
          "[held_leases]") {
  held_leases book;
  CHECK(book.add(claimed("a", 1), start, start, ms(1000)));
  const auto old_renewal = book.due(start + ms(500), "w");
  CHECK_FALSE(book.add(claimed("a", 2, 2), start + ms(700), start + ms(700), ms(1000)));  // superseded: not counted again
  CHECK(book.size() == 1);
  CHECK(book.under("a", 1) == nullptr);
  CHECK_FALSE(book.kept("a", 1));
  // The old lease's renewal answer (lost), and its forget, leave the new lease alone.
  book.renewed(old_renewal, {"a"}, start + ms(500), ms(1000));
  CHECK(book.kept("a", 2));
  CHECK_FALSE(book.forget("a", 1));
  CHECK(book.size() == 1);
  CHECK(book.forget("a", 2));
  CHECK(book.size() == 0);
  CHECK(book.find("a") == nullptr);
}

TEST_CASE("held leases: the same lease handed over twice is counted once", "[held_leases]") {
  held_leases book;
  CHECK(book.add(claimed("a", 1), start, start, ms(1000)));
  CHECK_FALSE(book.add(claimed("a", 1), start, start, ms(1000)));
  CHECK(book.size() == 1);
  CHECK(book.forget("a", 1));
  CHECK(book.size() == 0);
}

TEST_CASE("held leases: an item claimed under another worker's name (the pre-flight's, handed over) is renewed under it",
          "[held_leases]") {
  held_leases book;
  auto handed = claimed("a", 7);
  handed.by = "host-1-0";
  auto own = claimed("b", 8);
  own.by = "host-1-1";
  CHECK(book.add(handed, start, start, ms(1000), "host-1-1"));
  CHECK(book.add(own, start, start, ms(1000), "host-1-1"));
  auto due = book.due(start + ms(500), "host-1-1");
  REQUIRE(due.size() == 2);
  std::sort(due.begin(), due.end(), [](const auto& x, const auto& y) { return x.ref.id < y.ref.id; });
  CHECK(due[0].ref.by == "host-1-0");  // the name the store fences it by: renewed as "host-1-1", it was lost
  CHECK(due[1].ref.by == "host-1-1");
}
