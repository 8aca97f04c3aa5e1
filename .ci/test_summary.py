#!/usr/bin/env python3
"""Counts test cases across meson test logs and prints 'N passed, N failed'.

Catch2 suites report their own test-case counts; any other test counts as one
case, and a skipped one as none. A suite that crashed or timed out before its
summary counts as failed.
With --fuzz-log FILE, each "fuzz <name>: ..." line of .ci/fuzz is one case.
Before the count, a table of every suite's time, slowest first (CI's budget is
30 minutes; docs/testing.md says what runs where).
"""
import json
import re
import sys

ALL_PASSED = re.compile(r"All tests passed \(\d+ assertions? in (\d+) test cases?\)")
MIXED = re.compile(r"test cases:\s*(\d+)\s*\|\s*(?:(\d+) passed\s*\|\s*)?(\d+) failed")


def count(entry):
    out = entry.get("stdout") or ""
    if entry.get("result") == "SKIP":
        return 0, 0  # says why in its log (the corpus without its tarball)
    ok = entry.get("result") == "OK"
    passed = ALL_PASSED.findall(out)
    if passed and ok:
        return int(passed[-1]), 0
    if ok and "No tests ran" in out:
        return 0, 0  # a slice whose tags nothing carries today
    mixed = MIXED.findall(out)
    if mixed:
        total, good, bad = mixed[-1]
        good = int(good or 0)
        return good, int(total) - good
    return (1, 0) if ok else (0, 1)


def main(args):
    passed = failed = 0
    paths = list(args)
    if paths[:1] == ["--fuzz-log"]:
        fuzz_log = paths[1]
        paths = paths[2:]
        try:
            lines = [line.strip() for line in open(fuzz_log) if line.startswith("fuzz ")]
        except OSError:
            lines = []
        if not lines:
            print("  fuzz: no results (the fuzz build failed?)")
            failed += 1
        for line in lines:
            ok = ": ok" in line
            passed += ok
            failed += not ok
            print(f"  {line}")
    times = []
    for path in paths:
        build = path.split("/")[0]
        with open(path) as log:
            for line in log:
                entry = json.loads(line)
                good, bad = count(entry)
                passed += good
                failed += bad
                name = f"{build}/{entry['name']}"
                print(f"  {name}: {good} passed, {bad} failed ({entry['result']})")
                times.append((float(entry.get("duration") or 0), name))
    if times:
        print("suite times (seconds), slowest first:")
        for seconds, name in sorted(times, reverse=True):
            print(f"  {seconds:8.1f}  {name}")
        print(f"  {sum(t for t, _ in times):8.1f}  all suites")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
