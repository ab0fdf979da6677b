// Text with `{field}` placeholders that becomes a request's header value or body, each field's
// value written as the text around it needs it:
//   - header: the value as it is; a value holding CR, LF or another control byte (but a tab)
//     fails the item with the reason, so a field can never add a header or end the head early;
//   - json:   a string becomes a JSON string (quotes, backslashes and control bytes escaped,
//     non-ASCII kept as UTF-8), a number, boolean, object or array is copied as the JSON the
//     store holds it as; inside a JSON string of the template ("ip {ip}"), the text is escaped
//     into that string;
//   - form:   the value percent-encoded (application/x-www-form-urlencoded, RFC 3986 unreserved
//     bytes kept).
// A placeholder is `{name}` with a name of letters, digits, '_', '.' and '-' (not starting with
// '.' or '-'); any other brace is text, so a JSON object's own braces need no escaping. A
// missing field (a SQL NULL, a document without it), or one a store gives in no form the text can
// take, fails the item with its reason; `{name?}` writes a missing one as JSON null where a value
// stands in a JSON body, and as nothing in a string, a header or a form. `{env:NAME}` and `{file:PATH}` are secrets, filled once when the template is parsed by
// whoever passes a `secret_source` (the program: from the environment, from a file only its
// owner can read); the template's own text (which names them, never holds them) is what a
// message may show.
#pragma once

#include <dibs/job.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::http {

// Fills a secret placeholder: `kind` is "env" or "file", `name` what follows the colon. Throws
// std::invalid_argument with the reason when it can't.
using secret_source = std::function<std::string(std::string_view kind, std::string_view name)>;

class field_template {
 public:
  enum class format { header, json, form };

  field_template() = default;
  // Throws std::invalid_argument naming `setting` (never a secret's value): a control byte in the
  // text or a secret of a header, a json template that is no JSON once its fields are filled, a
  // secret placeholder without a `secrets` source.
  static field_template parse(const std::string& text, format f, const std::string& setting,
                              const secret_source& secrets = {});

  format kind() const { return format_; }
  // The template as given: placeholders and secrets' names, never a secret's value from
  // {env:...} or {file:...} (a header's text may still hold a key written into it: never shown).
  const std::string& text() const { return text_; }
  bool empty() const { return pieces_.empty(); }
  // The fields it reads, in order of first use.
  const std::vector<std::string>& fields() const { return field_names_; }
  bool has_secret() const { return has_secret_; }

  struct expansion {
    std::string text;
    std::string error;  // empty on success: which field, and why it can't be written here
  };
  // `max_value_bytes`: the longest string a field may bring (0: no limit).
  expansion expand(const job& j, std::size_t max_value_bytes = 0) const;
  // The same, every secret written as its placeholder ({env:NAME}): what a dry run may print.
  expansion shown(const job& j, std::size_t max_value_bytes = 0) const;

 private:
  struct piece {
    enum class what { text, field, secret } is = what::text;
    std::string text;       // literal text, the field's name, or the secret's value
    std::string spelling;   // a secret's placeholder as written
    bool in_string = false;  // json: the placeholder stands inside a JSON string of the template
    bool optional = false;   // {name?}: a missing field is no failure
  };
  expansion fill(const job& j, std::size_t max_value_bytes, bool show) const;
  bool write_value(std::string& out, const piece& p, const job_field& f, std::string& error) const;
  void write_secret(std::string& out, const piece& p, std::string_view value) const;

  std::string text_;
  format format_ = format::json;
  std::vector<piece> pieces_;
  std::vector<std::string> field_names_;
  bool has_secret_ = false;
};

}  // namespace dibs::http
