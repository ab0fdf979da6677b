// URL templates: parsing never crashes (it throws std::invalid_argument with a reason), and an
// expansion never lets a value put a byte outside printable ASCII, a '/', '?' or '#' into the
// target: values are percent-encoded, so they can't leave their segment; and no expanded path
// has a "." or ".." segment, which a normalising proxy would resolve to another path.
#include <dibs/http/url_template.hpp>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const auto cut = input.find('\n');  // template \n value
  const std::string text = input.substr(0, cut);
  const std::string value = cut == std::string::npos ? "" : input.substr(cut + 1);
  dibs::http::url_template t;
  try {
    t = dibs::http::url_template::parse(text);
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).empty()) std::abort();
    return 0;
  }
  dibs::job j;
  for (const auto& name : t.fields()) j.fields.push_back({name, dibs::job_field::state::string, value, {}});
  const auto e = t.expand(j);
  if (!e.error.empty()) return 0;  // an empty value
  const auto encoded = dibs::http::percent_encode(value);
  for (char c : encoded)
    if (c == '/' || c == '?' || c == '#' || c <= 0x20 || c >= 0x7f) std::abort();
  for (unsigned char c : e.target)
    if (c <= 0x20 || c >= 0x7f) std::abort();
  const std::string path = e.target.substr(0, e.target.find('?'));
  std::size_t start = 0;
  for (;;) {
    const auto slash = path.find('/', start);
    const std::string segment = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (segment == "." || segment == "..") std::abort();
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return 0;
}
