"""Running the docs' session blocks as a reader would type them.

A session block is a fenced block (with its hidden set-up) that starts a DVM.
Its lines run in order, each through `sh -c` with the built grove first on
PATH, in a sandbox of their own (TMPDIR, HOME and working directory). The
reader's programs the docs name (`./my_mpi_app`, `./ring`) are stand-ins put
in the sandbox: a real PMIx program that fences, and a long runner. Each line
must exit with the status its comment announces (`(exit N)`, else 0); the
output a `$ ` line shows must appear in what it prints, in order, a time or
measure (digits with `:` or `.`: 14:30:15, 0:42, 1.08) standing for any
other; plain integers (counts, job numbers) must be as shown. Whatever happens, the
session's DVMs are stopped and ended by pid, and its background jobs ended.
GROVE_DOCS_VERBOSE=1 prints each line run and its output.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from docs_text import (expected_exit, grove_commands, in_background, is_synopsis, needs_hosts,
                       shell_text)

FENCE_PROGRAMS = ("my_mpi_app", "my_fence_program", "a.out")
RING = """#!/bin/sh
# Stands in for the reader's long-running program (docs/cli.md's ./ring): it
# runs until it is ended; SIGUSR1 is reported, not fatal.
trap 'echo "rank $PMIX_RANK: got SIGUSR1"' USR1
while :; do sleep 1 & wait $!; done
"""


def provided(word, programs):
    return word.startswith("./") and word[2:] in programs


def runnable(words, line, programs, with_hosts, has_setup):
    """Whether a session line can run here as it stands."""
    if is_synopsis(line) or needs_hosts(words, line) and not with_hosts:
        return False
    if any(w in ("--dvm", "--dvm-uri") for w in words):
        return False  # a DVM of the reader's
    command = next((w for w in words if not w.startswith("-")), "")
    if command == "kill" and not has_setup:
        return False  # a job of the reader's, unless the set-up made it
    if command == "run":
        program = [w for w in words if w.startswith(("./", "/")) or shutil.which(w)]
        if not program or program[0].startswith("./") and not provided(program[0], programs):
            return False
    return True


def starts_dvm(commands):
    return any(words and words[0] == "start" for words in commands)


def in_foreground(commands):
    """`grove start` without --daemonize: the DVM lives as long as the line."""
    return any(words and words[0] == "start" and "--daemonize" not in words
               for words in commands)


def same_line(want, got):
    wanted, seen = want.split(), got.split()
    if len(wanted) != len(seen):
        return False
    # Times and measures (14:30:15, 0:42, 1.08) vary; counts, job numbers
    # and statuses (plain integers) must be as shown.
    measure = re.compile(r"^\d[\d,]*[:.][\d:.,]*$")
    return all(w == g or (measure.match(w) and measure.match(g)) for w, g in zip(wanted, seen))


def missing_output(expected, output):
    """The first expected line not printed (in order), or None."""
    position = 0
    for want in expected:
        if want.strip() == "...":
            continue
        while position < len(output) and not same_line(want, output[position]):
            position += 1
        if position == len(output):
            return want
        position += 1
    return None


class Session:
    """A sandbox for one block: commands run through `wrapper + sh -c LINE`
    (the wrapper enters a swarm host, or is empty here)."""

    def __init__(self, grove, fence_client, wrapper=(), env=None, parent=None):
        self.grove = grove
        self.wrapper = list(wrapper)
        self.dir = tempfile.mkdtemp(prefix="grove-docs-", dir=parent)
        os.mkdir(f"{self.dir}/bin")
        os.symlink(grove, f"{self.dir}/bin/grove")
        self.env = {"PATH": f"{self.dir}/bin:/usr/bin:/bin", "TMPDIR": self.dir,
                    "HOME": self.dir, **(env or {})}
        # The test runner's sanitizer settings (a sanitized build's ranks
        # would otherwise fail on libpmix's leaks where the runner ignores them).
        for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
            if name in os.environ:
                self.env[name] = os.environ[name]
        self.programs = set()
        if fence_client:
            for name in FENCE_PROGRAMS:
                shutil.copy(fence_client, f"{self.dir}/{name}")
            Path(f"{self.dir}/ring").write_text(RING)
            os.chmod(f"{self.dir}/ring", 0o755)
            self.programs = {*FENCE_PROGRAMS, "ring"}
        self.controllers = []
        self.background = []
        self.foreground_dvms = []

    def command(self, line):
        return [*self.wrapper, "sh", "-c", line]

    def spawn(self, line, name):
        """Starts a line in a process group of its own, its output to a file
        (never a pipe: a process that outlives it cannot hold us up)."""
        out = open(f"{self.dir}/{name}.out", "w+")
        err = open(f"{self.dir}/{name}.err", "w+")
        process = subprocess.Popen(self.command(line), env=self.env, cwd=self.dir,
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                   start_new_session=True)
        process.files = (out, err)
        return process

    @staticmethod
    def output_of(process):
        """(stdout, stderr) of a spawned process so far; closes nothing."""
        texts = []
        for handle in process.files:
            handle.seek(0)
            texts.append(handle.read())
        return tuple(texts)

    @staticmethod
    def close_files(process):
        for handle in process.files:
            handle.close()

    def run(self, line, timeout=120):
        """Runs a line to its end; one still running after timeout seconds is
        ended (its process group) and reported as exit status "timeout"."""
        process = self.spawn(line, "line")
        try:
            status = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            status = f"timeout ({timeout} s)"
        out, err = self.output_of(process)
        self.close_files(process)
        self.note_controllers(out + err)
        return subprocess.CompletedProcess(line, status, out, err)

    def note_controllers(self, text):
        for pid in re.findall(r"controller pid (\d+)", text):
            if pid not in self.controllers:
                self.controllers.append(pid)

    def run_in_background(self, line):
        """Starts a job line (`... &`) and waits until all its ranks run."""
        before = self.running_jobs()
        process = self.spawn(line.split("#")[0].rstrip().rstrip("&"), f"bg{len(self.background)}")
        self.background.append(process)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            jobs = self.running_jobs()
            if any(job["job"] not in before and job["ranks_running"] == job["np"]
                   for job in jobs.values()):
                return None
            time.sleep(0.1)
        if process.poll() is not None:
            return (f"`{line}` exited {process.returncode} before all its ranks ran: "
                    f"{''.join(self.output_of(process)).strip()[-400:]}")
        return f"`{line}` did not get all its ranks running in 120 s"

    def start_in_foreground(self, line):
        """Starts a foreground `grove start` (as in a terminal of its own) and
        waits until its DVM answers; close() stops it and checks its exit."""
        process = self.spawn(line, f"fg{len(self.foreground_dvms)}")
        self.foreground_dvms.append((line, process))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if self.run("grove status", timeout=60).returncode == 0:
                return None
            time.sleep(0.2)
        if process.poll() is None:
            return f"`{line}`: its DVM did not answer `grove status` in 120 s"
        output = "".join(self.output_of(process)).strip()
        return f"`{line}` exited {process.returncode}: {output[-400:]}"

    def running_jobs(self):
        result = self.run("grove ps --json", timeout=60)
        if result.returncode != 0:
            return {}
        jobs = json.loads(result.stdout)
        jobs = jobs["jobs"] if isinstance(jobs, dict) else jobs
        return {job["job"]: job for job in jobs if job.get("state") == "running"}

    def kill_controller(self, pid):
        """SIGKILL to a controller this session saw, if that pid is still a
        grove process: after a stop it may since belong to someone else."""
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            return
        if argv and os.path.basename(argv[0]) in (b"grove", b"groved"):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self):
        """Ends everything; returns problems of foreground DVMs' exits."""
        problems = []
        # A DVM a line started for itself (`grove run` with none running)
        # printed no pid: ask it.
        self.note_controllers(self.run("grove status", timeout=60).stdout)
        self.run("grove stop", timeout=120)
        for line, process in self.foreground_dvms:
            try:
                process.wait(timeout=60)
                if process.returncode != 0:
                    output = "".join(self.output_of(process)).strip()
                    problems.append(f"`{line}` exited {process.returncode} after `grove stop`: "
                                    f"{output[-400:]}")
            except subprocess.TimeoutExpired:
                problems.append(f"`{line}` still ran 60 s after `grove stop`")
        for pid in self.controllers:
            self.kill_controller(pid)
        for process in self.background + [p for _, p in self.foreground_dvms]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            self.close_files(process)
        shutil.rmtree(self.dir, ignore_errors=True)
        return problems


def session_blocks(blocks, with_hosts):
    """The blocks that start a DVM: on this host, or (with_hosts) on others."""
    for block in blocks:
        lines = [*block.setup, *block.lines]
        commands = [grove_commands(line) for line in lines]
        if not any(starts_dvm(c) for c in commands):
            continue
        hosts = any(not is_synopsis(line) and needs_hosts(sum(c, []), line)
                    for line, c in zip(lines, commands) if c)
        if hosts == with_hosts:
            yield block


def run_block(session, name, block, problems, with_hosts=False):
    """Runs a session block's set-up and lines; returns how many lines ran."""
    ran = 0
    for line in block.setup:
        if in_background(line):
            problem = session.run_in_background(line)
        else:
            result = session.run(line)
            problem = None if result.returncode == 0 else (
                f"set-up `{line}` exited {result.returncode}: {result.stderr.strip()[:300]}")
        if problem:
            problems.append(f"{name}:{block.first_line}: {problem}")
            return ran
    at = 0
    while at < len(block.lines):
        line = block.lines[at]
        where = f"{name}:{block.first_line + at}"
        at += 1
        expected = []
        if line.startswith("$ "):
            while at < len(block.lines) and not block.lines[at].startswith("$ "):
                expected.append(block.lines[at])
                at += 1
        commands = grove_commands(line)
        if not commands or not all(runnable(words, line, session.programs, with_hosts,
                                            bool(block.setup)) for words in commands):
            continue
        ran += 1
        # A DVM in the foreground or a job in the background keeps running;
        # the lines after it need it, so a failure ends the block.
        keeps_running = (session.start_in_foreground if in_foreground(commands) else
                         session.run_in_background if in_background(line) else None)
        if keeps_running:
            problem = keeps_running(shell_text(line))
            if problem:
                problems.append(f"{where}: {problem}")
                return ran
            continue
        result = session.run(shell_text(line))
        if os.environ.get("GROVE_DOCS_VERBOSE"):
            print(f"{where}: $ {shell_text(line)}  [exit {result.returncode}]\n"
                  f"{result.stdout}{result.stderr}", end="")
        want = expected_exit(line)
        if result.returncode != want:
            problems.append(f"{where}: `{shell_text(line)}` exited {result.returncode}, not "
                            f"{want}: {(result.stderr or result.stdout).strip()[-400:]}")
            continue
        missing = missing_output(expected, (result.stdout + result.stderr).splitlines())
        if missing is not None:
            problems.append(f"{where}: `{shell_text(line)}` does not print: {missing}")
    return ran
