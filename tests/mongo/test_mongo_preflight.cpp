// `dibs enrich`'s pre-flight over MongoDB: a closed API port, a mistyped {field}, --source against
// the template. Each is refused before anything is claimed: exit 2, one line, and every document
// as it was (no lock written: nothing leased, failed or attempted).
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <adapters/mongo/test_hooks.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
struct seeded_collection : test::mongo_collection {
  explicit seeded_collection(const std::string& name) : mongo_collection(name) { REQUIRE(s.seed(20, 8) == 20); }
  // Every document as seeded: {_id, originatingIp, location: null}, no lease and no attempt
  // counted (an item the pre-flight claimed and gave back keeps a record of its release only).
  bool untouched() {
    const auto docs = mongo::documents(s);
    if (docs.size() != 20) return false;
    for (const auto& d : docs) {
      bson_iter_t it;
      const auto has = [&](const char* path, bson_iter_t& found) {
        bson_iter_t root;
        return bson_iter_init(&root, d.get()) && bson_iter_find_descendant(&root, path, &found);
      };
      bson_iter_t found;
      if (has("_dibs.token", found) || has("_dibs.failed", found)) return false;
      if (has("_dibs.attempts", found) && bson_iter_as_int64(&found) != 0) return false;
      if (!bson_iter_init_find(&it, d.get(), "location") || !BSON_ITER_HOLDS_NULL(&it)) return false;
    }
    const auto st = s.stats_blocking();
    return st.pending == 20 && st.failed == 0 && st.leased_live + st.leased_expired == 0;
  }
};
}  // namespace

namespace {
std::pair<int, std::string> enrich(const seeded_collection& c, std::vector<std::string> more) {
  std::vector<std::string> argv{test::dibs_binary(), "enrich"};
  for (const auto& flag : c.where()) argv.push_back(flag);
  argv.push_back("--no-progress");
  argv.insert(argv.end(), more.begin(), more.end());
  test::child_process p(argv, true);
  std::string out;
  const int rc = p.finish(out);
  return {rc, out};
}
}  // namespace

TEST_CASE("MongoDB: a closed API port is refused before the run, no document failed or leased", "[mongo][enrich][preflight]") {
  seeded_collection c("pf_closed");
  const auto [rc, out] = enrich(c, {"--url", "http://127.0.0.1:1/json/{originatingIp}"});
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("dibs: error: the API can't be used: --url http://127.0.0.1:1/json/") &&
                      Catch::Contains("connect: Connection refused"));
  CHECK(c.untouched());
}

TEST_CASE("MongoDB: a mistyped {field} names the field, the document and the fields it has", "[mongo][enrich][preflight]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  seeded_collection c("pf_field");
  const auto [rc, out] = enrich(c, {"--url", api.base_url() + "/json/{ip}"});
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--url reads the field 'ip', but pending item ") &&
                      Catch::Contains("has no such field (it has: ") && Catch::Contains("originatingIp") &&
                      Catch::Contains("location"));
  const auto [rc2, out2] = enrich(c, {"--url", api.base_url() + "/json/{originatingIP}"});
  INFO(out2);
  CHECK(rc2 == 2);
  CHECK_THAT(out2, Catch::Contains("did you mean 'originatingIp'?"));
  CHECK(api.requests() == 0);
  CHECK(c.untouched());
}

TEST_CASE("MongoDB: --source nosuch with a template naming a real field is refused before the run", "[mongo][enrich][preflight]") {
  seeded_collection c("pf_source");
  const auto [rc, out] = enrich(c, {"--source", "nosuch", "--url", "http://127.0.0.1:1/json/{originatingIp}"});
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--source 'nosuch' and --url's {originatingIp} name different fields"));
  CHECK(c.untouched());
}

TEST_CASE("MongoDB: the template's field is read without --source, and one odd document does not refuse the run",
          "[mongo][enrich][preflight]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  seeded_collection c("pf_template");
  // Seeded as originatingIp: rename it to `ip` in every document, then add one without it.
  mongo::run_command(c.s, R"({"update": ")" + c.o.collection +
                                   R"(", "updates": [{"q": {}, "u": {"$rename": {"originatingIp": "ip"}}, "multi": true}]})");
  mongo::run_command(c.s, R"({"insert": ")" + c.o.collection + R"(", "documents": [{"location": null}]})");
  const auto [rc, out] = enrich(c, {"--url", api.base_url() + "/json/{ip}"});
  INFO(out);
  CHECK(rc == 1);  // the one without `ip` fails in the run, named; the rest are done
  CHECK_THAT(out, Catch::Contains("summary: completed=20 failed=1 "));
  CHECK(api.requests() == 20);  // 20: the pre-flight's answer is its document's (21 before: bought twice)
}
