"""What the style checks of src/ share: their command line (SRC_DIR, or
--self-test) and the scratch tree of planted files their self-tests check."""
import os
import tempfile


def check_planted(planted, check):
    """Writes `planted` ({relative path: text}) into a scratch tree and
    returns what `check` reports on it."""
    with tempfile.TemporaryDirectory() as root:
        for rel, text in planted.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as handle:
                handle.write(text)
        return check(root)


def run(argv, check, self_test, failed, passed):
    """The command line: `check` on SRC_DIR, printing every problem, then
    `failed(count)` or `passed`; or `self_test()` with --self-test."""
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print(f"usage: {os.path.basename(argv[0])} SRC_DIR | --self-test")
        return 2
    problems = check(argv[1])
    for problem in problems:
        print(problem)
    if problems:
        print(failed(len(problems)))
        return 1
    print(passed)
    return 0


def sources(src_root):
    """Every .h and .cc below `src_root`, in a stable order: (path relative
    to it, text)."""
    for directory, subdirs, files in os.walk(src_root):
        subdirs.sort()
        for name in sorted(files):
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as handle:
                yield os.path.relpath(path, src_root), handle.read()
