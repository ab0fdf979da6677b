// File mode's store: line numbers as ids, outcomes journaled before they are acknowledged, a
// resumed run skips what the journal holds, the output in the input's order, and the refusals
// that keep two runs (or a changed input) from mixing.
#include "support/jsonl_files.hpp"
#include "support/text.hpp"
#include <adapters/jsonl/json_members.hpp>
#include <dibs/stores/jsonl_store.hpp>

#include <catch2/catch.hpp>

#include <simdjson.h>

#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace dibs;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using files = dibs::test::jsonl_files;

namespace {
claim_request claim_of(std::size_t n) { return {n, "w1", 60s, 0ms}; }

// A run that answers the first open line with `answer` and stops, its journal kept.
void answer_first_line(const files& f, const std::string& answer) {
  jsonl::jsonl_store s(f.options());
  auto jobs = s.claim_blocking(claim_of(1));
  REQUIRE(jobs.size() == 1);
  REQUIRE(s.complete_blocking({completion{jobs[0].ref(), answer}}).applied == 1);
}
}  // namespace

TEST_CASE("json_pointer_of, and with_member / without_member change one member and keep every other byte", "[jsonl]") {
  CHECK(jsonl::json_pointer_of("a.b~c/d") == "/a/b~0c~1d");
  CHECK(jsonl::with_member(R"({"ip":"1.2.3.4","location":null,"n":[1, {"a":2}],"x":1.50})", "location", R"({"c":"DE"})") ==
        R"({"ip":"1.2.3.4","location":{"c":"DE"},"n":[1, {"a":2}],"x":1.50})");
  CHECK(jsonl::with_member(R"( { "ip" : "1" }  )", "loc", "2") == R"( { "ip" : "1","loc":2 }  )");
  CHECK(jsonl::with_member("{}", "loc", "2") == R"({"loc":2})");
  CHECK(jsonl::with_member(R"({"ip":"1","failed":{"old":1}})", "loc", "2") == R"({"ip":"1","failed":{"old":1},"loc":2})");
  CHECK(jsonl::with_member(R"({"ab":"}","ab":null})", "ab", "[]") == R"({"ab":[],"ab":[]})");  // the key unescaped
  CHECK(jsonl::without_member(R"({"a":1, "b" : {"x":"}"} ,"c":3})", "b") == R"({"a":1 ,"c":3})");
  CHECK(jsonl::without_member(R"({"b":1, "c":3})", "b") == R"({"c":3})");
  CHECK(jsonl::without_member(R"({ "b":1 })", "b") == R"({  })");
  CHECK(jsonl::without_member(R"({"a":1})", "b") == R"({"a":1})");
  CHECK(jsonl::member_text(R"({"a": [1, 2] ,"b":null})", "a") == "[1, 2]");
  CHECK_FALSE(jsonl::member_text(R"({"a":1})", "b"));
  CHECK(jsonl::with_member("[1,2]", "loc", "2").empty());
  CHECK(jsonl::with_member("{\"a\":1} junk", "loc", "2").empty());
  // Found by fuzzing: a malformed value nested in an array was copied into the output as it was.
  CHECK(jsonl::with_member(R"({"ip":"1","n":[1,{"a"?2}]})", "loc", "2").empty());
}

TEST_CASE("a JSON Lines file as a store: ids are line numbers, outcomes survive a restart, the output keeps the order", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n"      // 1
             "\n"                                     // 2: blank, not an item
             "{\"originatingIp\":\"1.1.1.1\",\"k\":7}\n"  // 3
             "not json\n"                             // 4: failed at once
             "{\"other\":true}\n"                     // 5: the field is missing (the processor decides)
             "{\"originatingIp\":\"9.9.9.9\"}\n");    // 6
  {
    jsonl::jsonl_store s(f.options());
    auto st = s.stats_blocking();
    CHECK(st.pending == 4);
    CHECK(st.failed == 1);
    auto jobs = s.claim_blocking(claim_of(10));
    REQUIRE(jobs.size() == 4);
    CHECK(jobs[0].id == "1");
    CHECK(jobs[1].id == "3");
    CHECK(jobs[1].fields.at(0).value == "1.1.1.1");
    CHECK(jobs[2].id == "5");
    CHECK(jobs[2].fields.at(0).st == job_field::state::missing);
    CHECK(jobs[3].id == "6");

    auto stale = jobs[0].ref();
    stale.token ^= 1;  // a lease that is not the holder's: nothing lands, nothing is journaled
    auto lost = s.complete_blocking({completion{stale, "{\"bad\":1}"}});
    CHECK(lost.applied == 0);
    CHECK(lost.lost == std::vector<std::string>{"1"});

    CHECK(s.complete_blocking({completion{jobs[0].ref(), "{\"c\":\"US\"}"}, completion{jobs[1].ref(), "{\"c\":\"AU\"}"}}).applied == 2);
    CHECK(s.fail_blocking({failure{jobs[2].ref(), "source field 'originatingIp' is missing", 0, 1}}).applied == 1);
    CHECK(s.release_blocking({release_item{jobs[3].ref(), 0ms, "shutdown", 0}}).applied == 1);
    CHECK(s.finish(false) != "");  // not drained: the journal stays
  }  // "killed" here: only the journal remains
  CHECK_FALSE(fs::exists(f.dir / "out.jsonl"));

  jsonl::jsonl_store again(f.options());
  CHECK(again.resumed() == 4);  // lines 1, 3, 4 and 5 are not done again
  auto st = again.stats_blocking();
  CHECK(st.pending == 1);
  CHECK(st.done == 2);
  CHECK(st.failed == 2);
  auto jobs = again.claim_blocking(claim_of(10));
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].id == "6");
  CHECK(again.complete_blocking({completion{jobs[0].ref(), "{\"c\":\"CH\"}"}}).applied == 1);
  CHECK_THAT(again.finish(true), Catch::StartsWith("wrote "));
  CHECK(f.read("out.jsonl") ==
        "{\"originatingIp\":\"8.8.8.8\",\"location\":{\"c\":\"US\"}}\n"
        "{\"originatingIp\":\"1.1.1.1\",\"k\":7,\"location\":{\"c\":\"AU\"}}\n"
        "{\"_dibs\":{\"line\":4,\"input\":\"not json\",\"failed\":{\"reason\":\"line 4 is not JSON (Problem while parsing an atom starting with the letter 'n')\",\"httpStatus\":0,\"attempts\":0}}}\n"
        "{\"other\":true,\"_dibs\":{\"failed\":{\"reason\":\"source field 'originatingIp' is missing\",\"httpStatus\":0,\"attempts\":1}}}\n"
        "{\"originatingIp\":\"9.9.9.9\",\"location\":{\"c\":\"CH\"}}\n");
  CHECK_FALSE(fs::exists(f.dir / "out.jsonl.journal"));
}

TEST_CASE("file mode refuses what would mix two runs: a held journal, a changed input, an existing output", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n");
  {
    jsonl::jsonl_store first(f.options());
    CHECK_THROWS_WITH(jsonl::jsonl_store(f.options()), Catch::Contains("another dibs run is using"));
    auto ro = f.options();
    ro.read_only = true;  // `dibs status` may look while a run goes on
    CHECK(jsonl::jsonl_store(ro).stats_blocking().pending == 1);
  }
  // A run that recorded nothing leaves no journal behind; one that did keeps it for the next.
  CHECK_FALSE(fs::exists(f.dir / "out.jsonl.journal"));
  {
    jsonl::jsonl_store first(f.options());
    auto jobs = first.claim_blocking(claim_of(1));
    REQUIRE(jobs.size() == 1);
    first.release_blocking({release_item{jobs[0].ref(), std::chrono::milliseconds(0), "shutdown"}});
    // (A release is no outcome: still nothing recorded.)
  }
  CHECK_FALSE(fs::exists(f.dir / "out.jsonl.journal"));
  {
    jsonl::jsonl_store first(f.options());
    auto jobs = first.claim_blocking(claim_of(1));
    REQUIRE(jobs.size() == 1);
    REQUIRE(first.fail_blocking({failure{jobs[0].ref(), "HTTP 500", 500, 1}}).applied == 1);
  }
  REQUIRE(fs::exists(f.dir / "out.jsonl.journal"));
  f.write_in("{\"originatingIp\":\"9.9.9.9\"}\n{\"originatingIp\":\"4.4.4.4\"}\n");  // the input changed
  CHECK_THROWS_WITH(jsonl::jsonl_store(f.options()), Catch::Contains("belongs to another version of the input") &&
                                                         Catch::Contains("no longer the 28 bytes it recorded"));
  fs::remove(f.dir / "out.jsonl.journal");
  {
    jsonl::jsonl_store s(f.options());
    auto jobs = s.claim_blocking(claim_of(10));
    REQUIRE(jobs.size() == 2);
    s.complete_blocking({completion{jobs[0].ref(), "1"}, completion{jobs[1].ref(), "2"}});
    s.finish(true);
  }
  // Said so that following it does not pay for the whole input again: retry, or ask every row again.
  CHECK_THROWS_WITH(jsonl::jsonl_store(f.options()), Catch::Contains("exists (a finished run?)") && Catch::Contains("nothing was done") &&
                                                         Catch::Contains("dibs retry") && Catch::Contains("paid, again"));
  auto ro = f.options();
  ro.read_only = true;
  auto st = jsonl::jsonl_store(ro).stats_blocking();  // status of a finished run, from its output
  CHECK(st.done == 2);
  CHECK(st.pending == 0);
  auto missing = f.options();
  missing.in = (f.dir / "nope.jsonl").string();
  CHECK_THROWS_WITH(jsonl::jsonl_store(missing), Catch::Contains("cannot read the input") && Catch::Contains("nope.jsonl"));
}

namespace {
// Everything this process writes to stderr while it lives (the store's warnings, log lines).
class captured_stderr {
 public:
  captured_stderr() : path_(fs::temp_directory_path() / ("dibs-stderr-" + std::to_string(::getpid()) + ".txt")) {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~captured_stderr() {
    restore();
    fs::remove(path_);
  }
  std::string text() {
    restore();
    std::ifstream in(path_, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
  }
  fs::path path_;
  int saved_ = -1;
};

using test::lines_of;

// A soft RLIMIT_FSIZE for this process while it lives, with SIGXFSZ ignored: a write past the
// limit then fails with EFBIG (after a partial write up to it), as a full disk fails with ENOSPC.
class file_size_limit {
 public:
  explicit file_size_limit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit l = saved_;
    l.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &l);
  }
  ~file_size_limit() { lift(); }
  void lift() {
    if (lifted_) return;
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
    lifted_ = true;
  }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
  bool lifted_ = false;
};
}  // namespace

TEST_CASE("a journal goes on with its input touched or copied without its time, and with no other bytes", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n{\"originatingIp\":\"1.1.1.1\"}\n");
  answer_first_line(f, "{\"paid\":1}");
  CHECK_THAT(f.read("out.jsonl.journal"), Catch::Contains("\"input_sha256\":\""));
  // The same bytes under a later time (touch, cp without -p, a checkout).
  const auto later = fs::last_write_time(f.dir / "in.jsonl") + std::chrono::seconds(5);
  fs::last_write_time(f.dir / "in.jsonl", later);
  {
    jsonl::jsonl_store s(f.options());
    CHECK(s.stats_blocking().done == 1);  // the paid answer kept: not asked again
    CHECK(s.stats_blocking().pending == 1);
    auto jobs = s.claim_blocking(claim_of(10));
    REQUIRE(jobs.size() == 1);
    s.complete_blocking({completion{jobs[0].ref(), "2"}});
    s.finish(true);
  }
  CHECK_THAT(f.read("out.jsonl"), Catch::StartsWith("{\"originatingIp\":\"8.8.8.8\",\"location\":{\"paid\":1}}\n"));
  // Lines appended: refused (the journal would go on under a header naming the old bytes, and
  // a later change of the new lines would put their answers on other lines).
  fs::remove(f.dir / "out.jsonl");
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n");
  answer_first_line(f, "1");
  std::ofstream(f.dir / "in.jsonl", std::ios::app) << "{\"originatingIp\":\"2.2.2.2\"}\n";
  CHECK_THROWS_WITH(jsonl::jsonl_store(f.options()), Catch::Contains("belongs to another version of the input"));
}

TEST_CASE("a pretty-printed answer is journaled as one line: a restart reads it, the output keeps its meaning", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n{\"originatingIp\":\"1.1.1.1\"}\n");
  const std::string pretty =
      "{\n  \"country\" : \"Deutsch\\nland\\t\\\"x\\\"\",\n\t\"emoji\": \"\\u00fc\\ud83d\\ude00 \\/\",\n"
      "  \"n\": 1.50e2,\r\n  \"list\": [ 1 ,\n 2 ],\n  \"empty\": { }\n}\n";
  {
    jsonl::jsonl_store s(f.options());
    auto jobs = s.claim_blocking(claim_of(1));
    REQUIRE(jobs.size() == 1);
    CHECK(s.complete_blocking({completion{jobs[0].ref(), pretty}}).applied == 1);
  }  // killed: the journal holds one outcome
  const auto journal = lines_of(f.read("out.jsonl.journal"));
  REQUIRE(journal.size() == 2);  // the header and one record, on one line
  CHECK(journal[1] ==
        "{\"line\":1,\"result\":{\"country\":\"Deutsch\\nland\\t\\\"x\\\"\",\"emoji\":\"\\u00fc\\ud83d\\ude00 \\/\","
        "\"n\":1.50e2,\"list\":[1,2],\"empty\":{}}}");

  jsonl::jsonl_store again(f.options());
  CHECK(again.resumed() == 1);
  auto jobs = again.claim_blocking(claim_of(10));
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].id == "2");
  CHECK(again.complete_blocking({completion{jobs[0].ref(), "{\n\"a\": \"\\r\\n\"\n}"}}).applied == 1);
  CHECK_THAT(again.finish(true), Catch::StartsWith("wrote "));
  const auto out = lines_of(f.read("out.jsonl"));
  REQUIRE(out.size() == 2);
  simdjson::dom::parser p;
  simdjson::dom::element first, second;
  REQUIRE_FALSE(p.parse(out[0]).get(first));
  std::string_view country, emoji;
  double n = 0;
  CHECK_FALSE(first["location"]["country"].get_string().get(country));
  CHECK(country == "Deutsch\nland\t\"x\"");
  CHECK_FALSE(first["location"]["emoji"].get_string().get(emoji));
  CHECK(emoji == "\xc3\xbc\xf0\x9f\x98\x80 /");
  CHECK_FALSE(first["location"]["n"].get_double().get(n));
  CHECK(n == 150.0);
  CHECK(out[1] == "{\"originatingIp\":\"1.1.1.1\",\"location\":{\"a\":\"\\r\\n\"}}");
}

TEST_CASE("an answer that is not JSON is refused by the store (the lease kept), never journaled", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n");
  jsonl::jsonl_store s(f.options());
  auto jobs = s.claim_blocking(claim_of(1));
  REQUIRE(jobs.size() == 1);
  const auto before = f.read("out.jsonl.journal");
  auto r = s.complete_blocking({completion{jobs[0].ref(), "{\"a\":\"raw\nnewline\"} trailing"}});
  CHECK(r.applied == 0);
  REQUIRE(r.refused.size() == 1);
  CHECK(r.refused[0].first == "1");
  CHECK(f.read("out.jsonl.journal") == before);
  CHECK(s.stats_blocking().leased_live == 1);
  CHECK(s.fail_blocking({failure{jobs[0].ref(), "the store refused the answer: " + r.refused[0].second, 0, 1}}).applied == 1);
}

TEST_CASE("a torn last record is dropped with a warning and its line done again", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n{\"originatingIp\":\"1.1.1.1\"}\n{\"originatingIp\":\"9.9.9.9\"}\n");
  {
    jsonl::jsonl_store s(f.options());
    auto jobs = s.claim_blocking(claim_of(3));
    REQUIRE(jobs.size() == 3);
    s.complete_blocking({completion{jobs[0].ref(), "{\"c\":1}"}, completion{jobs[1].ref(), "{\"c\":2}"}});
    s.complete_blocking({completion{jobs[2].ref(), "{\"c\":3}"}});
  }
  const auto journal = f.dir / "out.jsonl.journal";
  const auto whole = f.read("out.jsonl.journal");
  std::string expected;  // what the warning says of the record it drops
  SECTION("cut inside the last record (a write that did not finish)") {
    fs::resize_file(journal, whole.size() - 4);
    expected = "line 3 will be done again";
  }
  SECTION("a last line that is not a record (zeros a crash left)") {
    fs::resize_file(journal, whole.rfind('\n', whole.size() - 2) + 1);
    std::ofstream(journal, std::ios::app | std::ios::binary) << std::string(7, '\0') << '\n';
    expected = "dropped";
  }
  {
    captured_stderr err;
    jsonl::jsonl_store s(f.options());
    const auto said = err.text();
    CHECK_THAT(said, Catch::Contains("out.jsonl.journal") && Catch::Contains("torn") && Catch::Contains(expected));
    CHECK(s.resumed() == 2);
    auto jobs = s.claim_blocking(claim_of(10));
    REQUIRE(jobs.size() == 1);
    CHECK(jobs[0].id == "3");
    CHECK(s.complete_blocking({completion{jobs[0].ref(), "{\"c\":33}"}}).applied == 1);
    s.finish(true);
  }
  CHECK(f.read("out.jsonl") ==
        "{\"originatingIp\":\"8.8.8.8\",\"location\":{\"c\":1}}\n{\"originatingIp\":\"1.1.1.1\",\"location\":{\"c\":2}}\n"
        "{\"originatingIp\":\"9.9.9.9\",\"location\":{\"c\":33}}\n");
}

TEST_CASE("a damaged record before the last one is refused, not skipped", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n{\"originatingIp\":\"1.1.1.1\"}\n");
  {
    jsonl::jsonl_store s(f.options());
    auto jobs = s.claim_blocking(claim_of(2));
    s.complete_blocking({completion{jobs[0].ref(), "{\"c\":1}"}});
    s.complete_blocking({completion{jobs[1].ref(), "{\"c\":2}"}});
  }
  auto text = f.read("out.jsonl.journal");
  const auto second_record = text.find("{\"line\":1");
  REQUIRE(second_record != std::string::npos);
  text.replace(second_record, 9, "{\"lin?\":1");
  std::ofstream(f.dir / "out.jsonl.journal", std::ios::binary | std::ios::trunc) << text;
  CHECK_THROWS_WITH(jsonl::jsonl_store(f.options()), Catch::Contains("is damaged at byte"));
}

TEST_CASE("a journal write that fails changes nothing: the journal is cut back, the leases stay, the retry lands", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n{\"originatingIp\":\"1.1.1.1\"}\n{\"originatingIp\":\"9.9.9.9\"}\n");
  jsonl::jsonl_store s(f.options());
  auto jobs = s.claim_blocking(claim_of(3));
  REQUIRE(jobs.size() == 3);
  const auto journal = f.dir / "out.jsonl.journal";
  const auto before = f.read("out.jsonl.journal");
  const std::vector<completion> batch{completion{jobs[0].ref(), "{\"answer\":\"" + std::string(200, 'a') + "\"}"},
                                      completion{jobs[1].ref(), "{\"answer\":\"" + std::string(200, 'b') + "\"}"}};
  {
    file_size_limit limit(before.size() + 100);  // half of the first record fits
    CHECK_THROWS_WITH(s.complete_blocking(batch),
                      Catch::Contains("cannot write the journal " + journal.string() + ": File too large") &&
                          Catch::Contains("2 outcome(s) wait in memory"));
    CHECK_THROWS_WITH(s.fail_blocking({failure{jobs[2].ref(), std::string(300, 'x'), 500, 1}}),
                      Catch::Contains("cannot write the journal") && Catch::Contains("1 outcome(s) wait in memory"));
  }
  CHECK(f.read("out.jsonl.journal") == before);  // no torn record left behind
  auto st = s.stats_blocking();
  CHECK(st.leased_live == 3);  // memory did not move ahead of the journal
  CHECK(st.done == 0);
  CHECK(st.failed == 0);
  auto r = s.complete_blocking(batch);  // the engine's retry, once the disk has room
  CHECK(r.applied == 2);
  CHECK(r.lost.empty());
  CHECK(s.fail_blocking({failure{jobs[2].ref(), "gone", 500, 1}}).applied == 1);
  CHECK_THAT(s.finish(true), Catch::Contains("3 lines (2 done, 1 failed)"));
  const auto out = lines_of(f.read("out.jsonl"));
  REQUIRE(out.size() == 3);
  CHECK_THAT(out[0], Catch::Contains(std::string(200, 'a')));
  CHECK_THAT(out[1], Catch::Contains(std::string(200, 'b')));
  CHECK_THAT(out[2], Catch::Contains("\"reason\":\"gone\""));
}

TEST_CASE("file mode refuses a symlink planted at the journal or at OUT.tmp, the journal is 0600 and OUT follows the umask", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n");
  const auto victim = f.dir / "victim.txt";
  std::ofstream(victim, std::ios::binary) << "precious\n";
  const auto journal = f.dir / "out.jsonl.journal", tmp = f.dir / "out.jsonl.tmp";

  fs::create_symlink(victim, journal);
  CHECK_THROWS_WITH(jsonl::jsonl_store(f.options()),
                    Catch::Contains(journal.string()) && Catch::Contains("symbolic link") && !Catch::Contains("precious"));
  auto ro = f.options();
  ro.read_only = true;
  CHECK_THROWS_WITH(jsonl::jsonl_store(ro), Catch::Contains("symbolic link"));
  CHECK(f.read("victim.txt") == "precious\n");
  fs::remove(journal);

  const mode_t old_umask = ::umask(027);
  {
    jsonl::jsonl_store s(f.options());
    struct stat st {};
    REQUIRE(::stat(journal.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    auto jobs = s.claim_blocking(claim_of(1));
    REQUIRE(jobs.size() == 1);
    s.complete_blocking({completion{jobs[0].ref(), "{\"c\":1}"}});

    fs::create_symlink(victim, tmp);
    CHECK_THROWS_WITH(s.finish(true), Catch::Contains(tmp.string()) && Catch::Contains("symbolic link"));
    CHECK(f.read("victim.txt") == "precious\n");
    CHECK(fs::is_symlink(tmp));
    CHECK(fs::exists(journal));  // nothing lost: the journal still holds the run
    fs::remove(tmp);

    std::ofstream(tmp, std::ios::binary) << "half of an output a killed run left\n";  // ours, stale
    CHECK_THAT(s.finish(true), Catch::StartsWith("wrote "));
    REQUIRE(::stat((f.dir / "out.jsonl").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);
  }
  ::umask(old_umask);
  CHECK(f.read("out.jsonl") == "{\"originatingIp\":\"8.8.8.8\",\"location\":{\"c\":1}}\n");
  CHECK_FALSE(fs::exists(tmp));
}

TEST_CASE("an output the disk can't take leaves the journal whole and no OUT.tmp, the next finish writes it", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n{\"originatingIp\":\"1.1.1.1\"}\n");
  jsonl::jsonl_store s(f.options());
  auto jobs = s.claim_blocking(claim_of(2));
  REQUIRE(jobs.size() == 2);
  const std::string big = "{\"answer\":\"" + std::string(3000, 'z') + "\"}";
  s.complete_blocking({completion{jobs[0].ref(), big}, completion{jobs[1].ref(), big}});
  const auto journal = f.read("out.jsonl.journal");
  {
    file_size_limit limit(4000);  // the journal fits (it is written); OUT.tmp does not
    CHECK_THROWS_WITH(s.finish(true), Catch::Contains("out.jsonl.tmp") && Catch::Contains("File too large"));
  }
  CHECK_FALSE(fs::exists(f.dir / "out.jsonl.tmp"));
  CHECK_FALSE(fs::exists(f.dir / "out.jsonl"));
  CHECK(f.read("out.jsonl.journal") == journal);
  CHECK_THAT(s.finish(true), Catch::Contains("2 lines (2 done, 0 failed)"));
  CHECK(lines_of(f.read("out.jsonl")).size() == 2);
}
