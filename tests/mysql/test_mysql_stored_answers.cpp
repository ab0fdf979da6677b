// `--reuse-answers store` on MariaDB: answers kept in dibs_answers serve the next run, each row
// its own address's, and age by the server's clock (support/stored_answers_case.hpp).
#include "support/mysql_env.hpp"
#include "support/stored_answers_case.hpp"

#include <adapters/mysql/mysql_answers.hpp>
#include <adapters/mysql/mysql_store.hpp>

#include <catch2/catch.hpp>

#include <memory>

using namespace dibs;

TEST_CASE("the next dibs enrich takes MariaDB's kept answers and asks the API nothing", "[mysql][reuse][stored-answers]") {
  const auto table = test::unique_table("kept");
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(table);
  auto s = std::make_shared<sql::mysql_store>(o);
  auto value = [&](const std::string& q) { return std::stol(s->query_value(q).value_or("-1")); };
  test::check_answers_kept_in_store({
      {"--store", o.uri},
      [&] {
        sql::mysql_answers made(s);  // creates dibs_answers when missing
        s->execute("DELETE FROM dibs_answers");
      },
      [&] { s->execute("UPDATE dibs_answers SET stored_at = stored_at - INTERVAL 2 HOUR"); },
      [&] {
        return value("SELECT COUNT(*) FROM " + table + " WHERE location IS NOT NULL AND "
                     "NOT (JSON_UNQUOTE(JSON_EXTRACT(location, '$.query')) <=> originatingIp)");  // a missing query counts
      },
  });
}

TEST_CASE("MariaDB's dibs_answers keeps an answer in any script, whatever the database's character set",
          "[mysql][reuse][stored-answers]") {
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(test::unique_table("kept_utf8"));
  auto s = std::make_shared<sql::mysql_store>(o);
  s->execute("DROP TABLE IF EXISTS dibs_answers");  // made again below, as a first run makes it
  REQUIRE(s->query_value("SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = DATABASE()") ==
          std::optional<std::string>("latin1"));  // the test server's default, as on many MariaDB servers
  sql::mysql_answers answers(s);
  const answer_key k{std::string(64, 'a'), "GET http://api:80/json/1.2.3.4"};
  const std::string tokyo = "{\"city\":\"東京\",\"note\":\"🙂 Zürich\"}";  // latin1 holds none of the first two
  answers.keep({{k, tokyo}});
  const auto found = answers.find(k, std::chrono::hours(1));
  REQUIRE(found);
  CHECK(found->answer == tokyo);
  s->execute("DELETE FROM dibs_answers WHERE digest = '" + k.digest + "'");
}
