// jsonl_store's `dibs failed`: the failed lines as the journal (or a finished OUT) records them,
// each with its source as IN has it.
#include <dibs/stores/jsonl_store.hpp>

#include <dibs/setting_error.hpp>

#include "failed_lines.hpp"
#include "input_line.hpp"
#include "json_members.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <unordered_set>

namespace dibs::jsonl {

namespace {
int number_member(std::string_view object, std::string_view name) {
  const auto text = member_text(object, name);
  int v = 0;
  if (text) std::from_chars(text->data(), text->data() + text->size(), v);
  return v;
}
}  // namespace

void jsonl_store::list_failed(const retry_filter& which, const std::function<void(const failed_item&)>& each) {
  if (which.since || which.since_ago)
    throw std::invalid_argument(setting_name("since") + ": file mode records no failure times; select with " +
                                setting_name("reason"));
  std::vector<std::pair<std::size_t, failed_item>> failed;  // by line
  {
    std::lock_guard op(op_mutex_);
    const std::unordered_set<std::string> ids(which.ids.begin(), which.ids.end());
    auto add = [&](std::size_t line, const std::string& reason, std::string_view record) {
      if (!reason_selected(reason, which.reason_contains, which.reason_is)) return;
      failed_item f;
      f.id = name_of_line(line);
      if (!id_selected(ids, f.id)) return;
      f.reason = reason;
      f.http_status = number_member(record, "httpStatus");
      f.attempts = number_member(record, "attempts");
      failed.emplace_back(line, std::move(f));
    };
    for (const auto& o : recorded_outcomes())
      if (!o.done) add(o.line, o.reason, o.body);
    for (const auto& [line, why] : unjournaled_failures_) add(line, why, {});
  }
  std::sort(failed.begin(), failed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // The sources, from IN: one pass over it, in line order.
  std::ifstream in(opts_.in, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the input " + opts_.in + ": " + std::strerror(errno));
  const auto pointer = json_pointer_of(opts_.source);
  simdjson::dom::parser parser;
  std::string line;
  std::size_t n = 0;
  for (auto& [wanted, item] : failed) {
    while (n < wanted && std::getline(in, line)) ++n;
    if (n == wanted) {
      const auto read = read_input_line(parser, line, n, pointer);
      if (read.what == input_line::kind::item && read.source.st == job_field::state::string) item.source = read.source.value;
      else if (read.what == input_line::kind::item && !read.source.json.empty()) item.source = read.source.json;
    }
    each(item);
  }
}

}  // namespace dibs::jsonl
