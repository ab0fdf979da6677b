// Library messages name settings as the library does ("rate", "id_field"); the dibs program
// names them as flags ("--rate", "--id-field") by setting the namer once at its start, so what
// its users read is what they typed.
#include "apps/dibs/flag_names.hpp"
#include "adapters/http/client/limit_signals.hpp"
#include <dibs/stores/line_keys.hpp>

#include <dibs/setting_error.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
// The CLI's naming for one test, and the library's own again after it.
struct flag_names_for_a_while {
  flag_names_for_a_while() { name_settings_with(&cli::flag_for); }
  ~flag_names_for_a_while() { name_settings_with(nullptr); }
};

std::string line_keys_error() {
  try {
    jsonl::read_line_keys("{\"id\":\"a\"}\n{\"ip\":1}\n", "id", "in.jsonl");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "not thrown";
}
}  // namespace

TEST_CASE("library messages name settings by the library's names unless the program names them", "[cli][settings]") {
  const auto advice = [] { return http::overload_advice(http::limit_signal::throttled, "http://api:80", 12, 290); };
  SECTION("a library user reads the library's names") {
    CHECK(setting_name("rate_scope") == "rate_scope");
    CHECK(advice() == "concurrency for http://api:80 lowered to 12: 429 Too Many Requests: the API takes fewer calls at "
                      "once, or limits its rate (about 290/s got through; if it is a rate, rate 261/s keeps under it)");
    CHECK(line_keys_error() == "id_field id: line 2 of in.jsonl has no 'id' (with id_field every line is named by it, "
                               "so each needs its own)");
    CHECK(std::string(setting_error("db", "must not be empty").what()) == "db must not be empty");
  }
  SECTION("the dibs program's users read its flags, in the words they read before") {
    flag_names_for_a_while cli;
    CHECK(setting_name("rate_scope") == "--rate-scope");
    CHECK(setting_name("database") == "--db");
    CHECK(advice() == "concurrency for http://api:80 lowered to 12: 429 Too Many Requests: the API takes fewer calls at "
                      "once, or limits its rate (about 290/s got through; if it is a rate, --rate 261/s keeps under it)");
    CHECK(line_keys_error() == "--id-field id: line 2 of in.jsonl has no 'id' (with --id-field every line is named by "
                               "it, so each needs its own)");
    // A setting_error passed on whole (its what() inside another message) still says the flag.
    const setting_error e("db", "must not be empty");
    CHECK(std::string(e.what()) == "--db must not be empty");
    CHECK(cli::in_flag_words(e) == "--db must not be empty");
  }
}
