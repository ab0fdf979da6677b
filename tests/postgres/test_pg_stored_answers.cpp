// `--reuse-answers store` on PostgreSQL: answers kept in dibs_answers serve the next run, each row
// its own address's, and age by the server's clock (support/stored_answers_case.hpp).
#include "postgres/pg_env.hpp"
#include "support/stored_answers_case.hpp"

#include <adapters/postgres/pg_answers.hpp>
#include <adapters/postgres/pg_store.hpp>

#include <catch2/catch.hpp>

#include <memory>

using namespace dibs;

TEST_CASE("the next dibs enrich takes PostgreSQL's kept answers and asks the API nothing",
          "[postgres][reuse][stored-answers]") {
  const auto table = test::unique_pg_table("kept");
  pg::pg_options o;
  o.uri = test::postgres_uri_for(table);
  auto s = std::make_shared<pg::pg_store>(o);
  auto value = [&](const std::string& q) { return std::stol(s->query_value(q).value_or("-1")); };
  test::check_answers_kept_in_store({
      {"--store", o.uri},
      [&] {
        pg::pg_answers made(s);  // creates dibs_answers when missing
        s->execute("DELETE FROM dibs_answers");
      },
      [&] { s->execute("UPDATE dibs_answers SET stored_at = stored_at - interval '2 hours'"); },
      [&] {
        return value("SELECT count(*) FROM " + table + " WHERE location IS NOT NULL AND "
                     "(location::jsonb)->>'query' IS DISTINCT FROM \"originatingIp\"");  // a missing query counts
      },
  });
}
