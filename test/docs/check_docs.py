#!/usr/bin/env python3
"""The docs cannot drift from grove: every grove command in README.md and
docs/*.md is checked against the grove that was built.

- Every command line (in a fenced block, `$ ` prompt or not, or a script
  given to `sh -c`) names a command grove has and only options that command
  takes, with their values; an `--mca NAME` names a parameter grove has (on
  `grove run`, a name that is not grove's is the application's,
  docs/parameters.md).
- Synopsis lines (with [optional] parts or a|b choices) name only options
  their command takes.
- Every `$ ` example of a command that needs no DVM (info, model, topo, sim,
  --version) is run, and the lines shown after it must appear in its output,
  in order (`...` stands for lines left out); a `grove --help` or
  `--version` line with no output shown must exit 0.
- Every block that starts a DVM on this host is run line by line in a
  sandbox, with its hidden set-up (docs_sessions.py says how). Blocks that
  name other hosts or Slurm are run by docs_swarm.py on a namespace swarm.

Usage: check_docs.py GROVE_BINARY SOURCE_ROOT PMIX_FENCE_CLIENT
       check_docs.py GROVE_BINARY --self-test
"""
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

sys.dont_write_bytecode = True
from docs_sessions import Session, run_block, session_blocks  # noqa: E402
from docs_text import fenced_blocks, grove_commands, grove_words, is_synopsis  # noqa: E402

OFFLINE = {"info", "model", "topo", "sim"}


def run(grove, args):
    return subprocess.run([grove, *args], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "TMPDIR": "/tmp"})


def options_of(help_text):
    """{spelling: number of values} from a CLI11 --help text."""
    options = {}
    for line in help_text.splitlines():
        match = re.match(r"^  (-[^ ].*?)(?: {2,}|$)", line)
        if not match:
            continue
        head = match.group(1)
        names, _, rest = head.partition(" ")
        spellings = names.split(",")
        values = 0 if not rest.strip() else (2 if "--mca" in spellings else 1)
        for spelling in spellings:
            options[spelling] = values
    return options


class Grove:
    def __init__(self, binary):
        self.binary = os.path.abspath(binary)
        top = run(binary, ["--help"]).stdout
        self.top_options = options_of(top)
        self.commands = {}
        section = re.split(r"\nSubcommands:\n", top)
        for line in section[1].splitlines() if len(section) > 1 else []:
            match = re.match(r"^  ([a-z]+)\b", line)
            if match:
                name = match.group(1)
                self.commands[name] = options_of(run(binary, [name, "--help"]).stdout)
        for alias, command in (("jobs", "ps"),):
            if command in self.commands:
                self.commands[alias] = self.commands[command]
        info = json.loads(run(binary, ["info", "--json"]).stdout)
        entries = info if isinstance(info, list) else info["params"]
        self.params = {entry["name"] for entry in entries}


def check_synopsis(grove, words, where, problems):
    """Options named in a synopsis line belong to its command (or to grove)."""
    options = grove.top_options
    command = None
    for word in words:
        bare = word.lstrip("[(")
        if command is None:
            for candidate in bare.rstrip("])").split("|"):
                if candidate in grove.commands:
                    command = candidate
                    options = grove.commands[candidate]
                    break
            if command is not None:
                continue
        match = re.match(r"(--?[a-zA-Z][\w-]*)", bare)
        if match and match.group(1) not in options and match.group(1) != "-np":
            owner = f"'grove {command}'" if command else "grove"
            problems.append(f"{where}: {owner} has no option {match.group(1)}")


def check_command(grove, words, synopsis, where, problems, check_params=True):
    if synopsis:
        check_synopsis(grove, words, where, problems)
        return
    if words and not re.match(r"^(-|[a-z][a-z|]*$|<)", words[0]):
        return  # output that starts with "grove", not a command
    at = 0
    options = grove.top_options
    command = None
    while at < len(words):
        word = words[at]
        if word.startswith("-") and command is None and not synopsis:
            name = word.split("=", 1)[0]
            if name not in options:
                problems.append(f"{where}: grove has no option {name}")
                return
            if check_params and name in ("--mca", "--prtemca") and at + 1 < len(words):
                if words[at + 1] not in grove.params and words[at + 1].upper() != words[at + 1]:
                    problems.append(f"{where}: no parameter '{words[at + 1]}'")
            at += 1 + (options[name] if "=" not in word else 0)
            continue
        if command is None:
            if word.startswith("-") or word.startswith("["):
                at += 1
                continue
            command = word
            if command.startswith("<"):
                return  # a placeholder: grove <command> --help
            if command not in grove.commands:
                problems.append(f"{where}: grove has no command '{command}'")
                return
            options = grove.commands[command]
            at += 1
            continue
        if synopsis:
            for name in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", word):
                if name not in options and name not in ("-np",):
                    problems.append(f"{where}: 'grove {command}' has no option {name}")
            at += 1
            continue
        if word == "--" and command == "run":
            return  # the program follows
        if word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            if name == "-np":
                name = "--np"
            if name not in options:
                problems.append(f"{where}: 'grove {command}' has no option {name}")
                return
            if check_params and name in ("--mca", "--prtemca") and at + 1 < len(words):
                param = words[at + 1]
                if param not in grove.params and command != "run" and param.upper() != param:
                    problems.append(f"{where}: no parameter '{param}'")
            at += 1 + (options[name] if "=" not in word else 0)
            continue
        if command == "run":
            return  # the program and its arguments
        at += 1


def check_examples(grove, block, where, problems):
    """Runs `$ ` examples of commands that need no DVM; checks their output."""
    at = 0
    while at < len(block):
        line = block[at]
        if not line.startswith("$ "):
            at += 1
            words = grove_words(line)
            if words and not is_synopsis(line) and words[0] in ("--help", "--version"):
                result = run(grove.binary, words)  # a line with no output shown
                if result.returncode != 0:
                    problems.append(f"{where}: `{line.strip()}` exited {result.returncode}")
            continue
        expected = []
        at += 1
        while at < len(block) and not block[at].startswith("$ "):
            expected.append(block[at])
            at += 1
        words = grove_words(line)
        if words is None or not words:
            continue
        first = next((w for w in words if not w.startswith("-")), None)
        if first not in OFFLINE and words[0] != "--version":
            continue
        result = run(grove.binary, words)
        output = (result.stdout + result.stderr).splitlines()
        position = 0
        for want in expected:
            if want.strip() == "...":
                continue
            while position < len(output) and output[position].rstrip() != want.rstrip():
                position += 1
            if position == len(output):
                problems.append(f"{where}: `{line[2:]}` does not print: {want}")
                break
            position += 1


PLANTED = """
```
grove run --bind-too core -n 2 ./a.out
grove stat
grove --mca rml_base_radx2 4 status
grove run -n NP [--frobnicate] PROGRAM
$ grove model -N 1000 -M 10KB
for 1000 daemons and 10 KB releases: set rml_base_radix2=11
```

```
grove start --local 2 --daemonize
grove run -n 1 false
$ grove run -n 1 true    # (exit 3)
$ grove stop
grove: DVM stopped (3 daemons)
```

```
grove start --local 2 --daemonize
grove run -n 1 /nonexistent/program &
```
"""
# Where each planted problem is, and what its report must say.
PLANTED_PROBLEMS = [
    ("planted:3:", "'grove run' has no option --bind-too"),
    ("planted:4:", "grove has no command 'stat'"),
    ("planted:5:", "no parameter 'rml_base_radx2'"),
    ("planted:6:", "'grove run' has no option --frobnicate"),
    ("planted:3:", "does not print: for 1000 daemons and 10 KB releases"),
    ("planted:13:", "`grove run -n 1 false` exited 1, not 0"),
    ("planted:14:", "exited 0, not 3"),
    ("planted:15:", "does not print: grove: DVM stopped (3 daemons)"),
    ("planted:21:", "exited 127 before all its ranks ran"),
]


def check_text(grove, name, text, problems):
    checked = 0
    for block in fenced_blocks(text):
        for offset, line in enumerate(block.lines):
            where = f"{name}:{block.first_line + offset}"
            for words in grove_commands(line):
                # A `$ ` example of an offline command is run below: its
                # output, error included, is what is checked.
                run_below = line.startswith("$ ") and any(w in OFFLINE for w in words)
                check_command(grove, words, is_synopsis(line), where, problems, not run_below)
                checked += 1
        check_examples(grove, block.lines, f"{name}:{block.first_line}", problems)
    return checked


def run_sessions(grove, name, text, problems, fence_client):
    """Runs each block that starts a local DVM (docs_sessions.py says how)."""
    ran = 0
    for block in session_blocks(fenced_blocks(text), with_hosts=False):
        session = Session(grove.binary, fence_client)
        try:
            ran += run_block(session, name, block, problems)
        finally:
            problems += [f"{name}:{block.first_line}: {p}" for p in session.close()]
    return ran


def main():
    grove = Grove(sys.argv[1])
    if len(sys.argv) > 2 and sys.argv[2] == "--self-test":
        # The checker's canary: every planted line must be caught.
        problems = []
        check_text(grove, "planted", PLANTED, problems)
        run_sessions(grove, "planted", PLANTED, problems, None)
        for problem in problems:
            print(problem)
        missed = [f"{where} {what}" for where, what in PLANTED_PROBLEMS
                  if not any(p.startswith(where) and what in p for p in problems)]
        for miss in missed:
            print(f"self-test: not caught: {miss}")
        caught = len(PLANTED_PROBLEMS) - len(missed)
        print(f"self-test: {caught} of {len(PLANTED_PROBLEMS)} planted problems caught, "
              f"{len(problems)} reported")
        return 0 if not missed and len(problems) == len(PLANTED_PROBLEMS) else 1
    if len(sys.argv) != 4:
        print(__doc__.split("Usage:")[1].strip(), file=sys.stderr)
        return 2
    root = Path(sys.argv[2])
    fence_client = sys.argv[3]
    problems = []
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    checked = 0
    ran = 0
    for path in files:
        checked += check_text(grove, str(path.relative_to(root)), path.read_text(), problems)
        ran += run_sessions(grove, str(path.relative_to(root)), path.read_text(), problems,
                            fence_client)
    for problem in problems:
        print(problem)
    print(f"docs: {checked} grove command lines checked, {ran} run on a local DVM, "
          f"{len(problems)} problem(s)")
    # Floors: a parser change that silently skipped lines would show here.
    return 1 if problems or checked < 40 or ran < 12 else 0


def on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # meson's timeout: the sessions still end their DVMs


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_sigterm)
    sys.exit(main())
