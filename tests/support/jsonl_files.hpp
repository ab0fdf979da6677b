// A test's own JSON Lines files: a fresh folder with in.jsonl (and the run's out.jsonl and
// journal), removed with it.
#pragma once

#include <dibs/stores/jsonl_store.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace dibs::test {

namespace fs = std::filesystem;

struct jsonl_files {
  jsonl_files() : dir(fs::temp_directory_path() / ("dibs-jsonl-" + std::to_string(::getpid()) + "-" + std::to_string(counter++))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~jsonl_files() { fs::remove_all(dir); }
  jsonl::jsonl_options options() const {
    jsonl::jsonl_options o;
    o.in = (dir / "in.jsonl").string();
    o.out = (dir / "out.jsonl").string();
    return o;
  }
  void write_in(const std::string& text) const { std::ofstream(dir / "in.jsonl", std::ios::binary) << text; }
  std::string read(const std::string& name) const {
    std::ifstream in(dir / name, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir;
  static inline int counter = 0;
};

}  // namespace dibs::test
