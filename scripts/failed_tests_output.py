#!/usr/bin/env python3
"""After a red ctest run: each failed test's name and the end of its output, from
BUILD/Testing/Temporary/LastTest.log. ctest prints a failure's output when it happens, hundreds of
tests before the end; a CI log cut to its last lines keeps only the list of names. This puts the
reasons last.

  failed_tests_output.py BUILD [--lines N]
"""
import argparse
import os
import re


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--lines", type=int, default=60)
    a = ap.parse_args()
    log = os.path.join(a.build, "Testing", "Temporary", "LastTest.log")
    if not os.path.exists(log):
        print(f"failed_tests_output: no {log}")
        return
    text = open(log, errors="replace").read()
    # Each test: "N/M Testing: NAME" ... "Output:" ... "<end of output>" ... "Test Passed." or another verdict.
    blocks = re.split(r"\n(?=\d+/\d+ Testing: )", text)
    failed = 0
    for block in blocks:
        head = re.match(r"\d+/\d+ Testing: (.*)", block)
        if not head or "\nTest Passed." in block or "Test Skipped" in block or "Disabled" in block:
            continue
        failed += 1
        out = block.split("\nOutput:\n", 1)[-1].split("<end of output>", 1)[0]
        lines = out.strip("\n-").splitlines()
        verdict = re.search(r"\n(Test [A-Z][^\n]*)", block)
        print(f"===== failed: {head.group(1)} ({verdict.group(1) if verdict else 'no verdict'}); its last {min(len(lines), a.lines)} lines:")
        print("\n".join(lines[-a.lines:]))
    print(f"failed_tests_output: {failed} failed test(s) in {log}")


if __name__ == "__main__":
    main()
