#include <dibs/field_mapping.hpp>

#include <dibs/setting_error.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

namespace dibs {

namespace {
std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The types dibs init writes, whole (MySQL/MariaDB's and PostgreSQL's, and their aliases), as
// lower-case words without their size: nothing else may follow a type into a statement (no
// NOT NULL, PRIMARY KEY, REFERENCES, GENERATED, DEFAULT).
constexpr std::array<const char*, 49> column_types{
    "varchar", "char", "character", "character varying", "text", "tinytext", "mediumtext", "longtext", "int", "integer",
    "smallint", "bigint", "tinyint", "mediumint", "int2", "int4", "int8", "int unsigned", "integer unsigned",
    "bigint unsigned", "smallint unsigned", "tinyint unsigned", "mediumint unsigned", "double", "double precision",
    "float", "float4", "float8", "real", "numeric", "decimal", "boolean", "bool", "json", "jsonb", "date", "datetime",
    "timestamp", "timestamptz", "timestamp with time zone", "timestamp without time zone", "time", "timetz",
    "time with time zone", "time without time zone", "uuid", "year", "citext", "inet"};
}  // namespace

bool is_column_type(const std::string& text) {
  // Words of letters (and digits after the first letter: int4, float8), with at most one "(n)" or
  // "(p,s)" among them (VARCHAR(64), NUMERIC(10, 2), timestamp(3) with time zone); the words,
  // without the size, must spell a type of column_types whole.
  std::string words;
  bool sized = false;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == ' ') {
      ++i;
      continue;
    }
    if (c == '(') {
      if (sized || words.empty()) return false;
      sized = true;
      ++i;
      int numbers = 0;
      while (true) {
        while (i < text.size() && text[i] == ' ') ++i;
        std::size_t digits = 0;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
        if (digits == 0 || digits > 5) return false;
        ++numbers;
        while (i < text.size() && text[i] == ' ') ++i;
        if (i < text.size() && text[i] == ',' && numbers == 1) {
          ++i;
          continue;
        }
        if (i >= text.size() || text[i] != ')') return false;
        ++i;
        break;
      }
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c))) return false;
    std::string word;
    while (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]))) word += text[i++];
    words += (words.empty() ? "" : " ") + lower(word);
  }
  return std::find_if(column_types.begin(), column_types.end(), [&](const char* t) { return words == t; }) != column_types.end();
}

std::vector<mapping_part> split_mapping(const std::string& text, const std::string& setting, bool with_types) {
  // A comma inside a type's parentheses (NUMERIC(10,2)) is the type's: parentheses count only
  // after a ':' of the part (a pointer's own '(' is a member's name).
  std::vector<std::string> pieces(1);
  int depth = 0;
  bool after_colon = false;
  for (const char c : text) {
    if (c == ':') after_colon = true;
    if (with_types && after_colon && c == '(') ++depth;
    if (with_types && after_colon && c == ')' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      pieces.emplace_back();
      after_colon = false;
    } else {
      pieces.back() += c;
    }
  }
  std::vector<mapping_part> out;
  for (auto& piece : pieces) {
    if (piece.empty()) continue;
    const auto eq = piece.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument(setting + " '" + piece + "': expected NAME=/POINTER, like country=/country");
    mapping_part part{piece.substr(0, eq), piece.substr(eq + 1), ""};
    const auto colon = part.pointer.rfind(':');
    if (with_types && colon != std::string::npos && is_column_type(part.pointer.substr(colon + 1))) {
      part.column_type = part.pointer.substr(colon + 1);
      part.pointer.resize(colon);
    }
    out.push_back(std::move(part));
  }
  return out;
}

std::string recorded_mapping(const std::string& text) {
  // In the order of the names: the same mapping given in another order is the same record.
  auto parts = split_mapping(text, setting_name("map"));
  std::sort(parts.begin(), parts.end(), [](const mapping_part& a, const mapping_part& b) { return a.name < b.name; });
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : ",") + part.name + "=" + part.pointer;
  return out;
}

void check_mapped_names(const std::vector<std::string>& mapped, const mapped_names_rules& rules) {
  const auto same = [&](const std::string& a, const std::string& b) { return rules.caseless ? lower(a) == lower(b) : a == b; };
  // `m` is `field`, or the field a dotted path `field` lies inside (MongoDB's source "geo.ip").
  const auto holds = [&](const std::string& m, const std::string& field) {
    return same(m, field) || (field.size() > m.size() && field[m.size()] == '.' && same(m, field.substr(0, m.size())));
  };
  for (std::size_t i = 0; i < mapped.size(); ++i) {
    const auto& m = mapped[i];
    const std::string where = setting_name("map") + " " + m + ": ";
    // A name goes into statements and paths as it is: letters, digits and '_' only.
    const bool plain = !m.empty() && m.size() <= 63 && !std::isdigit(static_cast<unsigned char>(m.front())) &&
                       std::all_of(m.begin(), m.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!plain) throw std::invalid_argument(where + "a mapped name is letters, digits and '_' (at most 63: PostgreSQL's longest)");
    if (!rules.key.empty() && holds(m, rules.key))
      throw std::invalid_argument(where + "'" + m + "' is the key items are addressed by (the table's key, a document's _id): "
                                  "map to another name");
    if (holds(m, rules.source)) throw std::invalid_argument(where + "'" + m + "' is the " + setting_name("source") + " field: map to another");
    if (holds(m, rules.target))
      throw std::invalid_argument(where + "'" + m + "' is the " + setting_name("target") + " field, which holds the whole answer: map to another");
    const bool own = std::any_of(rules.own.begin(), rules.own.end(), [&](const std::string& o) { return holds(m, o); }) ||
                     (!rules.own_prefix.empty() && m.size() >= rules.own_prefix.size() &&
                      same(m.substr(0, rules.own_prefix.size()), rules.own_prefix));
    if (own) throw std::invalid_argument(where + "'" + m + "' is a name dibs keeps its own data under: map to another");
    for (std::size_t j = 0; j < i; ++j)
      if (same(m, mapped[j])) throw std::invalid_argument(where + "'" + m + "' is mapped twice");
  }
}

mapping_in_effect resolve_mapping(const std::string& text, const std::vector<std::string>& names, const settings_use& use,
                                  const settings_record& record, const std::string& where) {
  mapping_in_effect out;
  const auto given = recorded_mapping(text);
  const auto value = resolve_setting("map", given, use, record, where);
  if (value == given && !text.empty()) {
    for (auto& part : split_mapping(text, setting_name("map"))) {
      out.names.push_back(std::move(part.name));
      out.types.push_back(std::move(part.column_type));
    }
  } else if (!value.empty()) {
    // A record holds no types: a pointer ending in ":text" is the member's name.
    for (auto& part : split_mapping(value, setting_name("map"), false)) out.names.push_back(std::move(part.name));
  } else {
    out.names = names;
  }
  out.types.resize(out.names.size());
  out.recorded = value;
  return out;
}

}  // namespace dibs
