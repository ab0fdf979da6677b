#include "item_field.hpp"

#include "engine/src/uri_redact.hpp"

#include <algorithm>
#include <stdexcept>

namespace dibs::cli {

std::string item_field(const item_field_flags& f) {
  if (f.batch && !f.batch_body_fields.empty()) {
    // A template's element says which fields are read: the first is the source, unless --source
    // names another of them.
    const auto& read = f.batch_body_fields;
    if (!f.source_given) return read.front();
    if (std::find(read.begin(), read.end(), f.source) == read.end())
      throw std::invalid_argument("--source '" + f.source + "' is no field --batch-body reads (it reads {" + read.front() +
                                  "}): drop --source, or name one of its fields");
    return f.source;
  }
  if (f.batch) {
    // The body is built from one field: --batch-key if given, else --source. Both naming
    // different fields never worked (the store reads only one), so it is refused.
    if (!f.batch_key.empty() && f.source_given && f.batch_key != f.source)
      throw std::invalid_argument("--source '" + f.source + "' and --batch-key '" + f.batch_key +
                                  "' name different fields: give one of them");
    return f.batch_key.empty() ? f.source : f.batch_key;
  }
  const auto shown = redact_api_url(f.url);
  if (f.url_fields.empty() && f.request_fields.empty())
    throw std::invalid_argument("--url '" + shown +
                                "' names no {field}: put the item's field in braces, e.g. http://HOST/json/{originatingIp} "
                                "(or in --body)");
  const auto& field = f.url_fields.empty() ? f.request_fields.front() : f.url_fields.front();
  if (f.source_given && f.source != field)
    throw std::invalid_argument("--source '" + f.source + "' and --url's {" + field +
                                "} name different fields: the --url template says which field is read, drop --source");
  return field;
}

std::vector<std::string> more_item_fields(const item_field_flags& f, const std::string& source) {
  std::vector<std::string> out;
  if (f.batch) {  // a template's other fields; ip-api's batch reads its key alone
    for (const auto& n : f.batch_body_fields)
      if (n != source && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    return out;
  }
  for (const auto* names : {&f.url_fields, &f.request_fields})
    for (const auto& n : *names)
      if (n != source && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

}  // namespace dibs::cli
