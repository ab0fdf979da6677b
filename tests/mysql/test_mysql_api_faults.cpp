// `dibs enrich` over MariaDB against a misbehaving API, as users run it: the fault mix of the
// failure-handling issue under ip-api's rate limit, HTTPS verification, and batch lookups.
#include "support/mysql_env.hpp"
#include "support/process.hpp"
#include "support/served_rate.hpp"
#include "support/test_pki.hpp"
#include "support/run_dibs.hpp"

#include <dibs/stores/mysql_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
struct table_fixture {
  explicit table_fixture(const std::string& name, std::size_t rows) : table(test::unique_table(name)), uri(test::mysql_uri_for(table)) {
    sql::mysql_options o;
    o.uri = uri;
    store = std::make_unique<sql::mysql_store>(o);
    store->reset_table();
    REQUIRE(store->seed(rows, 77) == rows);
  }
  std::string count(const std::string& where) const {
    return store->query_value("SELECT COUNT(*) FROM " + table + " WHERE " + where).value_or("?");
  }
  std::string table;
  std::string uri;
  std::unique_ptr<sql::mysql_store> store;
};
}  // namespace

TEST_CASE("20% errors, 5% timeouts, 5% garbage under a 600/min limit: every row done or failed for a stated reason, no request over the limit",
          "[mysql][enrich][faults]") {
  auto so = stub::stub_options::loopback();
  so.error_rate = 0.20;
  so.timeout_rate = 0.05;
  so.garbage_rate = 0.05;
  so.rate_limit = 600;  // ip-api's rule: a fixed one-minute window
  so.rate_window = 60s;
  so.record = true;
  so.seed = 11;
  stub::ipapi_stub api(so);
  api.start();
  table_fixture t("faults", 100);

  std::string out;
  test::child_process run({dibs::test::dibs_binary(), "enrich", "--store", t.uri, "--url", api.base_url() + "/json/{originatingIp}",
                           "--rate", "600/min", "--request-timeout", "300ms", "--backoff-base", "50ms",
                           "--backoff-max", "400ms", "--max-attempts", "4", "--grace", "0s", "--no-progress",
                           "--no-preflight"},  // the faults are for the run: a pre-flight that met one would stop it
                          true);
  const int rc = run.finish(out);
  INFO(out);
  // The table is drained (nothing pending or leased); 1 says some rows failed, 0 that none did.
  CHECK(rc == (t.count("dibs_failed_at IS NOT NULL") == "0" ? 0 : 1));
  CHECK(t.count("location IS NOT NULL AND dibs_failed_at IS NULL") == std::to_string(100 - std::stoi(t.count("dibs_failed_at IS NOT NULL"))));
  CHECK(t.count("dibs_lock_token IS NOT NULL") == "0");
  CHECK(t.count("JSON_UNQUOTE(JSON_EXTRACT(location, '$.query')) = originatingIp") == t.count("location IS NOT NULL"));
  // Every failure names its cause and stays within the attempts.
  CHECK(t.count("dibs_failed_at IS NOT NULL AND (dibs_error IS NULL OR dibs_error NOT LIKE 'gave up after 4 attempts: %')") == "0");
  CHECK(t.count("dibs_attempts > 4") == "0");
  const auto f = api.faults();
  CHECK(f.errors > 0);
  CHECK(f.timeouts > 0);
  CHECK(f.garbage > 0);
  // Nothing over the limit: the stub never had to refuse, and no second held more than 10/s
  // plus the one burst the limiter allows.
  CHECK(api.rate_limited() == 0);
  const auto times = api.served_times();
  CHECK(test::busiest(times, 800ms) <= 11);  // 800 ms: room for a request stamped late (a stall)
  // ... and no faster on the whole: n requests at 10/s (one burst) take at least (n - 11) / 10 s.
  REQUIRE(times.size() > 11);
  CHECK(times.back() - times.front() >= (times.size() - 11) * 100ms);
}

TEST_CASE("dibs enrich over HTTPS: refused before the run without the CA, done with --ca-file", "[mysql][enrich][tls]") {
  auto pki = test::make_test_pki("localhost");
  stub::ipapi_stub api(stub::stub_options::loopback_tls(pki.server_cert, pki.server_key));
  api.start();
  table_fixture t("tls", 300);
  const auto url = api.base_url() + "/json/{originatingIp}";  // https://localhost:PORT

  std::string out;
  test::child_process refused({dibs::test::dibs_binary(), "enrich", "--store", t.uri, "--url", url, "--no-progress"}, true);
  CHECK(refused.finish(out) == 2);
  CHECK_THAT(out, Catch::Contains("the API's certificate is refused: tls handshake with localhost: certificate verify failed"));
  CHECK(api.requests() == 0);
  CHECK(t.count("dibs_lock_token IS NOT NULL OR dibs_attempts > 0") == "0");  // nothing was claimed

  out.clear();
  test::child_process run({dibs::test::dibs_binary(), "enrich", "--store", t.uri, "--url", url, "--ca-file", pki.ca_cert, "--no-progress"},
                          true);
  CHECK(run.finish(out) == 0);
  INFO(out);
  CHECK(t.count("JSON_UNQUOTE(JSON_EXTRACT(location, '$.query')) = originatingIp") == "300");
}

TEST_CASE("dibs enrich --batch-url looks rows up a hundred at a time", "[mysql][enrich][batch]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  table_fixture t("batch", 2000);
  t.store->execute("INSERT INTO " + t.table + " (originatingIp) VALUES ('10.9.8.7')");
  std::string out;
  test::child_process run({dibs::test::dibs_binary(), "enrich", "--store", t.uri, "--batch-url", api.base_url() + "/batch",
                           "--batch-size", "100", "--concurrency", "400", "--no-progress", "--no-data-fails"},
                          true);
  const int rc = run.finish(out);
  INFO(out);
  CHECK(rc == 1);  // one row failed in this run (--no-data-fails): the exit status says so
  CHECK(test::last_line(out).rfind("summary: completed=2000 failed=1 ", 0) == 0);
  CHECK(t.count("JSON_UNQUOTE(JSON_EXTRACT(location, '$.query')) = originatingIp") == "2000");
  CHECK(t.store->query_value("SELECT dibs_error FROM " + t.table + " WHERE dibs_failed_at IS NOT NULL") ==
        std::optional<std::string>("the API has no data: private range"));
  CHECK(api.batch_requests() <= 2001 / 100 + 8);  // full batches, and a few partial ones at the claim edges
  CHECK(api.requests() == api.batch_requests());
}
