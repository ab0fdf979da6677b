#include <dibs/run_summary.hpp>

#include <cstdio>

namespace dibs {

namespace {
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
}  // namespace

const char* to_string(end_reason e) {
  switch (e) {
    case end_reason::running: return "running";
    case end_reason::drained: return "drained";
    case end_reason::stopped: return "stopped";
    case end_reason::denied: return "denied";
    case end_reason::failed: return "failed";
  }
  return "running";
}

std::string run_summary::line() const {
  return "summary: completed=" + std::to_string(completed) + " failed=" + std::to_string(failed) +
         " lost_leases=" + std::to_string(lost_leases) + " released=" + std::to_string(released) +
         " elapsed_s=" + fixed(elapsed_s, 3) + " docs_per_s=" + fixed(docs_per_s(), 1) +
         (no_data ? " no_data=" + std::to_string(no_data) : std::string()) +
         (reuses_answers() ? " api_calls=" + std::to_string(answer_calls) + " reused=" + std::to_string(answers_reused) +
                                 " joined=" + std::to_string(answers_joined) + " hit_ratio=" + fixed(answer_hit_ratio(), 3) +
                                 (answers_from_store ? " from_store=" + std::to_string(answers_from_store) : std::string())
                           : std::string());
}

std::string run_summary::json() const {
  return "{\"completed\":" + std::to_string(completed) + ",\"failed\":" + std::to_string(failed) +
         ",\"no_data\":" + std::to_string(no_data) + ",\"lost_leases\":" + std::to_string(lost_leases) + ",\"released\":" + std::to_string(released) +
         ",\"retries\":" + std::to_string(retries) + ",\"renewals\":" + std::to_string(renewals) +
         ",\"elapsed_s\":" + fixed(elapsed_s, 3) + ",\"docs_per_s\":" + fixed(docs_per_s(), 1) +
         (reuses_answers() ? ",\"api_calls\":" + std::to_string(answer_calls) + ",\"answers_reused\":" +
                                 std::to_string(answers_reused) + ",\"answers_joined\":" + std::to_string(answers_joined) +
                                 ",\"answer_hit_ratio\":" + fixed(answer_hit_ratio(), 3) +
                                 ",\"answers_from_store\":" + std::to_string(answers_from_store)
                           : std::string()) +
         extra_json + "}";
}

}  // namespace dibs
