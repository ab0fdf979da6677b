// Many rows in one request (--batch-url with --batch-body): `dibs enrich` against an
// OpenAI-compatible /v1/embeddings (tests/servers/embeddings_api.py, Python's http.server) whose
// vectors are a hash of each input, so every row's vector is checked as its own. Behaviour only:
// the rows packed many a request, split back never shifted, a refused row failed alone.
#include "http_servers/embeddings_api.hpp"

#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <catch2/catch.hpp>

#include <regex>

#include <algorithm>
#include <cmath>
#include <fstream>

using namespace dibs::test;

namespace {
const char* openai_body = R"({"model": "text-embedding-3-small", "input": [{text}]})";

// `n` short texts, one JSON object a line; the rows in `odd` say `odd_text`.
std::filesystem::path write_texts(const std::filesystem::path& dir, int n, std::vector<int> odd = {},
                                  const std::string& odd_text = "") {
  const auto path = dir / "texts.jsonl";
  std::ofstream out(path);
  for (int i = 0; i < n; ++i)
    out << "{\"id\": " << i << ", \"text\": \""
        << (std::count(odd.begin(), odd.end(), i) ? odd_text : "short text number " + std::to_string(i * 7919 % 100003))
        << "\"}\n";
  return path;
}

struct embed_run {
  int rc;
  std::string out;
  std::string written;  // the output file
};

embed_run embed(const embeddings_api& api, const std::string& name, const std::filesystem::path& in,
                std::vector<std::string> extra = {}) {
  const auto out = scratch_dir("dibs-embed", name) / "out.jsonl";
  std::vector<std::string> argv = {"enrich", "--store", "jsonl:" + in.string(), "--out", out.string(), "--source", "text",
                                   "--target", "emb", "--batch-url", api.embeddings_url(), "--batch-body", openai_body,
                                   "--batch-item", "/data/{i}", "--no-progress"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto [rc, said] = run_dibs_within(std::chrono::seconds(180), argv);
  return {rc, said, out.string()};
}
// Every row that has a vector has its own text's: `right` of them, none another's.
void check_vectors(const embed_run& run, int right) {
  const auto v = embeddings_api::check(run.written, "text", "emb.embedding");
  CHECK(v.right == right);
  CHECK(v.wrong == 0);
}
}  // namespace

TEST_CASE("3000 texts with default flags: many a request and every vector on its own row", "[batch][embeddings]") {
  embeddings_api api;
  const auto dir = scratch_dir("dibs-embed", "defaults");
  const auto run = embed(api, "defaults-out", write_texts(dir, 3000));
  INFO(run.out);
  CHECK(run.rc == 0);
  CHECK_THAT(run.out, Catch::Contains("summary: completed=3000 failed=0"));
  check_vectors(run, 3000);
  CHECK(api.stat("inputs") == 3000);  // the pre-flight's row is the run's: each text embedded (and billed) once
  CHECK(api.stat("requests") * 64 <= api.stat("inputs"));  // 64 rows a request or more
}

TEST_CASE("once requests are scarce (a rate holds them), batches grow past 100 rows while the API takes each whole, "
          "and a given --batch-size holds its size",
          "[batch][embeddings]") {
  embeddings_api api;
  const auto dir = scratch_dir("dibs-embed", "grow");
  const auto in = write_texts(dir, 5000);
  const auto grown = embed(api, "grow-out", in, {"--rate", "40/s", "--log-level", "info"});
  INFO(grown.out.substr(0, 4000));
  CHECK_THAT(grown.out, Catch::Contains("summary: completed=5000 failed=0"));
  check_vectors(grown, 5000);
  // Requests are what holds the rows back: a rate of 40 a second holds the second batch already
  // (a sign that does not hang on the machine's timing). Taken whole at 100, one trial goes to
  // 400 at once (its answers and time far under their bounds), and every batch after it holds
  // as many: one step, one word.
  CHECK(api.stat("largest") == 400);
  const std::regex grown_to("rows whole: batches of ([0-9]+) rows from now on");
  CHECK(std::distance(std::sregex_iterator(grown.out.begin(), grown.out.end(), grown_to), std::sregex_iterator()) == 1);
  CHECK_THAT(grown.out, Catch::Contains("batches of 400 rows from now on"));
  CHECK(api.stat("refused") == 0);
  embeddings_api fixed_api;
  const auto fixed = embed(fixed_api, "fixed-out", in, {"--batch-size", "100", "--rate", "40/s"});
  CHECK_THAT(fixed.out, Catch::Contains("summary: completed=5000 failed=0"));
  CHECK(fixed_api.stat("largest") == 100);
}

TEST_CASE("against an API that serves every request at once, batches stay at 100 rows: growth waits for the API to "
          "serve fewer than were sent",
          "[batch][embeddings]") {
  // More rows a request buy nothing where the server takes every request at once (400-row
  // batches cost a sub-second run a tenth of its time). Growth follows only a sign that the
  // requests are scarce: the limit lowered for latency (a queue), a 429 or a 502-504. A busy
  // machine can slow the answers enough to give that sign; then growth must come after it.
  // Answers of 100 ms: a busy machine's jitter of a few ms is no spike there, so the sign (and
  // with it the weaker check below) is rare.
  embeddings_api api({"--latency-ms", "100"});
  const auto dir = scratch_dir("dibs-embed", "no-grow");
  const auto run = embed(api, "no-grow-out", write_texts(dir, 5000), {"--log-level", "debug"});
  INFO(run.out.substr(0, 4000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=5000 failed=0"));
  check_vectors(run, 5000);
  std::smatch scarce, grew;
  const bool scarce_said = std::regex_search(run.out, scarce, std::regex("down: (latency rose|429|502/504)"));
  const bool grew_said = std::regex_search(run.out, grew, std::regex("rows whole: batches of [0-9]+ rows from now on"));
  INFO("the limit said scarce: " << scarce_said << ", growth said: " << grew_said);
  if (!scarce_said) {  // the run this test is for
    CHECK_FALSE(grew_said);
    CHECK(api.stat("largest") == 100);
  } else if (grew_said) {  // a busy machine slowed the answers: growth may follow, never precede
    WARN("the limit went down for latency against a server serving every request at once: the machine is busy");
    CHECK(scarce.position(0) < grew.position(0));
  }
}

TEST_CASE("long texts: a trial stays under the request's byte cap, so it fills, is taken whole and batches grow to it",
          "[batch][embeddings]") {
  // Rows of about 3 KB: 100 of them 300 KB, 400 past the request's cap of 1 MiB. A trial of
  // 400 closed by its bytes never filled, was tried again by every batch, and batches stayed at
  // 100; it goes to 200, which fits. (Requests made scarce by a rate: 300 KB bodies reach a
  // server's queue in the order it reads them, not the order sent, and a short run ends before
  // the limit hears the queue.)
  embeddings_api api;
  const auto dir = scratch_dir("dibs-embed", "grow-long");
  std::string long_text;
  while (long_text.size() < 3000) long_text += "a longer passage of a document about kettles ";
  std::vector<int> all(3000);
  for (int i = 0; i < 3000; ++i) all[i] = i;
  const auto run = embed(api, "grow-long-out", write_texts(dir, 3000, all, long_text),
                         {"--rate", "20/s", "--log-level", "info"});
  INFO(run.out.substr(0, 4000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=3000 failed=0"));
  check_vectors(run, 3000);
  CHECK(api.stat("inputs") == 3000);
  CHECK_THAT(run.out, Catch::Contains("batches of 200 rows from now on"));
  CHECK(api.stat("largest") == 200);
  CHECK(api.stat("refused") == 0);
}

TEST_CASE("grown batches stop at the size the API refuses: learned once, the rows of a refused batch all done",
          "[batch][embeddings]") {
  embeddings_api api({"--max-inputs", "150", "--max-inputs-status", "413"});
  const auto dir = scratch_dir("dibs-embed", "grow-capped");
  const auto run = embed(api, "grow-capped-out", write_texts(dir, 6000), {"--rate", "40/s"});  // scarce requests
  INFO(run.out.substr(0, 4000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=6000 failed=0"));
  check_vectors(run, 6000);
  // 100 taken, then one batch of 400 tried and refused ("batch size 400 > maximum allowed batch
  // size 150"), split at 150 and the rest: 150 taken, the 250 refused again naming 150, so 150
  // is learned (the words followed the rows sent), and growth ends there.
  const std::regex learned("batches of 150 rows at most from now on");
  CHECK(std::distance(std::sregex_iterator(run.out.begin(), run.out.end(), learned), std::sregex_iterator()) == 1);
  CHECK(api.stat("largest") == 150);
  // One batch tries a size before every batch takes it: the size refused costs the trial and its
  // rest, two refused requests (every batch formed at once took the new size before, and 22 of 30
  // were refused).
  CHECK(api.stat("refused") == 2);
}

TEST_CASE("a larger batch the server fails on (500, out of memory) ends growth at the size before it: one failed request, "
          "every row done",
          "[batch][embeddings]") {
  embeddings_api api({"--max-inputs", "150", "--max-inputs-status", "500", "--max-inputs-words", "CUDA out of memory"});
  const auto dir = scratch_dir("dibs-embed", "grow-oom");
  const auto run = embed(api, "grow-oom-out", write_texts(dir, 6000), {"--rate", "40/s"});  // scarce requests
  INFO(run.out.substr(0, 4000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=6000 failed=0"));
  check_vectors(run, 6000);
  // 100 taken, one batch of 400 tried and failed with a 500: its rows asked again, and 100 the
  // most from then on (a 500 is no refusal to halve: the size before it is known to be taken).
  CHECK_THAT(run.out, Catch::Contains("batches of 100 rows at most from now on"));
  CHECK(api.stat("largest") == 100);
  CHECK(api.stat("refused") == 1);
}

TEST_CASE("a dry run of a batch API asks its rows in one request, shows it and each row's write, and writes nothing",
          "[batch][embeddings]") {
  embeddings_api api;
  const auto dir = scratch_dir("dibs-embed", "dry");
  const auto run = embed(api, "dry-out", write_texts(dir, 50), {"--dry-run", "5"});
  INFO(run.out);
  CHECK(run.rc == 0);
  CHECK_THAT(run.out, Catch::Contains("dry run: 5 items in one batch request"));
  CHECK_THAT(run.out, Catch::Contains("POST " + api.embeddings_url()));
  CHECK_THAT(run.out, Catch::Contains("\"input\": [\""));
  CHECK_THAT(run.out, Catch::Contains("would write emb = {\"object\":\"embedding\",\"index\":4,"));
  CHECK_THAT(run.out, Catch::Contains("dry run: 5 items, 1 call to the API; nothing was claimed or written"));
  // The run's tokens estimated by the rows (50 of them, ten times the sample's 5), not by the one call.
  std::smatch m;
  REQUIRE(std::regex_search(run.out, m, std::regex(R"(answers used (\d+) tokens.*the 50 pending items would use about (\d+) tokens)")));
  CHECK(std::stoi(m[2]) == 10 * std::stoi(m[1]));
  CHECK(api.stat("requests") == 1);
  CHECK(api.stat("inputs") == 5);
  CHECK_FALSE(std::filesystem::exists(run.written));
}

TEST_CASE("one text in 10000 the API refuses fails alone with the API's words: the batch halved log2 times at most",
          "[batch][embeddings]") {
  embeddings_api api({"--reject", "POISON"});
  const auto dir = scratch_dir("dibs-embed", "reject");
  const auto run = embed(api, "reject-out", write_texts(dir, 10000, {5171}, "a POISON text"));
  INFO(run.out);
  CHECK(run.rc == 1);  // an item failed
  CHECK_THAT(run.out, Catch::Contains("summary: completed=9999 failed=1"));
  CHECK_THAT(run.out, Catch::Contains("cannot be embedded"));
  // The batch that held it (batches may grow from 100 while taken whole: no larger than the
  // largest taken), then one refused half a halving: 1 + log2 of its size (1 + 7 at 100, 1 + 9 at 400).
  const auto largest = api.stat("largest");
  INFO("largest batch " << largest);
  CHECK(api.stat("refused") >= 1);
  CHECK(api.stat("refused") <= 1 + static_cast<int>(std::ceil(std::log2(static_cast<double>(std::max(largest, 2L))))));
  check_vectors(run, 9999);
}

TEST_CASE("an answer one vector short gives no row another's vector and its batch is asked again",
          "[batch][embeddings]") {
  embeddings_api api({"--drop-vectors", "3"});
  const auto dir = scratch_dir("dibs-embed", "short");
  const auto run = embed(api, "short-out", write_texts(dir, 600));
  INFO(run.out);
  CHECK_THAT(run.out, Catch::Contains("summary: completed=600 failed=0"));
  CHECK(api.stat("shortened") == 3);
  check_vectors(run, 600);
}

TEST_CASE("vectors that come back in an order of their own are matched by their index", "[batch][embeddings]") {
  embeddings_api api({"--shuffle"});
  const auto dir = scratch_dir("dibs-embed", "shuffled");
  const auto run = embed(api, "shuffled-out", write_texts(dir, 500), {"--map", "vector=/embedding"});
  INFO(run.out);
  CHECK_THAT(run.out, Catch::Contains("summary: completed=500 failed=0"));
  const auto v = embeddings_api::check(run.written, "text", "emb.vector");
  CHECK(v.right == 500);
  CHECK(v.wrong == 0);
}

TEST_CASE("vectors of 1536 floats: a batch's answer of many rows is taken whole though larger than one row's --max-body",
          "[batch][embeddings]") {
  embeddings_api api({"--dims", "1536"});  // some 20 KB a row: a batch of 100 is 2 MB
  const auto dir = scratch_dir("dibs-embed", "wide");
  const auto run = embed(api, "wide-out", write_texts(dir, 300));
  INFO(run.out.substr(0, 4000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=300 failed=0"));
  CHECK(api.stat("largest") > 50);
}

TEST_CASE("a --batch-item that finds nothing in the API's answer stops the run at the pre-flight after one call",
          "[batch][embeddings]") {
  embeddings_api api;
  const auto dir = scratch_dir("dibs-embed", "misspelled");
  const auto in = write_texts(dir, 200);
  const auto out = dir / "out.jsonl";
  const auto [rc, said] = run_dibs_within(
      std::chrono::seconds(60), {"enrich", "--store", "jsonl:" + in.string(), "--out", out.string(), "--source", "text",
                                 "--target", "emb", "--batch-url", api.embeddings_url(), "--batch-body", openai_body,
                                 "--batch-item", "/data/{i}/embeding", "--no-progress"});
  INFO(said);
  CHECK(rc != 0);
  CHECK_THAT(said, Catch::Contains("--batch-item '/data/{i}/embeding' finds no item's answer in it"));
  CHECK(api.stat("requests") == 1);
}

TEST_CASE("an API that takes 32 inputs a request (413 beyond, as text-embeddings-inference) is asked in batches it takes "
          "once it has refused a few",
          "[batch][embeddings]") {
  embeddings_api api({"--max-inputs", "32", "--max-inputs-status", "413"});
  const auto dir = scratch_dir("dibs-embed", "capped");
  const auto run = embed(api, "capped-out", write_texts(dir, 10000));
  INFO(run.out.substr(0, 4000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=10000 failed=0"));
  // The refusal's words name the cap ("batch size 100 > maximum allowed batch size 32"): the batch
  // is split there, 32 and 68; the 32 taken and the 68 refused in other words naming 32 again
  // ("batch size 68 > ..."), 32 is learned (not 25 by halving: 100, 50, 25), and the 68 go in
  // parts of 32.
  CHECK_THAT(run.out, Catch::Contains("takes 32: batches of 32 rows at most from now on"));
  // The batches already sent by then are refused twice each at most (the whole, the rest), those
  // formed after are not, and no row is refused again when asked again: at most 200 for the 100
  // batches of 100 (halving, each was refused up to three times: 300).
  CHECK(api.stat("refused") <= 200);
  check_vectors(run, 10000);
}

TEST_CASE("a body every request is refused for costs a few requests a batch, not one a row", "[batch][embeddings]") {
  embeddings_api api({"--require-member", "input_type"});  // Cohere's, left out of the body
  const auto dir = scratch_dir("dibs-embed", "unfit");
  // Retries due at once, so they come back together (a retry's backoff otherwise scatters them
  // over small batches, each refused whole on its own).
  const auto run = embed(api, "unfit-out", write_texts(dir, 300),
                         {"--no-preflight", "--max-attempts", "2", "--backoff-base", "1ms", "--backoff-max", "1ms"});
  INFO(run.out.substr(0, 4000));
  CHECK(run.rc == 1);
  CHECK_THAT(run.out, Catch::Contains("summary: completed=0 failed=300"));
  CHECK_THAT(run.out, Catch::Contains("missing required member 'input_type'"));
  // Each batch and its two halves, twice (some 30); halving each batch as far as it may go
  // (17 requests a batch of 100) would be some 100.
  CHECK(api.stat("refused") <= 50);
}

TEST_CASE("two refused rows in the two halves of a batch, refused in the same words, fail alone: no other row spends an attempt",
          "[batch][embeddings]") {
  // The API names the input's index within the request: the whole batch of 100 and both its
  // halves are refused "'$.input[3]' is invalid", which also reads as a refusal of the request
  // itself (a member of the body), no row's.
  embeddings_api api({"--reject", "POISON"});
  const auto dir = scratch_dir("dibs-embed", "two-poisons");
  const auto run = embed(api, "two-poisons-out", write_texts(dir, 100, {3, 53}, "a POISON text"),
                         {"--batch-size", "100", "--max-attempts", "1", "--batch-linger", "1s"});
  INFO(run.out.substr(0, 4000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=98 failed=2"));
  check_vectors(run, 98);
}

TEST_CASE("an API that refuses more than 20 inputs in words that never name a size is asked in batches it takes, no "
          "row failed",
          "[batch][embeddings]") {
  // A proxy's 413 "Request Entity Too Large", or OpenAI's 429 "Request too large ... on tokens per
  // min" (more tokens at once than the whole limit): each a size, the same words for every size.
  const auto [status, words] = GENERATE(table<std::string, std::string>(
      {{"413", "Request Entity Too Large"},
       {"429", "Request too large for text-embedding-3-small in organization org-x on tokens per min (TPM): Limit 400, "
               "Requested 1000. The input or output tokens must be reduced in order to run successfully."}}));
  INFO(status);
  embeddings_api api({"--max-inputs", "20", "--max-inputs-status", status, "--max-inputs-words", words});
  const auto dir = scratch_dir("dibs-embed", "fixed-words-cap" + status);
  const auto run = embed(api, "fixed-words-cap-out" + status, write_texts(dir, 300),
                         {"--batch-size", "100", "--max-attempts", "1", "--batch-linger", "500ms"});
  INFO(run.out.substr(0, 4000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=300 failed=0"));
  CHECK_THAT(run.out, Catch::Contains("rows at most from now on"));
  check_vectors(run, 300);
}

TEST_CASE("a call budget one call above the rows: a refused row in a batch fails alone and every other row is done",
          "[batch][embeddings][budget]") {
  // 100 rows, one refused, and one call to spare: the whole batch, then the halvings that find
  // the row (some 13 calls), each a further call of rows that made their first.
  // Each row's claim reserved a call; the batch's one call stood for them all.
  embeddings_api api({"--reject", "POISON"});
  const auto dir = scratch_dir("dibs-embed", "budget-halving");
  const auto run = embed(api, "budget-halving-out", write_texts(dir, 100, {40}, "a POISON text"),
                         {"--batch-size", "100", "--batch-linger", "1s", "--max-calls", "101", "--max-attempts", "2", "--no-preflight"});
  INFO(run.out.substr(0, 4000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=99 failed=1"));
  CHECK(api.stat("requests") + api.stat("refused") <= 101);
  check_vectors(run, 99);
}

TEST_CASE("rows abandoned at --max-processing while their batch is halved are not paid for twice", "[batch][embeddings]") {
  // The halvings that find the refused row take some 13 requests of 50 ms one after the other,
  // past the rows' 300 ms: a row abandoned then is asked again in another batch, and the halves
  // still to go send nothing for it (the API embeds, and bills, each text once).
  embeddings_api api({"--reject", "POISON", "--latency-ms", "50"});
  const auto dir = scratch_dir("dibs-embed", "abandoned");
  const auto run = embed(api, "abandoned-out", write_texts(dir, 100, {40}, "a POISON text"),
                         {"--batch-size", "100", "--batch-linger", "1s", "--max-processing", "300ms", "--no-preflight"});
  INFO(run.out.substr(0, 4000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=99 failed=1"));
  CHECK(api.stat("inputs") == 99);
  check_vectors(run, 99);
}

TEST_CASE("a batch sent in parts each quicker than --max-processing loses no row and no paid answer to it",
          "[batch][embeddings]") {
  // 96 rows to an API that takes 32 a request (413 beyond), 100 ms a request, 250 ms for each (a
  // margin for a loaded machine): the whole refused, then three parts of 32 one after the other
  // (400 ms in all). The leader sends the later parts though its own row was answered in the
  // first: timed from that one, it was cut during the third (and the answers paid for lost).
  embeddings_api api({"--max-inputs", "32", "--max-inputs-status", "413", "--latency-ms", "100", "--latency-per-input-ms", "0"});
  const auto dir = scratch_dir("dibs-embed", "parts-deadline");
  const auto run = embed(api, "parts-deadline-out", write_texts(dir, 96),
                         {"--batch-size", "96", "--batch-linger", "200ms", "--max-processing", "250ms", "--no-preflight"});
  INFO(run.out.substr(0, 4000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=96 failed=0"));
  CHECK(api.stat("inputs") == 96);  // each text embedded (and billed) once
  check_vectors(run, 96);
}
