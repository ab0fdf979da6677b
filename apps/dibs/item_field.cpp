#include "item_field.hpp"

#include "engine/src/uri_redact.hpp"

#include <stdexcept>

namespace dibs::cli {

std::string item_field(const item_field_flags& f) {
  if (f.batch) {
    // The body is built from one field: --batch-key if given, else --source. Both naming
    // different fields never worked (the store reads only one), so it is refused.
    if (!f.batch_key.empty() && f.source_given && f.batch_key != f.source)
      throw std::invalid_argument("--source '" + f.source + "' and --batch-key '" + f.batch_key +
                                  "' name different fields: give one of them");
    return f.batch_key.empty() ? f.source : f.batch_key;
  }
  const auto shown = redact_api_url(f.url);
  if (f.url_fields.empty())
    throw std::invalid_argument("--url '" + shown +
                                "' names no {field}: put the item's field in braces, e.g. http://HOST/json/{originatingIp}");
  if (f.url_fields.size() > 1) {
    std::string names;
    for (const auto& n : f.url_fields) names += (names.empty() ? "{" : ", {") + n + "}";
    throw std::invalid_argument("--url '" + shown + "' names " + std::to_string(f.url_fields.size()) + " fields (" +
                                names + "): an item is read by one field");
  }
  const auto& field = f.url_fields.front();
  if (f.source_given && f.source != field)
    throw std::invalid_argument("--source '" + f.source + "' and --url's {" + field +
                                "} name different fields: the --url template says which field is read, drop --source");
  return field;
}

}  // namespace dibs::cli
