// What one line of file mode's input is, read whole before anything is claimed: blank (no item),
// an item (a JSON object: the source read from it), or a line that fails with its reason (not
// JSON at all -- a truncated object is not an item, and its source is never sent -- or JSON that
// is not an object). And the refusal of an input of which no line is an item (a CSV file, random
// bytes): every line would fail, so the run is refused before any call. Pure (test_jsonl_store.cpp).
#pragma once

#include <dibs/job.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace simdjson::dom {
class parser;
}

namespace dibs::jsonl {

struct input_line {
  enum class kind { blank, item, failed } what = kind::blank;
  std::string why;   // failed: the reason ("line 7 is not JSON: ...")
  job_field source;  // item: the source field (`pointer`, a JSON pointer), as the line has it
  std::vector<job_field> more;  // item: the more fields (a request's headers and body), named
};

// A field an item hands the processor besides its source: its name and where it is in a line.
struct more_field {
  std::string name, pointer;
};

// `parser` is reused from line to line; `n` is the line's number. A field that is not a string
// carries its JSON text (a request's body may be an object).
input_line read_input_line(simdjson::dom::parser& parser, const std::string& line, std::size_t n, const std::string& pointer,
                           const std::vector<more_field>& more = {});

// "" when the input has an item, or no line at all; else the refusal: `path`, its `lines`
// (non-blank), and the first's reason.
std::string not_json_lines(const std::string& path, std::size_t lines, std::size_t items, const std::string& first_reason);

}  // namespace dibs::jsonl
