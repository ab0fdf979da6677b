// The user's own MariaDB table keyed as real tables are: dibs claims, fences and deletes by the
// user's primary key whatever its type (tests/support/sql_key_case.hpp), and refuses, at init and
// at start, a table whose rows it can't address by one key.
#include "support/mysql_env.hpp"
#include "support/sql_key_case.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
const auto dialect = test::this_backend().dialect();
}  // namespace

TEST_CASE("a MariaDB table keyed by varchar(12) is onboarded by dibs init and drained", "[mysql][keys]") {
  const std::vector<std::string> keys{"'A-17'", "'o''brien'", "'back\\\\slash'", "'Zürich-1'", "'9'", "'07'", "'7'", "'with space'"};
  // Named id (what dibs used to read as its own integer key), and named otherwise.
  test::check_keyed_table(dialect, test::unique_table("keyed_id"), "id", "VARCHAR(12)", keys);
  test::check_keyed_table(dialect, test::unique_table("keyed_code"), "code", "VARCHAR(12)", keys);
}

TEST_CASE("a MariaDB table keyed by bigint takes 19-digit and negative ids", "[mysql][keys]") {
  test::check_keyed_table(dialect, test::unique_table("keyed_big"), "id", "BIGINT",
                          {"1000000000000000001", "9223372036854775807", "-5", "-9223372036854775808", "0"});
}

TEST_CASE("a MariaDB table keyed by bigint unsigned takes its largest id", "[mysql][keys]") {
  test::check_keyed_table(dialect, test::unique_table("keyed_ubig"), "id", "BIGINT UNSIGNED",
                          {"18446744073709551615", "1000000000000000001", "1"});
}

TEST_CASE("MariaDB tables keyed by uuid, binary(16) and decimal are onboarded and drained", "[mysql][keys]") {
  test::check_keyed_table(dialect, test::unique_table("keyed_uuid"), "id", "UUID",
                          {"'0b7d6c1e-4b7a-4d2e-9f3c-1a2b3c4d5e6f'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'"});
  test::check_keyed_table(dialect, test::unique_table("keyed_bin"), "id", "BINARY(16)",
                          {"UNHEX('0B7D6C1E4B7A4D2E9F3C1A2B3C4D5E6F')", "UNHEX('00000000000000000000000000000027')"});
  test::check_keyed_table(dialect, test::unique_table("keyed_dec"), "id", "DECIMAL(30,2)",
                          {"12.50", "-0.01", "1234567890123456789012345678.99"});
}

TEST_CASE("a MariaDB table dibs can't address by one key is refused at init and at start", "[mysql][keys]") {
  const auto composite = test::unique_table("keyed_pair");
  test::check_unaddressable_table(
      dialect, composite,
      {"CREATE TABLE " + composite + " (id INT NOT NULL, region VARCHAR(8) NOT NULL, ip VARCHAR(64), PRIMARY KEY (id, region))",
       "INSERT INTO " + composite + " VALUES (1, 'eu', '8.8.8.8'), (1, 'us', '8.8.4.4')"},
      "table " + composite + " has no key dibs can address its rows by: its primary key has 2 columns (id, region)",
      "ALTER TABLE `" + composite + "` ADD UNIQUE KEY (`id`)");
  const auto keyless = test::unique_table("keyed_none");
  test::check_unaddressable_table(
      dialect, keyless,
      {"CREATE TABLE " + keyless + " (id INT NOT NULL, ip VARCHAR(64))",
       "INSERT INTO " + keyless + " VALUES (1, '8.8.8.8'), (1, '8.8.4.4')"},
      "table " + keyless + " has no key dibs can address its rows by: it has no primary key",
      "ALTER TABLE `" + keyless + "` ADD UNIQUE KEY (`id`)");
}
