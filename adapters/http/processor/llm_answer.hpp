// What an LLM's 200 answer means when it is no answer to use, in each provider's words, and the
// JSON an LLM writes inside a string (chat content), read without a network
// (tests/unit/test_llm_answer.cpp):
//   - cut at max_tokens: OpenAI's finish_reason "length", Anthropic's stop_reason "max_tokens",
//     Gemini's finishReason "MAX_TOKENS", the Responses API's status "incomplete" (its JSON or
//     prose is cut: written, it would pass for a whole answer);
//   - refused: OpenAI's message.refusal, Anthropic's stop_reason "refusal";
//   - withheld: OpenAI's finish_reason "content_filter", Gemini's SAFETY, RECITATION, BLOCKLIST,
//     PROHIBITED_CONTENT, SPII (or a promptFeedback.blockReason).
// Each fails its item with a reason of its own, never retried (the same request is cut or refused
// again, and every try is paid for).
#pragma once

#include <dibs/http/json_pointer.hpp>

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>

namespace dibs::http {

// Whether `body` may be an LLM's answer at all (names a finish or stop reason, a refusal, a
// status): a scan of its bytes, so that other APIs' answers are never parsed for it.
bool may_be_llm_answer(std::string_view body);

// Why the answer `doc` is no answer to use ("the answer was cut at max_tokens (finish_reason:
// length)"); nullopt for a whole answer.
std::optional<std::string> llm_answer_failure(simdjson::dom::element doc);

// The value `p` names in `doc`, reaching into a string that holds JSON where the pointer goes on
// past it ("/choices/0/message/content/label": the member label of the JSON the content holds),
// as compact JSON text; nullopt when there is none.
std::optional<std::string> value_through_strings(const json_pointer& p, simdjson::dom::element doc);

// expect_json: why the member at `p` is not a string holding JSON ("... is not JSON: ..."),
// or nullopt when it is.
std::optional<std::string> not_json_at(const json_pointer& p, simdjson::dom::element doc);

}  // namespace dibs::http
