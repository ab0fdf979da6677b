// A batch request of any shape (--batch-body) and its answer split back (--batch-item), read
// without a network: the array that holds the item's fields is written once per item; each
// item takes the answer at its index, or none when the count or the indexes are not each item's
// once (a vector on the wrong row is silent corruption).
#include <dibs/http/batch_body.hpp>

#include "adapters/http/processor/batch_halving.hpp"
#include "adapters/http/processor/batch_items.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace dibs;
using namespace dibs::http;

namespace {
job item(std::string text) {
  job j;
  j.fields.push_back({"text", job_field::state::string, std::move(text), {}, {}});
  return j;
}
std::string body_of(const batch_body& b, const std::vector<std::string>& texts) {
  std::vector<std::string> elements;
  for (const auto& t : texts) {
    auto e = b.element(item(t));
    REQUIRE(e.error.empty());
    elements.push_back(e.text);
  }
  return b.join(elements);
}
batch_items split(const std::string& body, const std::string& pointer, std::size_t n) {
  simdjson::dom::parser p;
  return split_batch_items(p, body, *batch_item_pointer::parse(pointer), n);
}
}  // namespace

TEST_CASE("a batch body writes the array that holds the item's field once per item, the rest as it is", "[batch][unit]") {
  const auto openai = batch_body::parse(R"({"model": "text-embedding-3-small", "input": [{text}]})", "--batch-body");
  CHECK(body_of(openai, {"first", "a \"quoted\" one"}) ==
        R"({"model": "text-embedding-3-small", "input": ["first","a \"quoted\" one"]})");
  // An element of its own shape (Gemini's batchEmbedContents): the OUTERMOST array repeats.
  const auto gemini =
      batch_body::parse(R"({"requests": [{"model": "m", "content": {"parts": [{"text": {text}}]}}]})", "--batch-body");
  CHECK(body_of(gemini, {"a", "b"}) ==
        R"({"requests": [{"model": "m", "content": {"parts": [{"text": "a"}]}},{"model": "m", "content": {"parts": [{"text": "b"}]}}]})");
  // ip-api's batch is one shape of it; a field inside a string of the template too.
  CHECK(body_of(batch_body::parse("[{text}]", "--batch-body"), {"8.8.8.8", "1.1.1.1"}) == R"(["8.8.8.8","1.1.1.1"])");
  CHECK(body_of(batch_body::parse(R"({"q": ["ip {text}"]})", "--batch-body"), {"1"}) == R"({"q": ["ip 1"]})");
}

TEST_CASE("a batch body is refused where no one array holds every field once", "[batch][unit]") {
  auto refused = [](const std::string& text) {
    try {
      batch_body::parse(text, "--batch-body");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused(R"({"input": {text}})"), Catch::Contains("stands in no array"));
  CHECK_THAT(refused(R"({"input": [{text}], "user": {user}})"), Catch::Contains("must stand in the one array"));
  CHECK_THAT(refused(R"({"input": [{text}, "x"]})"), Catch::Contains("more than its one element"));
  CHECK_THAT(refused(R"({"input": ["x"]})"), Catch::Contains("no {field}"));
  CHECK_THAT(refused(R"({"key": "{env:KEY}", "input": [{text}]})"), Catch::Contains("secret"));
  CHECK_THAT(refused(R"({"input": [{text}])"), Catch::Contains("not JSON"));
}

TEST_CASE("an item pointer needs {i} once as a whole step", "[batch][unit]") {
  const auto p = batch_item_pointer::parse("/data/{i}/embedding");
  REQUIRE(p);
  CHECK(p->array() == "/data");
  CHECK(p->inside() == "/embedding");
  CHECK(batch_item_pointer::parse("/{i}")->array().empty());
  CHECK_FALSE(batch_item_pointer::parse("/data/x{i}"));
  CHECK_FALSE(batch_item_pointer::parse("/data/0"));
  CHECK_FALSE(batch_item_pointer::parse("/a/{i}/b/{i}"));
  CHECK_FALSE(batch_item_pointer::parse("data/{i}"));
}

TEST_CASE("each item takes the element whose index is its own, in whatever order they come", "[batch][unit]") {
  const auto s = split(R"({"data": [{"index": 1, "embedding": [0.2]}, {"index": 0, "embedding": [0.1]}]})", "/data/{i}/embedding", 2);
  REQUIRE(s.error.empty());
  CHECK(s.items[0].text == R"({"value":[0.1]})");
  CHECK(s.items[1].text == R"({"value":[0.2]})");
  // By place where there is no index; an object is kept as it is (one line).
  const auto placed = split(R"([{"a": 1}, {"a": 2}])", "/{i}", 2);
  CHECK(placed.items[0].text == R"({"a":1})");
  CHECK(placed.items[1].text == R"({"a":2})");
}

TEST_CASE("an answer one vector short, or with an index twice, gives no item any vector", "[batch][unit]") {
  const auto short_one = split(R"({"data": [{"index": 0, "embedding": [1]}, {"index": 2, "embedding": [3]}]})", "/data/{i}", 3);
  CHECK(short_one.out_of_step);
  CHECK(short_one.items.empty());
  CHECK_THAT(short_one.error, Catch::Contains("2 elements for 3 items"));
  const auto twice = split(R"({"data": [{"index": 0}, {"index": 0}]})", "/data/{i}", 2);
  CHECK(twice.out_of_step);
  CHECK(twice.items.empty());
  const auto beyond = split(R"({"data": [{"index": 0}, {"index": 5}]})", "/data/{i}", 2);
  CHECK(beyond.out_of_step);
  const auto mixed = split(R"({"data": [{"index": 0}, {"x": 1}]})", "/data/{i}", 2);
  CHECK(mixed.out_of_step);
  CHECK(mixed.items.empty());
  CHECK_THAT(split(R"({"error": "x"})", "/data/{i}", 1).error, Catch::Contains("no array at '/data'"));
  CHECK_THAT(split("not json", "/{i}", 1).error, Catch::Contains("not valid JSON"));
}

TEST_CASE("an element without the item's answer inside fails that item alone", "[batch][unit]") {
  const auto s = split(R"({"data": [{"index": 0, "embedding": [1]}, {"index": 1}]})", "/data/{i}/embedding", 2);
  REQUIRE(s.error.empty());
  CHECK(s.items[0].ok);
  CHECK_FALSE(s.items[1].ok);
  CHECK_THAT(s.items[1].text, Catch::Contains("nothing at '/embedding'"));
}

TEST_CASE("two halves of a batch refused whole say whether a row, the size or the request was refused", "[batch][unit]") {
  const std::string whole = "HTTP 400 Bad Request: missing required member 'input_type'";
  CHECK(judge_halves(400, whole, {false, "", true}, {false, "", true}) == halving_verdict::too_large);
  // Not refused is not taken: a timeout, a 5xx, a budget that sent nothing says nothing of the size.
  CHECK(judge_halves(400, whole, {false, "", false}, {false, "", true}) == halving_verdict::look_inside);
  CHECK(judge_halves(400, whole, {false, "", false}, {false, "", false}) == halving_verdict::look_inside);
  CHECK(judge_halves(400, whole, {true, whole}, {true, whole}) == halving_verdict::not_a_rows_doing);
  CHECK(judge_halves(400, whole, {true, whole}, {false, ""}) == halving_verdict::look_inside);  // one row's, in one half
  // A size cap in words that never name a size: halved on until a part is taken.
  const std::string too_large = "HTTP 413 Payload Too Large: Request Entity Too Large";
  CHECK(judge_halves(413, too_large, {true, too_large}, {true, too_large}) == halving_verdict::look_inside);
  CHECK(judge_halves(422, whole, {true, whole}, {true, whole}) == halving_verdict::not_a_rows_doing);
  // OpenAI's 429 "Request too large": more tokens than the whole limit, a size too.
  const std::string tokens = "HTTP 429 Too Many Requests: Request too large for m on tokens per min (TPM): Limit 40";
  CHECK(judge_halves(429, tokens, {true, tokens}, {true, tokens}) == halving_verdict::look_inside);
  // Each half refused in words of its own (a size, each row's index): looked inside, each.
  CHECK(judge_halves(413, "batch size 100 > 32", {true, "batch size 50 > 32"}, {true, "batch size 50 > 32"}) ==
        halving_verdict::look_inside);
}

TEST_CASE("a refusal that names the most rows a request takes is taken at its word", "[batch][unit]") {
  // text-embeddings-inference, Cohere, OpenAI: the cap in their own words.
  CHECK(rows_cap_in_words("HTTP 413: batch size 40 > maximum allowed batch size 32", 40) == 32u);
  CHECK(rows_cap_in_words("HTTP 400: invalid request: you can pass in a maximum of 96 texts", 100) == 96u);
  CHECK(rows_cap_in_words("HTTP 400: Too many inputs. The max number of inputs is 2048.", 4096) == 2048u);
  CHECK(rows_cap_in_words("HTTP 400: the batch may hold at most 16 items", 100) == 16u);
  // A cap no lower than the batch, one in tokens, characters or bytes, a row's index, a number
  // with no cap word before it: no rows named.
  CHECK_FALSE(rows_cap_in_words("HTTP 400: Too many inputs. The max number of inputs is 2048.", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 400: This model's maximum context length is 8192 tokens, however you requested 9000 tokens", 100000));
  CHECK_FALSE(rows_cap_in_words("HTTP 413: maximum body size 64 KB", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 400: '$.input[37]' is invalid", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 422: Request Entity Too Large", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 400: max temperature is 2.5", 100));
  // Numbers that are parts of others, counts of something else, or far from a rows' word (a
  // review's list of refusals that would have shrunk every batch for the rest of the run).
  CHECK_FALSE(rows_cap_in_words("HTTP 413: max request size is 1,048,576 bytes", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 400: maximum context length is 8,192 tokens", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 400: The max context length of voyage-3 is 32000 tokens", 100000));
  CHECK_FALSE(rows_cap_in_words("HTTP 400: max tokens for text-embedding-004 is 2048", 4096));
  CHECK_FALSE(rows_cap_in_words("HTTP 400: decimal above maximum value. Expected a value <= 2, but got 2.5", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 413: limit of 2 MiB", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 413: max body size is 10M", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 400: at most 1 image", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 400: maximum 3 minutes", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 429: limit exceeded, retry in 30 s", 100));
  CHECK_FALSE(rows_cap_in_words("HTTP 413: <html><style>body{max-width: 35em}</style></html>", 100));
  // ip-api's (the stub's) 422.
  CHECK(rows_cap_in_words("HTTP 422 Unprocessable Entity: too many queries (at most 100)", 101) == 100u);
}
