#include "preflight_verdicts.hpp"

#include "did_you_mean.hpp"

#include "adapters/http/processor/api_body.hpp"

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>

namespace dibs::cli {

namespace {
// The item's names as a list a user can read, the longest ones cut: a document may have hundreds.
std::string listed(const std::vector<std::string>& names) {
  constexpr std::size_t shown = 12;
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out.empty() ? "none" : out;
}

bool no_api_there(const http::response& r) {
  namespace error = boost::asio::error;
  return r.stage.rfind("resolve", 0) == 0 || r.ec == error::connection_refused || r.ec == error::host_not_found ||
         r.ec == error::host_not_found_try_again || r.ec == error::network_unreachable ||
         r.ec == error::host_unreachable || r.ec == boost::beast::error::timeout || r.ec == error::timed_out;
}
}  // namespace

std::string missing_field_refusal(const std::string& field, const pending_sample& sample, const std::string& flag) {
  if (sample.source.st != job_field::state::missing) return {};
  if (std::find(sample.fields.begin(), sample.fields.end(), field) != sample.fields.end()) return {};
  std::string line = flag + " reads the field '" + field + "', but pending item " + sample.id +
                     " has no such field (it has: " + listed(sample.fields) + ")";
  if (const auto near = nearest_name(field, sample.fields)) line += "; did you mean '" + *near + "'?";
  return line;
}

probe_verdict judge_probe(const http::response& r, int tries, int max_tries, probe_answer expected) {
  using kind = probe_verdict::kind;
  const auto again_or_refuse = [&](std::string why) {
    return probe_verdict{tries < max_tries ? kind::again : kind::refuse, std::move(why)};
  };
  if (r.ec) {
    // A body over --max-body is an answer all the same: the API is there.
    if (r.ec == boost::beast::http::error::body_limit) return {};
    if (r.ec == boost::beast::error::timeout) return {kind::refuse, r.stage + ": timed out"};
    if (no_api_there(r)) return {kind::refuse, r.describe()};
    return again_or_refuse(r.describe());
  }
  const int s = r.status;
  // The account can make no more calls (a quota or spend cap spent): no run can go, whatever else.
  if (const auto code = http::account_spent_code(s, r.body); !code.empty())
    return {kind::refuse, "the account can make no more calls (" + code + "): " + http::with_api_message(r.describe(), r.body),
            true};
  const auto body = http::kind_of_body(r.body);
  if (s >= 200 && s < 300) {
    const bool object = body == http::body_kind::json_object, array = body == http::body_kind::json_array;
    if (expected == probe_answer::object ? object : expected == probe_answer::array ? array : object || array) return {};
    const char* wanted = expected == probe_answer::object  ? "a JSON object"
                         : expected == probe_answer::array ? "a JSON array"
                                                           : "JSON";
    return {kind::refuse, r.describe() + " with " + http::describe_body(r.body) + " where the run expects " + wanted +
                              ": every item would be charged and fail (a wrong host, path or port?)"};
  }
  if (s >= 500)
    return {kind::go, http::with_api_message(r.describe(), r.body) +
                          " for this item; the run goes on: an item the API keeps failing fails alone, "
                          "and an API that is down is waited for without spending attempts"};
  if (s >= 300 && s < 400) {
    const auto to = r.header("Location");
    return {kind::refuse, r.describe() + (to.empty() ? "" : " to " + to) + ": redirects are not followed"};
  }
  if (s == 401 || s == 403) return {kind::refuse, r.describe() + ": the API refuses this client (a missing or wrong key?)"};
  if (s == 404 || s == 405 || s == 410) {
    if (body == http::body_kind::json_object || body == http::body_kind::json_array)
      return {kind::not_found, http::with_api_message(r.describe(), r.body)};
    return {kind::not_found_page, r.describe() + " with " + http::describe_body(r.body) + ", not the API's answer"};
  }
  if (s >= 400 && s < 500 && s != 408 && s != 429) return {kind::rejected, http::with_api_message(r.describe(), r.body)};
  return {};
}

bool not_found(const probe_verdict& v) {
  return v.what == probe_verdict::kind::not_found || v.what == probe_verdict::kind::not_found_page;
}

bool ask_another(const std::vector<probe_verdict>& probes) {
  return !probes.empty() && std::all_of(probes.begin(), probes.end(),
                                        [](const probe_verdict& v) { return not_found(v) || v.what == probe_verdict::kind::rejected; });
}

preflight_decision judge_probes(const std::vector<probe_verdict>& probes, const std::optional<probe_verdict>& done) {
  using kind = probe_verdict::kind;
  for (const auto& p : probes)
    if (p.what == kind::refuse || p.what == kind::again) return {true, p.why};
  if (done && (done->what == kind::refuse || done->what == kind::again)) return {true, done->why};
  for (const auto& p : probes)  // one answered: the path is right (the first warning, a 5xx, said)
    if (p.what == kind::go) {
      for (const auto& w : probes)
        if (w.what == kind::go && !w.why.empty()) return {false, w.why};
      return {};
    }
  if (probes.empty()) return {};
  const auto n = probes.size();
  const auto asked = n == 1 ? std::string("the pending item asked") : "each of the " + std::to_string(n) + " pending items asked";
  const bool rejected = std::any_of(probes.begin(), probes.end(), [](const probe_verdict& p) { return p.what == kind::rejected; });
  if (done && done->what == kind::go)
    return {false, probes.front().why + " for " + asked + ", and an item already done was answered: " +
                       (rejected ? "those are the items' own; the run goes on"
                                 : "the path is right, so those are items the API has nothing for; the run goes on")};
  if (rejected)
    return {true, probes.front().why + " for " + asked + ": the API rejects the request as the run builds it (its body, "
                                                         "headers or URL), and every item would be charged and fail"};
  if (done) return {true, probes.front().why + " for " + asked + " and for an item already done: almost certainly a wrong URL path"};
  return {true, probes.front().why + " for " + asked + " (no item is done yet to ask instead): almost certainly a wrong URL path"};
}

}  // namespace dibs::cli
