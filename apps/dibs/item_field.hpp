// Which field (column) of an item `dibs enrich` reads, decided once from the flags: the --url
// template is the one source of truth (its `{field}` is what the store reads); --source matters
// only in batch mode, where the body is built from a field the URL does not name. Pure; tested
// in tests/unit/test_item_field.cpp.
#pragma once

#include <string>
#include <vector>

namespace dibs::cli {

struct item_field_flags {
  bool batch = false;                   // --batch-url given (else --url)
  std::string url;                      // the --url text, for messages (redacted there)
  std::vector<std::string> url_fields;  // the --url template's {fields}, in order
  std::string source;                   // --source (its default when not given)
  bool source_given = false;
  std::string batch_key;                // --batch-key ("" when not given)
};

// The field the store reads. Throws std::invalid_argument (a usage error) naming the flags when
// the template names no field or more than one (a store reads one per item), or when --source
// (or --batch-key) names another field than the template (or --source) does.
std::string item_field(const item_field_flags& f);

}  // namespace dibs::cli
