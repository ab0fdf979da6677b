#include "pg_answers.hpp"

#include "engine/src/server_number.hpp"

namespace dibs::pg {

namespace answers_sql {
std::string create_table() {
  return "CREATE TABLE IF NOT EXISTS dibs_answers (digest text PRIMARY KEY, request text NOT NULL, answer text NOT NULL, "
         "stored_at timestamptz NOT NULL)";
}
statement find(const answer_key& k, std::chrono::milliseconds ttl) {
  return {"SELECT answer, (extract(epoch from clock_timestamp() - stored_at) * 1000)::bigint FROM dibs_answers "
          "WHERE digest = $1 AND stored_at > clock_timestamp() - $2::bigint * "
          "interval '1 millisecond'",
          {k.digest, std::to_string(ttl.count())}};
}
statement keep(const std::vector<std::pair<answer_key, std::string>>& answers) {
  statement st;
  std::string values;
  for (const auto& [k, answer] : answers) {
    const auto n = st.params.size();
    values += (values.empty() ? "($" : ", ($") + std::to_string(n + 1) + ", $" + std::to_string(n + 2) + ", $" +
              std::to_string(n + 3) + ", clock_timestamp())";
    st.params.insert(st.params.end(), {k.digest, k.request, answer});
  }
  st.sql = "INSERT INTO dibs_answers (digest, request, answer, stored_at) VALUES " + values +
           " ON CONFLICT (digest) DO UPDATE SET request = EXCLUDED.request, answer = EXCLUDED.answer, "
           "stored_at = EXCLUDED.stored_at";
  return st;
}
}  // namespace answers_sql

pg_answers::pg_answers(std::shared_ptr<pg_store> store) : finds_(store), keeps_(std::move(store)) {
  keeps_.create_table(answers_sql::create_table());
}

std::optional<kept_answer> pg_answers::find(const answer_key& k, std::chrono::milliseconds ttl) {
  return finds_.with([&](pg_connection& c) -> std::optional<kept_answer> {
    const auto r = c.exec_blocking(answers_sql::find(k, ttl));
    if (r.rows.empty() || r.rows[0].size() < 2 || !r.rows[0][0]) return std::nullopt;
    return kept_answer{*r.rows[0][0], std::chrono::milliseconds(server_number<std::int64_t>(r.rows[0][1], "PostgreSQL"))};
  });
}

void pg_answers::keep(const std::vector<std::pair<answer_key, std::string>>& answers) {
  if (answers.empty()) return;
  keeps_.with([&](pg_connection& c) { return c.exec_blocking(answers_sql::keep(answers)).affected; });
}

std::shared_ptr<answer_store> pg_store::open_answers() { return std::make_shared<pg_answers>(shared_from_this()); }

}  // namespace dibs::pg
