#!/usr/bin/env python3
"""The docs cannot drift from grove: every grove command in README.md and
docs/*.md is checked against the grove that was built.

- Every command line (in a fenced block, `$ ` prompt or not) names a command
  grove has and only options that command takes, with their values; an
  `--mca NAME` names a parameter grove has (on `grove run`, a name that is
  not grove's is the application's, docs/parameters.md).
- Synopsis lines (with [optional] parts or a|b choices) name only options
  their command takes.
- Every `$ ` example of a command that needs no DVM (info, model, topo, sim,
  --version) is run, and the lines shown after it must appear in its output,
  in order (`...` stands for lines left out).
- Every block that starts a local DVM (`grove start --local N --daemonize`)
  is run line by line in a sandbox (its own TMPDIR and HOME), and each line
  must exit 0; lines naming hosts, an allocation, a job number or a program
  of the reader's (`./my_mpi_app`) are checked as commands only.

Usage: check_docs.py GROVE_BINARY SOURCE_ROOT
"""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

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


def fenced_blocks(text):
    """(line number, lines) of every fenced code block."""
    lines = text.splitlines()
    at = 0
    while at < len(lines):
        if lines[at].startswith("```"):
            start = at + 1
            at += 1
            while at < len(lines) and not lines[at].startswith("```"):
                at += 1
            yield start + 1, lines[start:at]
        at += 1


def grove_words(line):
    """The words after `grove` in a shell line, or None if it runs no grove."""
    line = line.strip()
    if line.startswith("$ "):
        line = line[2:]
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return None
    launchers = ("salloc", "srun", "time", "env", "nice", "sudo", "exec")
    for at, word in enumerate(words):
        if word == "grove" or word.endswith("/grove"):
            # A command, not prose or a log line that mentions grove.
            before = words[:at]
            if before and before[0] not in launchers and not all("=" in w for w in before):
                return None
            rest = []
            for later in words[at + 1:]:
                if later in ("|", "&&", ";", ">", "<", "2>", "&") or later.startswith(">"):
                    break
                rest.append(later)
            return rest
        if word in ("|", "&&", ";"):
            continue
    return None


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
grove start --local 2 --mca rml_base_radx2 4
grove run -n NP [--frobnicate] PROGRAM
$ grove model -N 1000 -M 10KB
for 1000 daemons and 10 KB releases: set rml_base_radix2=11
```

```
grove start --local 2 --daemonize
grove run -n 1 false
grove stop
```
"""


def check_text(grove, name, text, problems):
    checked = 0
    for start, block in fenced_blocks(text):
        for offset, line in enumerate(block):
            words = grove_words(line)
            if words is None:
                continue
            where = f"{name}:{start + offset}"
            synopsis = bool(re.search(r"\[|\||\.\.\.|\bNP\b|\bPROGRAM\b", line.split("#")[0]))
            # A `$ ` example of an offline command is run below: its
            # output, error included, is what is checked.
            run_below = line.startswith("$ ") and any(w in OFFLINE for w in words)
            check_command(grove, words, synopsis, where, problems, not run_below)
            checked += 1
        check_examples(grove, block, f"{name}:{start}", problems)
    return checked


def runnable(words, line):
    """Whether a command line of a session block can run here as it stands."""
    if any(w in ("--host", "-H", "--hostfile", "--dvm", "--dvm-uri") for w in words):
        return False
    if re.search(r"\b(salloc|srun)\b|[|>]", line.split("#")[0]):
        return False
    command = next((w for w in words if not w.startswith("-")), "")
    if command == "start" and "--daemonize" not in words:
        return False  # it would stay in the foreground
    if command == "kill":
        return False  # names a job of the reader's
    if command == "run":
        # The first word after run's options that is a program on PATH.
        programs = [w for w in words if shutil.which(w)]
        if not programs or any(w.startswith("./") for w in words):
            return False
    return True


def run_sessions(grove, name, text, problems):
    """Runs each block that starts a local DVM, line by line, in a sandbox.

    Every line that can run here (no hosts, no program of the reader's)
    must exit 0; the DVM is stopped, and ended by pid, whatever happens."""
    ran = 0
    for start, block in fenced_blocks(text):
        lines = [(offset, line, grove_words(line)) for offset, line in enumerate(block)]
        if not any(w and "start" in w and "--local" in w and "--daemonize" in w
                   for _, _, w in lines):
            continue
        with tempfile.TemporaryDirectory(prefix="grove-docs-") as sandbox:
            env = {"PATH": "/usr/bin:/bin", "TMPDIR": sandbox, "HOME": sandbox}
            controllers = []
            try:
                for offset, line, words in lines:
                    if not words or not runnable(words, line):
                        continue
                    result = subprocess.run([grove.binary, *words], capture_output=True,
                                            text=True, timeout=300, env=env, cwd=sandbox,
                                            stdin=subprocess.DEVNULL)
                    ran += 1
                    controllers += re.findall(r"controller pid (\d+)", result.stdout)
                    if result.returncode != 0:
                        problems.append(f"{name}:{start + offset}: `{line.strip()}` exited "
                                        f"{result.returncode}: {result.stderr.strip()[:300]}")
            finally:
                subprocess.run([grove.binary, "stop"], capture_output=True, timeout=120,
                               env=env, stdin=subprocess.DEVNULL)
                for pid in controllers:
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (ProcessLookupError, ValueError):
                        pass
    return ran


def main():
    grove = Grove(sys.argv[1])
    if len(sys.argv) > 2 and sys.argv[2] == "--self-test":
        # The checker's canary: every planted line must be caught.
        problems = []
        check_text(grove, "planted", PLANTED, problems)
        run_sessions(grove, "planted", PLANTED, problems)
        for problem in problems:
            print(problem)
        print(f"self-test: {len(problems)} of 6 planted problems caught")
        return 0 if len(problems) == 6 else 1
    root = Path(sys.argv[2])
    problems = []
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    checked = 0
    ran = 0
    for path in files:
        checked += check_text(grove, str(path.relative_to(root)), path.read_text(), problems)
        ran += run_sessions(grove, str(path.relative_to(root)), path.read_text(), problems)
    for problem in problems:
        print(problem)
    print(f"docs: {checked} grove command lines checked, {ran} run on a local DVM, "
          f"{len(problems)} problem(s)")
    return 1 if problems or checked < 20 else 0


if __name__ == "__main__":
    sys.exit(main())
