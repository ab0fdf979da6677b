#include "write_concern.hpp"

#include <dibs/setting_error.hpp>

#include "driver_handles.hpp"

#include <stdexcept>

namespace dibs::mongo {

namespace {
std::string describe(const mongoc_write_concern_t* wc) {
  std::string w;
  if (mongoc_write_concern_get_wmajority(wc)) w = "majority";
  else if (const char* tag = mongoc_write_concern_get_wtag(wc)) w = tag;
  else w = std::to_string(mongoc_write_concern_get_w(wc));
  std::string out = "write concern w=" + w;
  if (mongoc_write_concern_journal_is_set(wc)) out += mongoc_write_concern_get_journal(wc) ? ", journal" : ", no journal";
  if (const auto t = mongoc_write_concern_get_wtimeout_int64(wc); t > 0) out += ", wtimeout " + std::to_string(t) + " ms";
  return out;
}
}  // namespace

write_concern_choice apply_write_concern(mongoc_uri_t* uri, const std::string& redacted) {
  const mongoc_write_concern_t* given = mongoc_uri_get_write_concern(uri);
  if (mongoc_uri_has_option(uri, MONGOC_URI_W)) {
    if (mongoc_write_concern_get_w(given) == MONGOC_WRITE_CONCERN_W_UNACKNOWLEDGED)
      throw std::invalid_argument("bad " + setting_name("store") + " URI '" + redacted +
                                  "': w=0 (unacknowledged) can't tell whether a fenced write applied; use w=majority");
    return {describe(given) + " (from the URI)", mongoc_write_concern_get_wmajority(given)};
  }
  const write_concern_ptr wc(mongoc_write_concern_copy(given));
  mongoc_write_concern_set_wmajority(wc.get(), static_cast<int32_t>(mongoc_write_concern_get_wtimeout_int64(given)));
  if (!mongoc_uri_has_option(uri, MONGOC_URI_JOURNAL)) mongoc_write_concern_set_journal(wc.get(), true);
  mongoc_uri_set_write_concern(uri, wc.get());
  return {describe(wc.get()) + " (the URI names no w)", true};
}

}  // namespace dibs::mongo
