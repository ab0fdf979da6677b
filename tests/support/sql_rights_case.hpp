// A user without the rights dibs needs, the same on every SQL store, through the real `dibs`:
//   - at start: a user who may only read (or, with --on-done delete, not delete) is refused with
//     exit 2 before anything is claimed or called, naming the right and the GRANT that gives it;
//   - mid-run: a right taken away while dibs runs (DELETE, with --on-done delete) ends the run
//     with exit 2 (never a loop), and the leases it held are released, as the store still lets it.
// `grant` gives the user the rights named (e.g. "SELECT, UPDATE"), `revoke` takes one away; the
// URIs name the same table as that user and as the store's owner.
#pragma once

#include "support/eventually.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace dibs::test {

struct rights_setup {
  std::string owner_uri;  // the table, as its owner
  std::string user_uri;   // the same table, as the user whose rights the test changes
  std::function<void(const std::string& rights)> grant;
  std::function<void(const std::string& right)> revoke;
  std::string grant_hint;  // what the refusal names to run, in part ("GRANT SELECT, UPDATE ON ")
};

inline void check_rights_at_start(const rights_setup& r) {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto [rc, out] = run_dibs({"seed", "--store", r.owner_uri, "--docs", "5"});
  REQUIRE(rc == 0);
  auto enrich = [&](const std::string& on_done) {
    return run_dibs_within(std::chrono::seconds(30), {"enrich", "--store", r.user_uri, "--url",
                                                      api.base_url() + "/json/{originatingIp}", "--no-progress",
                                                      "--on-done", on_done});
  };
  r.grant("SELECT");
  std::tie(rc, out) = enrich("mark");
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("may not UPDATE table"));
  CHECK_THAT(out, Catch::Contains(r.grant_hint + "SELECT, UPDATE ON "));
  CHECK_THAT(out, !Catch::Contains("retrying"));
  r.grant("UPDATE");
  std::tie(rc, out) = enrich("delete");
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("may not DELETE from table"));
  CHECK_THAT(out, Catch::Contains(r.grant_hint + "SELECT, UPDATE, DELETE ON "));
  CHECK(api.requests() == 0);  // refused before the pre-flight's call, before any claim
  std::tie(rc, out) = enrich("mark");
  INFO(out);
  CHECK(rc == 0);  // SELECT and UPDATE are all --on-done mark needs
}

// `leased`: how many rows of the table hold a lease now (as the owner counts them).
inline void check_right_lost_mid_run(const rights_setup& r, const std::function<std::string()>& leased) {
  stub::ipapi_stub api(stub::stub_options::loopback(std::chrono::milliseconds(200)));
  api.start();
  auto [rc, out] = run_dibs({"seed", "--store", r.owner_uri, "--docs", "400"});
  REQUIRE(rc == 0);
  r.grant("SELECT, UPDATE, DELETE");
  child_process run({"timeout", "--signal=KILL", "60", dibs_binary(), "enrich", "--store", r.user_uri, "--url",
                     api.base_url() + "/json/{originatingIp}", "--no-progress", "--concurrency", "20", "--lease", "60s",
                     "--on-done", "delete"},
                    true);
  // Once it works, the right to delete goes: every completion from then on is refused.
  REQUIRE(eventually([&] { return api.requests() >= 30; }, std::chrono::seconds(30)));
  r.revoke("DELETE");
  out.clear();
  rc = run.finish(out);
  INFO(out.substr(0, 4000));
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("may not DELETE from table"));
  CHECK_THAT(out, !Catch::Contains("retrying"));
  CHECK(api.requests() < 400);
  // It could still UPDATE: everything it held (its unwritten answers, its calls in flight) was
  // given back at once, not left to its 60 s leases.
  CHECK(leased() == "0");
}

}  // namespace dibs::test
