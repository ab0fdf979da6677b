// One source of truth for the field an item is read by: the --url template's {field}; --source
// only in batch mode, and refused when it names another field than the template.
#include "apps/dibs/item_field.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using dibs::cli::item_field;
using dibs::cli::item_field_flags;

namespace {
item_field_flags by_url(std::vector<std::string> fields, std::string source = "originatingIp", bool given = false) {
  item_field_flags f;
  f.url = "http://api.example/json/{x}?key=s3cretkey";
  f.url_fields = std::move(fields);
  f.source = std::move(source);
  f.source_given = given;
  return f;
}
}  // namespace

TEST_CASE("the --url template's field is the one the store reads, whatever --source defaults to", "[cli][item-field]") {
  CHECK(item_field(by_url({"ip"})) == "ip");
  CHECK(item_field(by_url({"client.address"})) == "client.address");
  // --source given and agreeing: fine.
  CHECK(item_field(by_url({"ip"}, "ip", true)) == "ip");
}

TEST_CASE("a --source naming another field than the template is refused, naming both flags", "[cli][item-field]") {
  CHECK_THROWS_WITH(item_field(by_url({"originatingIp"}, "nosuch", true)),
                    Catch::Contains("--source 'nosuch'") && Catch::Contains("--url's {originatingIp}"));
}

TEST_CASE("a template with no field is refused, the URL shown without its key", "[cli][item-field]") {
  CHECK_THROWS_AS(item_field(by_url({})), std::invalid_argument);
  CHECK_THROWS_WITH(item_field(by_url({})), Catch::Contains("names no {field}") && !Catch::Contains("s3cretkey"));
}

TEST_CASE("more fields: the URL's first is the source, the rest and --header's and --body's come along", "[cli][item-field]") {
  auto f = by_url({"a", "b"});
  CHECK(item_field(f) == "a");
  f.request_fields = {"b", "c"};
  CHECK(dibs::cli::more_item_fields(f, "a") == std::vector<std::string>{"b", "c"});
  // A URL without a field: the body's first field is the source.
  auto body_only = by_url({});
  body_only.request_fields = {"q", "lang"};
  CHECK(item_field(body_only) == "q");
  CHECK(dibs::cli::more_item_fields(body_only, "q") == std::vector<std::string>{"lang"});
}

TEST_CASE("batch mode reads --batch-key, else --source: the two naming different fields is refused", "[cli][item-field]") {
  item_field_flags f;
  f.batch = true;
  f.source = "originatingIp";
  CHECK(item_field(f) == "originatingIp");
  f.source = "ip";
  f.source_given = true;
  CHECK(item_field(f) == "ip");
  f.batch_key = "ip";
  CHECK(item_field(f) == "ip");
  f.batch_key = "addr";
  CHECK_THROWS_WITH(item_field(f), Catch::Contains("--source 'ip' and --batch-key 'addr'"));
  f.source_given = false;  // only the default: --batch-key says it
  CHECK(item_field(f) == "addr");
}

TEST_CASE("a batch template's element names the fields read: its first is the source unless --source names another of them",
          "[item-field]") {
  item_field_flags f;
  f.batch = true;
  f.source = "originatingIp";  // the default, not given
  f.batch_body_fields = {"text", "lang"};
  CHECK(item_field(f) == "text");  // was the default source, which no line of a text file has
  CHECK(more_item_fields(f, "text") == std::vector<std::string>{"lang"});
  f.source = "lang";
  f.source_given = true;
  CHECK(item_field(f) == "lang");
  CHECK(more_item_fields(f, "lang") == std::vector<std::string>{"text"});
  f.source = "title";
  CHECK_THROWS_WITH(item_field(f), Catch::Contains("--source 'title' is no field --batch-body reads"));
}
