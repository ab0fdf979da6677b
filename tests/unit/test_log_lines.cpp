// Plain-text log lines: one event, one line. Text from outside (an API's message, a server's
// error) must not start a line of its own, or drive the terminal with escape sequences.
#include "support/stderr_of.hpp"

#include <dibs/log.hpp>
#include "engine/src/log_escape.hpp"

#include <catch2/catch.hpp>

using dibs::test::stderr_of;

TEST_CASE("a plain log line shows control characters escaped: an API's message can't forge a line or color the terminal", "[log]") {
  const auto level = dibs::log::current_level();
  dibs::log::set_level(dibs::log::level::warn);
  const std::string forged = "no data\ndibs warn: item 999: failed: x\r\x1b[31mred\x7f\t\x01 \xc2\x9b" "2J end";
  const auto text = stderr_of([&] {
    dibs::log::item(dibs::log::level::warn, "7", "failed", forged);
    dibs::log::warn("server said: ", forged);
  });
  CHECK(text ==
        "dibs warn: item 7: failed: no data\\ndibs warn: item 999: failed: x\\r\\x1b[31mred\\x7f\\t\\x01 \\u009b2J end\n"
        "dibs warn: server said: no data\\ndibs warn: item 999: failed: x\\r\\x1b[31mred\\x7f\\t\\x01 \\u009b2J end\n");
  // Other text, UTF-8 included, as it was.
  CHECK(dibs::log::escape_controls("caf\xc3\xa9 \\ \"q\" \xe2\x82\xac") == "caf\xc3\xa9 \\ \"q\" \xe2\x82\xac");

  // JSON logs already escape, as JSON does.
  dibs::log::set_json(true);
  const auto json = stderr_of([&] { dibs::log::item(dibs::log::level::warn, "7", "failed", "a\nb\x1b"); });
  dibs::log::set_json(false);
  CHECK_THAT(json, Catch::Contains("\"reason\":\"a\\nb\\u001b\"") && Catch::EndsWith("}\n"));
  CHECK(std::count(json.begin(), json.end(), '\n') == 1);
  dibs::log::set_level(level);
}
