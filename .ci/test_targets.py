#!/usr/bin/env python3
"""Prints the ninja targets that some of a build's tests need (their programs
and everything in their `depends`), so CI builds only those:
  .ci/test_targets.py BUILD_DIR [--suite NAME]... [TEST_NAME]...
A tree built this way still runs `meson test` on those tests, which rebuilds
anything listed here that a test lacks; this list only spares CI the
programs no selected test uses."""
import argparse
import json
import os
import subprocess
import sys


def introspect(build_dir, what):
    out = subprocess.run(["meson", "introspect", what, build_dir], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("--suite", action="append", default=[])
    parser.add_argument("tests", nargs="*")
    args = parser.parse_intermixed_args()
    if not args.suite and not args.tests:
        parser.error("name at least one --suite or test")

    tests = introspect(args.build_dir, "--tests")
    wanted = set()
    matched = set()
    for test in tests:
        suites = {s.split(":", 1)[-1] for s in test["suite"]}
        if test["name"] in args.tests or suites & set(args.suite):
            wanted.update(test["depends"])
            matched.update(suites & set(args.suite))
            matched.add(test["name"])
    missing = [n for n in args.suite + args.tests if n not in matched]
    if missing:
        print("test_targets: no test or suite named " + ", ".join(missing), file=sys.stderr)
        return 2

    root = os.path.realpath(args.build_dir)
    for target in introspect(args.build_dir, "--targets"):
        if target["id"] in wanted:
            for filename in target["filename"]:
                print(os.path.relpath(filename, root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
