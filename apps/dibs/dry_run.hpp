// `dibs enrich --dry-run N`: N pending items read (not claimed), the request each would get
// (secrets redacted: header values, {env:...} and {file:...}, a key in the URL), and, after
// calling the API for those N only (one batch request with --batch-url), the write each answer
// would make. Nothing is claimed, written
// or counted against a budget: the store is as it was.
#pragma once

#include <dibs/http/batch_processor.hpp>
#include <dibs/http/http_processor.hpp>

#include <dibs/admin_store.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace dibs::cli {

struct dry_run_fields {
  std::string source;  // the field the store reads as the source
  std::string target;  // where an answer would go
  std::vector<std::string> mapped;  // columns --map sets from the answer (a SQL table's), each shown
};

// An LLM API's sample, `calls` answers that used `in` and `out` tokens: what they cost at the
// prices (0: none given) and, with the store's `pending` items, the whole run's tokens and cost
// estimated from them.
std::string token_estimate_line(std::uint64_t in, std::uint64_t out, std::size_t calls, std::optional<std::uint64_t> pending,
                                double price_in, double price_out);

// Prints to `out`; returns the number of calls made.
std::size_t run_dry(admin_store& st, http::processor_options call, const dry_run_fields& fields, std::size_t n,
                    std::FILE* out);
// The same for a batch API: the N items (at most a batch's rows) asked in one batch request, as
// the run would form it (`shown`: the batch's body template, ip-api's too), each item's write.
std::size_t run_dry_batch(admin_store& st, http::batch_processor_options batch, const http::batch_body& shown,
                          const dry_run_fields& fields, std::size_t n, std::FILE* out);

}  // namespace dibs::cli
