// What a MySQL/MariaDB server refuses, and what its errors mean, decided without a server.
#include <adapters/mysql/server_errors.hpp>
#include <adapters/mysql/server_limits.hpp>

#include <catch2/catch.hpp>

using namespace dibs::mysql;

TEST_CASE("server errors about a value are refusals, connection and lock errors are not", "[mysql][unit]") {
  for (unsigned code : {1406u, 1366u, 4025u, 3140u, 3157u, 1644u, 1062u, 3819u}) CHECK(refuses_content(code));
  // Gone away, lost, killed, shutdown, deadlock, lock wait, unknown table, access denied.
  for (unsigned code : {2006u, 2013u, 1927u, 1053u, 1213u, 1205u, 1146u, 1142u}) CHECK_FALSE(refuses_content(code));
}

TEST_CASE("JSON depth counts objects and arrays, not brackets inside strings", "[mysql][unit]") {
  CHECK(json_depth("1") == 0);
  CHECK(json_depth(R"({"a":[1,{"b":2}]})") == 3);
  CHECK(json_depth(R"({"a":"[[[[{{{{\"]]"})") == 1);
  CHECK(json_depth(std::string(40, '[') + std::string(40, ']')) == 40);
}

TEST_CASE("answers too deep or too large for the server are named before any statement", "[mysql][unit]") {
  const auto maria = limits_for("10.11.19-MariaDB-0+deb12u1", 16u << 20);
  CHECK(maria.max_json_depth == 31);
  CHECK(maria.max_statement_bytes == 16u << 20);
  CHECK(limits_for("8.0.36", 64u << 20).max_json_depth == 100);
  CHECK(maria.delete_returning);  // MariaDB has DELETE ... RETURNING; MySQL 8 does not
  CHECK_FALSE(limits_for("8.0.36", 64u << 20).delete_returning);
  const auto ok = std::string(31, '[') + std::string(31, ']');
  const auto deep = std::string(32, '[') + std::string(32, ']');
  CHECK_FALSE(unstorable_answer(ok, ok.size(), maria));
  CHECK(unstorable_answer(deep, deep.size(), maria) ==
        std::optional<std::string>("the answer is JSON nested 32 levels deep; the server's JSON columns take at most 31"));
  const server_limits small{31, 1000};
  CHECK_FALSE(unstorable_answer("{}", 750, small));
  CHECK_THAT(unstorable_answer("{}", 751, small).value_or(""), Catch::Contains("max_allowed_packet 1000"));
}

TEST_CASE("a server error is a refused row, a transaction to run again, a lost link, a missing right or an outage",
          "[mysql][unit]") {
  // Foreign keys both ways, CHECK, a trigger's SIGNAL, a value too long, NOT NULL, out of range.
  for (unsigned code : {1451u, 1217u, 1452u, 1216u, 3819u, 4025u, 1644u, 1406u, 1048u, 1690u})
    CHECK(classify(code) == error_class::row_refused);
  CHECK(classify(1213) == error_class::rerun);
  CHECK(classify(1205) == error_class::rerun);
  for (unsigned code : {2006u, 2013u, 1927u, 1053u}) CHECK(classify(code) == error_class::link_lost);
  for (unsigned code : {1142u, 1143u, 1044u}) CHECK(classify(code) == error_class::denied);
  // A table that is not there (a trigger's), an unknown code: an outage, retried after a backoff.
  for (unsigned code : {1146u, 1054u, 9999u}) CHECK(classify(code) == error_class::other);
  CHECK(denied_right("DELETE command denied to user 'ro'@'localhost' for table `dibs_test`.`jobs`") == "DELETE");
  CHECK(denied_right("update command denied to user 'ro'@'%' for table 'jobs'") == "UPDATE");
  CHECK(denied_right("Access denied for user 'ro'@'%' to database 'x'").empty());
}
