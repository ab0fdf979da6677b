#include "answer_flags.hpp"

#include <CLI/CLI.hpp>

#include <stdexcept>

namespace dibs::cli {

void answer_flags::add_to(CLI::App& cmd, const std::string& group) {
  cmd.add_option("--no-data-on", no_data_on,
                 "an answer with this HTTP status means the API has no data for the item (404, 410; repeatable or "
                 "comma-separated): the item is done with that answer, counted as no_data, never asked again")
      ->type_name("STATUS")
      ->delimiter(',')
      ->check(CLI::Range(100, 599))
      ->group(group);
  cmd.add_option("--no-data-when", no_data_when,
                 "an answer whose member (a JSON Pointer, RFC 6901) has this value means no data for the item "
                 "('/status=fail', '/found=false'; repeatable); ip-api's rule is /status=fail")
      ->type_name("POINTER=VALUE")
      ->allow_extra_args(false)
      ->group(group);
  cmd.add_option("--map", map,
                 "write these members of the answer (JSON Pointers, RFC 6901) into fields of their own, typed as the "
                 "answer has them: 'country=/country,city=/city,lat=/loc/lat'; the target then holds those values as one "
                 "object (still what marks an item done). Into a SQL table's columns, each converted by the server to the "
                 "column's type; dibs init --map 'lat=/loc/lat:DOUBLE PRECISION' adds a missing one and records the "
                 "mapping, so enrich needs no --map")
      ->type_name("NAME=/POINTER,...")
      ->allow_extra_args(false)
      ->group(group);
  cmd.add_option("--expect-json", expect_json,
                 "the answer's member at this JSON Pointer is a string that must hold JSON (an LLM's chat content: "
                 "/choices/0/message/content), or the item fails with that reason and nothing is written; --map "
                 "reaches inside it: 'label=/choices/0/message/content/label'")
      ->type_name("POINTER")
      ->group(group);
}

std::optional<http::json_pointer> answer_flags::expect_json_pointer() const {
  if (expect_json.empty()) return std::nullopt;
  std::string why;
  auto p = http::json_pointer::parse(expect_json, &why);
  if (!p || expect_json.empty()) throw std::invalid_argument("--expect-json '" + expect_json + "': " + why);
  return p;
}

http::answer_map answer_flags::answer_map() const {
  http::answer_map m;
  for (const auto& text : map) http::parse_answer_map(text, "--map", m);
  return m;
}

std::string answer_flags::map_text() const {
  std::string out;
  for (const auto& text : map)
    if (!text.empty()) out += (out.empty() ? "" : ",") + text;
  return out;
}

http::no_data_rules answer_flags::no_data() const {
  http::no_data_rules r;
  for (const int s : no_data_on) {
    if (s >= 200 && s < 300)
      throw std::invalid_argument("--no-data-on " + std::to_string(s) + ": a 2xx answer is data; say which member means "
                                  "none with --no-data-when");
    if (s == 408 || s == 429 || s >= 500)
      throw std::invalid_argument("--no-data-on " + std::to_string(s) + ": this status says the API is busy or down, "
                                  "not that the item has no data");
    r.statuses.push_back(s);
  }
  for (const auto& w : no_data_when) r.members.push_back(http::parse_member_is(w, "--no-data-when"));
  return r;
}

}  // namespace dibs::cli
