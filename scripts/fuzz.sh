#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets with clang in build-fuzz/ and runs each for a bounded
# time (FUZZ_SECONDS, 30 by default), starting from the committed corpus in tests/fuzz/corpus/.
# New inputs go to build-fuzz/corpus/ (not into the repository). A crash stops with the input's
# path: add it to tests/fuzz/corpus/<target>/ as a regression, fix, and run again.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
CXX=clang++ cmake -S tests/fuzz -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build-fuzz -j2
status=0
for binary in build-fuzz/fuzz_*; do
  [ -f "$binary" ] && [ -x "$binary" ] || continue
  target=${binary#build-fuzz/fuzz_}
  work=build-fuzz/corpus/$target
  mkdir -p "$work" build-fuzz/crashes/$target
  echo "fuzz: $target for ${seconds}s"
  if ! build-fuzz/fuzz_$target -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
       -artifact_prefix=build-fuzz/crashes/$target/ "$work" tests/fuzz/corpus/$target 2> build-fuzz/$target.log; then
    echo "fuzz: $target FOUND A FAILURE: see build-fuzz/$target.log and build-fuzz/crashes/$target/" >&2
    tail -30 build-fuzz/$target.log >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|cov:" build-fuzz/$target.log | tail -2 | sed "s/^/fuzz: $target: /"
  fi
done
exit $status
