// Which field (column) of an item `dibs enrich` reads, decided once from the flags: the --url
// template is the one source of truth (its first `{field}` is what the store reads as the
// source), then --header and --body; --source matters only in batch mode, where the body is
// built from a field the URL does not name. Pure; tested
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
  // The fields --header and --body read (request_shape::fields), beside the URL's.
  std::vector<std::string> request_fields;
  // The fields --batch-body's element reads, in order (none: ip-api's batch of keys).
  std::vector<std::string> batch_body_fields;
};

// The field the store reads as the item's source: the template's first {field} (or, with none
// there, the first one --header or --body reads). Throws std::invalid_argument (a usage error)
// naming the flags when no flag names a field, or when --source (or --batch-key) names another
// field than the template (or --source) does.
std::string item_field(const item_field_flags& f);
// The other fields the store hands the processor with each item (the URL's after the first,
// then --header's and --body's), without `source`.
std::vector<std::string> more_item_fields(const item_field_flags& f, const std::string& source);

}  // namespace dibs::cli
