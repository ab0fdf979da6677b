// What the two halves' answers to a batch the API refused whole mean (pure; tested in
// tests/unit/test_batch_template.cpp). A refused batch is halved and each half sent on its own:
//   - both halves taken: the batch was too large for the API (text-embeddings-inference takes 32
//     inputs, Cohere 96), not any row's doing: batches of a half's rows from then on;
//   - both refused in the very words the whole was (400, 422): perhaps the request's (a field of
//     the body, the model), no row's; perhaps two rows, one a half, whose refusals read alike (an
//     index counted within the request: "'$.input[3]' is invalid"). The caller halves one half
//     once more: refused alike again, the request's: every row is asked again in another batch (an
//     attempt spent), rather than each batch halved down to single rows; else rows', looked into;
//   - a 413 (or OpenAI's 429 "Request too large", more tokens than its whole limit) is never the
//     request's: a size cap in words of its own ("Request Entity Too Large"), halved on until a
//     part is taken, whose size is learned;
//   - else the refused half is halved again, until a row it refuses is alone and fails.
// A refusal whose words name the most rows a request takes ("batch size 40 > maximum allowed
// batch size 32": text-embeddings-inference; "a maximum of 96 texts": Cohere) is split there
// instead of in halves: a part of that many and the rest (both taken: that size is learned).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace dibs::http {

struct half_answer {
  bool refused = false;  // answered 400, 413 or 422 as a whole
  std::string why;       // then: the API's words
  bool taken = false;    // answered 2xx (not a timeout, a 5xx, a budget that sent nothing)
};

enum class halving_verdict { look_inside, too_large, not_a_rows_doing };

inline halving_verdict judge_halves(int whole_status, const std::string& whole, const half_answer& a, const half_answer& b) {
  if (a.taken && b.taken) return halving_verdict::too_large;
  if (whole_status != 413 && whole_status != 429 && a.refused && b.refused && a.why == whole && b.why == whole) return halving_verdict::not_a_rows_doing;
  return halving_verdict::look_inside;
}

// The most rows a request takes, as a refusal of a batch of `rows` names it: a number below
// `rows` that a "max"/"maximum"/"limit"/"at most" stands shortly before, and that counts no tokens,
// characters or bytes; nullopt when the words name none.
std::optional<std::size_t> rows_cap_in_words(std::string_view why, std::size_t rows);

}  // namespace dibs::http
