// `dibs enrich`'s pre-flight in file mode (--store jsonl:IN --out OUT): a closed API port and a
// mistyped {field} are refused before any line is claimed: exit 2, one line, no OUT, no outcome
// in the journal; the same files then run to the end with the right flags.
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace dibs;
namespace fs = std::filesystem;

namespace {
struct input_file {
  input_file() : dir(fs::temp_directory_path() / ("dibs-preflight-" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream f(in);
    f << "{\"originatingIp\":\"8.8.8.8\",\"note\":\"a\"}\n{\"originatingIp\":\"1.1.1.1\",\"note\":\"b\"}\n";
  }
  ~input_file() { fs::remove_all(dir); }
  // Lines with an outcome in the journal (its first line is the header).
  std::size_t journaled() const {
    std::ifstream j(out + ".journal");
    std::size_t n = 0;
    for (std::string line; std::getline(j, line);) ++n;
    return n > 0 ? n - 1 : 0;
  }
  std::pair<int, std::string> enrich(std::vector<std::string> more) const {
    std::vector<std::string> argv{dibs::test::dibs_binary(), "enrich", "--store", "jsonl:" + in, "--out", out, "--no-progress"};
    argv.insert(argv.end(), more.begin(), more.end());
    test::child_process p(argv, true);
    std::string text;
    const int rc = p.finish(text);
    return {rc, text};
  }
  fs::path dir;
  std::string in = (dir / "in.jsonl").string();
  std::string out = (dir / "out.jsonl").string();
};
}  // namespace

TEST_CASE("file mode: a closed API port or a mistyped field is refused before a line is claimed", "[jsonl][preflight]") {
  input_file f;
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();

  const auto [rc, text] = f.enrich({"--url", "http://127.0.0.1:1/json/{originatingIp}"});
  INFO(text);
  CHECK(rc == 2);
  CHECK_THAT(text, Catch::Contains("the API can't be used: --url http://127.0.0.1:1/json/8.8.8.8: connect: Connection refused"));
  CHECK_FALSE(fs::exists(f.out));
  CHECK(f.journaled() == 0);

  const auto [rc2, text2] = f.enrich({"--url", api.base_url() + "/json/{originatingIP}"});
  INFO(text2);
  CHECK(rc2 == 2);
  CHECK_THAT(text2, Catch::Contains("--url reads the field 'originatingIP', but pending item 1 has no such field "
                                    "(it has: originatingIp, note); did you mean 'originatingIp'?"));
  CHECK(api.requests() == 0);
  CHECK_FALSE(fs::exists(f.out));
  CHECK(f.journaled() == 0);

  const auto [rc3, text3] = f.enrich({"--url", api.base_url() + "/json/"});
  CHECK(rc3 == 2);
  CHECK_THAT(text3, Catch::Contains("names no {field}"));

  // The same files, the right URL: both lines done, none failed, each asked once (the pre-flight's
  // answer is its line's).
  const auto [rc4, text4] = f.enrich({"--url", api.base_url() + "/json/{originatingIp}"});
  INFO(text4);
  CHECK(rc4 == 0);
  CHECK_THAT(text4, Catch::Contains("2 lines (2 done, 0 failed)"));
  CHECK(api.requests() == 2);
}
