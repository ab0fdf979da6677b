// MariaDB's dibs_answers (`--reuse-answers store`; the runs themselves: conformance/sql_stored_answers.cpp):
// any script whatever the database's character set, and a keep larger than max_allowed_packet.
#include "support/mysql_env.hpp"

#include <adapters/stores/open_answer_store.hpp>
#include <dibs/stores/mysql_store.hpp>

#include <catch2/catch.hpp>

#include <memory>

using namespace dibs;

TEST_CASE("MariaDB's dibs_answers keeps an answer in any script, whatever the database's character set",
          "[mysql][reuse][stored-answers]") {
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(test::unique_table("kept_utf8"));
  auto s = std::make_shared<sql::mysql_store>(o);
  s->execute("DROP TABLE IF EXISTS dibs_answers");  // made again below, as a first run makes it
  REQUIRE(s->query_value("SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = DATABASE()") ==
          std::optional<std::string>("latin1"));  // the test server's default, as on many MariaDB servers
  auto answers = open_answer_store(s);
  const answer_key k{std::string(64, 'a'), "GET http://api:80/json/1.2.3.4"};
  const std::string tokyo = "{\"city\":\"東京\",\"note\":\"🙂 Zürich\"}";  // latin1 holds none of the first two
  answers->keep({{k, tokyo}});
  const auto found = answers->find(k, std::chrono::hours(1));
  REQUIRE(found);
  CHECK(found->answer == tokyo);
  s->execute("DELETE FROM dibs_answers WHERE digest = '" + k.digest + "'");
}

TEST_CASE("a keep of answers larger than max_allowed_packet together is split into statements the server takes",
          "[mysql][reuse][stored-answers]") {
  sql::mysql_options admin_options;
  admin_options.uri = test::mysql_uri_for(test::unique_table("kept_small_admin"));
  sql::mysql_store admin(admin_options);
  // A server whose packets are small (64 KiB; sessions read the global at connect), for this
  // test only; the store opened below reads its limit at start.
  const auto before = admin.query_value("SELECT @@GLOBAL.max_allowed_packet").value_or("16777216");
  admin.execute("SET GLOBAL max_allowed_packet = 65536");
  struct restore {
    sql::mysql_store& s;
    std::string v;
    ~restore() { s.execute("SET GLOBAL max_allowed_packet = " + v); }
  } back{admin, before};
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(test::unique_table("kept_small"));
  auto s = std::make_shared<sql::mysql_store>(o);
  auto answers = open_answer_store(s);
  s->execute("DELETE FROM dibs_answers");
  // 12 answers of 20 KB: 240 KB in all, a fifth of it at most in one statement; and one answer
  // that no statement can carry, dropped alone.
  std::vector<std::pair<answer_key, std::string>> batch;
  for (int i = 0; i < 12; ++i) {
    const std::string digest = std::string(60, 'b') + std::to_string(1000 + i);
    batch.push_back({answer_key{digest, "GET /json/" + std::to_string(i)}, "{\"pad\":\"" + std::string(20'000, 'x') + "\"}"});
  }
  batch.push_back({answer_key{std::string(64, 'c'), "GET /json/big"}, "{\"pad\":\"" + std::string(70'000, 'y') + "\"}"});
  answers->keep(batch);
  CHECK(s->query_value("SELECT COUNT(*) FROM dibs_answers") == std::optional<std::string>("12"));
  for (int i = 0; i < 12; ++i) CHECK(answers->find(batch[i].first, std::chrono::hours(1)));
  CHECK_FALSE(answers->find(batch.back().first, std::chrono::hours(1)));
  s->execute("DELETE FROM dibs_answers");
}
