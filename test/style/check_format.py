#!/usr/bin/env python3
"""Fails when a C or C++ source of grove differs from the repo's .clang-format.

Usage: check_format.py CLANG_FORMAT SOURCE_ROOT
Prints every file that clang-format would change, with the first differing
lines, so the fix is `clang-format -i FILE`.
"""
import difflib
import os
import subprocess
import sys

FOLDERS = ("src", "test", "benchmarks", "fuzz")
SUFFIXES = (".cc", ".h", ".c")


def sources(root):
    for folder in FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if name.endswith(SUFFIXES):
                    yield os.path.join(dirpath, name)


def main(clang_format, root):
    files = sorted(sources(root))
    if not files:
        print(f"no sources found under {root}")
        return 1
    unformatted = 0
    for path in files:
        with open(path, encoding="utf-8") as handle:
            original = handle.read()
        formatted = subprocess.run([clang_format, f"--assume-filename={path}", path],
                                   cwd=root, capture_output=True, text=True, check=True).stdout
        if formatted != original:
            unformatted += 1
            diff = difflib.unified_diff(original.splitlines(), formatted.splitlines(),
                                        path, path + " (clang-format)", lineterm="", n=0)
            print("\n".join(list(diff)[:12]))
    print(f"{len(files)} sources checked, {unformatted} not formatted")
    return 1 if unformatted else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: check_format.py CLANG_FORMAT SOURCE_ROOT")
    sys.exit(main(sys.argv[1], sys.argv[2]))
