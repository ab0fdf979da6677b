#include "batch_halving.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace dibs::http {

namespace {
bool letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// What a batch holds, in the words APIs use for it.
bool row_word(std::string_view w) {
  constexpr std::array<std::string_view, 12> rows{"batch", "input", "inputs", "text", "texts", "item", "items",
                                                  "queries", "query", "documents", "requests", "strings"};
  return std::find(rows.begin(), rows.end(), w) != rows.end();
}

// The word of letters after `from` (past spaces): "" when none stands there.
std::string_view word_after(std::string_view text, std::size_t from) {
  while (from < text.size() && text[from] == ' ') ++from;
  std::size_t end = from;
  while (end < text.size() && letter(text[end])) ++end;
  return text.substr(from, end - from);
}

// A rows' word among `text`'s words (a word joined by '-' to another, as in "text-embedding-004",
// is a name's part, not one).
bool names_rows(std::string_view text) {
  for (std::size_t w = 0; w < text.size();) {
    if (!letter(text[w])) {
      ++w;
      continue;
    }
    std::size_t e = w;
    while (e < text.size() && letter(text[e])) ++e;
    const bool joined = (w > 0 && text[w - 1] == '-') || (e < text.size() && text[e] == '-');
    if (!joined && row_word(text.substr(w, e - w))) return true;
    w = e;
  }
  return false;
}
}  // namespace

std::optional<std::size_t> rows_cap_in_words(std::string_view why, std::size_t rows) {
  std::string text(why);
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  constexpr std::array<std::string_view, 4> cap_words{"max", "limit", "at most", "up to"};
  constexpr std::array<std::string_view, 5> joining{"", "is", "and", "but", "got"};
  constexpr std::size_t before = 40;  // how far back the cap's word and the rows' word may stand
  for (std::size_t i = 0; i < text.size(); ++i) {
    // A whole number standing alone: not a part of 1,048,576, 2.5, voyage-3, 413: or 10m.
    if (!digit(text[i]) || (i > 0 && text[i - 1] != ' ' && text[i - 1] != '(' && text[i - 1] != '"')) continue;
    std::size_t end = i, n = 0;
    while (end < text.size() && digit(text[end]) && n < 1'000'000'000) n = n * 10 + static_cast<std::size_t>(text[end++] - '0');
    const auto at = i;
    i = end;
    const bool alone = end == text.size() || text[end] == ' ' || text[end] == ')' || text[end] == '"' ||
                       ((text[end] == '.' || text[end] == ',' || text[end] == ';') && (end + 1 == text.size() || text[end + 1] == ' '));
    if (!alone || n == 0 || n >= rows) continue;
    const auto ahead = std::string_view(text).substr(at > before ? at - before : 0, at > before ? before : at);
    if (std::none_of(cap_words.begin(), cap_words.end(), [&](auto w) { return ahead.find(w) != std::string_view::npos; })) continue;
    // Rows named next to it: "96 texts", or "batch size 32", "inputs is 2048", "queries (at most 100)".
    const auto next = word_after(text, end);
    const bool rows_after = row_word(next);
    const bool rows_before = std::find(joining.begin(), joining.end(), next) != joining.end() && names_rows(ahead);
    if (rows_after || rows_before) return n;
  }
  return std::nullopt;
}

}  // namespace dibs::http
