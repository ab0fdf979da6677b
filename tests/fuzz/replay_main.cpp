// Replays a fuzz target's corpus without libFuzzer (any compiler): every file given, or every
// file in the directories given, through LLVMFuzzerTestOneInput. What a fuzzer once found stays
// in the corpus, so this is the regression test for it.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  std::size_t n = 0;
  auto run = [&](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    ++n;
  };
  for (int i = 1; i < argc; ++i) {
    if (std::filesystem::is_directory(argv[i]))
      for (const auto& e : std::filesystem::directory_iterator(argv[i])) run(e.path());
    else
      run(argv[i]);
  }
  std::printf("replayed %zu input(s)\n", n);
  return n > 0 ? 0 : 1;
}
